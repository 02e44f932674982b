#include "hw/engine_host.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/data_dir.h"

namespace goodput {
namespace {

TEST(EngineHost, TheCatalogHasVllmFittedAndTheGpuWorkAlone) {
  auto vllm = FindEngineHost("vllm");
  ASSERT_TRUE(vllm.ok()) << vllm.status().message();
  EXPECT_GT(vllm->per_sequence_s, 0);
  EXPECT_GT(vllm->frontend_latency_s, 0);
  EXPECT_NE(vllm->source.find("published_validation"), std::string::npos);
  EXPECT_FALSE(vllm->async_scheduling);
  // vLLM's V0 engine has its own, fitted to the set's V0 sources: more a step, less a request than V1's.
  auto v0 = FindEngineHost("vllm-v0");
  ASSERT_TRUE(v0.ok()) << v0.status().message();
  EXPECT_GT(v0->step_overhead_s, vllm->step_overhead_s);
  EXPECT_LT(v0->per_sequence_s, vllm->per_sequence_s);
  EXPECT_NE(v0->source.find("--engine-kind vllm-v0 --fit"), std::string::npos);
  // TensorRT-LLM's host work per request is a published measurement, hidden behind the GPU's by its overlap scheduler.
  auto trtllm = FindEngineHost("trtllm");
  ASSERT_TRUE(trtllm.ok()) << trtllm.status().message();
  EXPECT_TRUE(trtllm->async_scheduling);
  EXPECT_NEAR(trtllm->per_sequence_s, 45.11e-3 / 1536, 1e-7);
  EXPECT_NE(trtllm->source.find("#10273"), std::string::npos);
  // It admits a request only with blocks for its whole length, and takes prompts whole.
  EXPECT_TRUE(trtllm->guaranteed_no_evict);
  EXPECT_FALSE(trtllm->chunked_prefill);
  EXPECT_FALSE(vllm->guaranteed_no_evict);
  EXPECT_TRUE(vllm->chunked_prefill);
  // Its TensorRT engines under the C++ executor (before 1.0) do their host work in C++ and in turn with the GPU's.
  auto cpp = FindEngineHost("trtllm-cpp");
  ASSERT_TRUE(cpp.ok()) << cpp.status().message();
  EXPECT_FALSE(cpp->async_scheduling);
  // trtllm-bench ran it at GUARANTEED_NO_EVICT, with chunked context on.
  EXPECT_TRUE(cpp->guaranteed_no_evict);
  EXPECT_TRUE(cpp->chunked_prefill);
  EXPECT_LT(cpp->per_sequence_s, trtllm->per_sequence_s);
  EXPECT_NE(cpp->source.find("published_validation --engine-kind trtllm-cpp --sim-args"), std::string::npos);
  // SGLang's scheduler computes prompts before decodes, in chunks, beside an overlap scheduler.
  auto sglang = FindEngineHost("sglang");
  ASSERT_TRUE(sglang.ok()) << sglang.status().message();
  EXPECT_TRUE(sglang->prefill_first);
  EXPECT_TRUE(sglang->chunked_prefill);
  EXPECT_TRUE(sglang->async_scheduling);
  EXPECT_NE(sglang->source.find("get_next_batch_to_run"), std::string::npos);
  EXPECT_FALSE(vllm->prefill_first);
  EXPECT_FALSE(trtllm->prefill_first);
  // SGLang and TensorRT-LLM's PyTorch backend launch a prompt step's kernels eagerly, at SGLang's measured rate
  // (an eager DeepSeek-V3 prompt step of one token, 82.6 ms, over its 1,866 kernels at TP 8); vLLM V1 replays
  // piecewise graphs, the C++ executor a TensorRT engine.
  EXPECT_NEAR(sglang->eager_prompt_kernel_s, 82.6e-3 / 1866, 1e-6);
  EXPECT_DOUBLE_EQ(trtllm->eager_prompt_kernel_s, sglang->eager_prompt_kernel_s);
  EXPECT_NE(sglang->source.find("#12160"), std::string::npos);
  EXPECT_EQ(vllm->eager_prompt_kernel_s, 0);
  EXPECT_EQ(cpp->eager_prompt_kernel_s, 0);
  EXPECT_DOUBLE_EQ(v0->eager_prompt_kernel_s, sglang->eager_prompt_kernel_s);  // V0's graphs: decodes alone
  // Its token budget by the card's memory (SGLang 0.5's --chunked-prefill-size), split under DP attention.
  const int64_t gib = int64_t{1} << 30;
  EXPECT_EQ(sglang->DefaultTokenBudget(24 * gib, 1), 2048);          // an RTX 4090
  EXPECT_EQ(sglang->DefaultTokenBudget(40 * gib, 1), 4096);          // an A100 40GB
  EXPECT_EQ(sglang->DefaultTokenBudget(80 * gib, 1), 8192);          // an H100
  EXPECT_EQ(sglang->DefaultTokenBudget(141 * gib, 1), 8192);         // an H200
  EXPECT_EQ(sglang->DefaultTokenBudget(178 * gib, 1), 16384);        // a B200
  EXPECT_EQ(sglang->DefaultTokenBudget(178 * gib, 4), 4096);         // each of four DP-attention replicas
  EXPECT_FALSE(vllm->DefaultTokenBudget(178 * gib, 1).has_value());  // vLLM's default table instead
  auto none = FindEngineHost("none");
  ASSERT_TRUE(none.ok());
  EXPECT_DOUBLE_EQ(none->step_overhead_s, CostFactors{}.step_overhead_s);
  EXPECT_EQ(none->per_sequence_s, 0);
  EXPECT_EQ(none->frontend_latency_s, 0);
  auto other = FindEngineHost("tgi");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("Known engines: vllm, vllm-v0, trtllm, trtllm-cpp, sglang, none"),
            std::string::npos)
      << other.status().message();
}

TEST(EngineHost, SglangGraphsDecodeStepsUpToItsDefaultBatch) {
  // SGLang's --cuda-graph-max-bs by the card's memory and the engine's GPUs (server_args.py,
  // _handle_gpu_memory_settings, since pull request #10372); larger decode steps run eagerly.
  auto sglang = FindEngineHost("sglang");
  ASSERT_TRUE(sglang.ok()) << sglang.status().message();
  const int64_t gib = int64_t{1} << 30;
  EXPECT_EQ(sglang->DefaultGraphMaxBatch(16 * gib, 1), 8);     // a T4
  EXPECT_EQ(sglang->DefaultGraphMaxBatch(16 * gib, 8), 8);     // the same on eight
  EXPECT_EQ(sglang->DefaultGraphMaxBatch(24 * gib, 2), 24);    // an RTX 4090, two of them
  EXPECT_EQ(sglang->DefaultGraphMaxBatch(24 * gib, 4), 80);    // four
  EXPECT_EQ(sglang->DefaultGraphMaxBatch(40 * gib, 1), 32);    // an A100 40GB
  EXPECT_EQ(sglang->DefaultGraphMaxBatch(48 * gib, 4), 160);   // four L40S
  EXPECT_EQ(sglang->DefaultGraphMaxBatch(80 * gib, 1), 256);   // an H100
  EXPECT_EQ(sglang->DefaultGraphMaxBatch(80 * gib, 8), 512);   // eight
  EXPECT_EQ(sglang->DefaultGraphMaxBatch(141 * gib, 2), 256);  // two H200
  EXPECT_EQ(sglang->DefaultGraphMaxBatch(141 * gib, 8), 512);  // eight
  EXPECT_EQ(sglang->DefaultGraphMaxBatch(178 * gib, 1), 512);  // a B200
  EXPECT_EQ(sglang->DefaultGraphMaxBatch(178 * gib, 8), 512);
  EXPECT_NE(sglang->source.find("#10372"), std::string::npos);
  for (const char* other : {"vllm", "vllm-v0", "trtllm", "trtllm-cpp", "none"}) {
    auto e = FindEngineHost(other);
    ASSERT_TRUE(e.ok()) << other;
    EXPECT_FALSE(e->DefaultGraphMaxBatch(80 * gib, 8).has_value()) << other;  // every decode step graphed
  }
}

TEST(EngineHost, FusedAllReduceWhereTheEngineFusesIt) {
  // SGLang fuses DeepSeek-V3's all-reduces with the next norm on Hopper and Blackwell, one node, no DP
  // attention: #19889's fused 10.4 us less the norm's 3 us kernel the cost model still counts.
  auto sglang = FindEngineHost("sglang");
  ASSERT_TRUE(sglang.ok()) << sglang.status().message();
  ASSERT_TRUE(sglang->fused_allreduce.has_value());
  EXPECT_NEAR(sglang->fused_allreduce->latency_s, 10.4e-6 - 3e-6, 1e-12);
  EXPECT_NE(sglang->source.find("#19889"), std::string::npos);
  const std::string ds = "DeepseekV3ForCausalLM";
  EXPECT_EQ(sglang->FusedAllReduceLatency(ds, 7168, "sm90", 8, 1), sglang->fused_allreduce->latency_s);
  EXPECT_EQ(sglang->FusedAllReduceLatency(ds, 7168, "sm100", 8, 1), sglang->fused_allreduce->latency_s);
  EXPECT_FALSE(sglang->FusedAllReduceLatency(ds, 7168, "sm80", 8, 1));                  // an A100: not on its list
  EXPECT_FALSE(sglang->FusedAllReduceLatency(ds, 7168, "gfx942", 8, 1));                // MI300X
  EXPECT_FALSE(sglang->FusedAllReduceLatency(ds, 7168, "sm90", 1, 1));                  // nothing to all-reduce
  EXPECT_FALSE(sglang->FusedAllReduceLatency(ds, 7168, "sm100", 1, 4));                 // DP attention
  EXPECT_FALSE(sglang->FusedAllReduceLatency("LlamaForCausalLM", 8192, "sm90", 8, 1));  // not on its list
  // TensorRT-LLM's PyTorch backend fuses DeepSeek's, and Llama's wider than 4,096 (its pull request #6205).
  auto trtllm = FindEngineHost("trtllm");
  ASSERT_TRUE(trtllm.ok() && trtllm->fused_allreduce.has_value());
  EXPECT_TRUE(trtllm->FusedAllReduceLatency("LlamaForCausalLM", 8192, "sm90", 2, 1));   // 70B
  EXPECT_FALSE(trtllm->FusedAllReduceLatency("LlamaForCausalLM", 4096, "sm90", 2, 1));  // 8B
  EXPECT_TRUE(trtllm->FusedAllReduceLatency(ds, 7168, "sm100", 8, 1));
  EXPECT_NE(trtllm->source.find("#6205"), std::string::npos);
  // vLLM (its fusion pass is opt-in), V0 and the C++ executor's TensorRT engines run them unfused.
  for (const char* name : {"vllm", "vllm-v0", "trtllm-cpp", "none"}) {
    auto e = FindEngineHost(name);
    ASSERT_TRUE(e.ok()) << name;
    EXPECT_FALSE(e->FusedAllReduceLatency(ds, 7168, "sm90", 8, 1)) << name;
  }
}

TEST(EngineHost, ItReplacesTheHostFactorsAndNothingElse) {
  CostFactors f;
  f.bandwidth_efficiency = 0.7;
  f.compute_efficiency = 0.5;
  EngineHost e;
  e.step_overhead_s = 0.002, e.per_sequence_s = 3e-5, e.frontend_latency_s = 0.04, e.async_scheduling = true;
  e.eager_prompt_kernel_s = 4e-5;
  const CostFactors g = WithEngineHost(f, e);
  EXPECT_DOUBLE_EQ(g.eager_kernel_s, 4e-5);
  EXPECT_TRUE(g.async_scheduling);
  EXPECT_DOUBLE_EQ(g.step_overhead_s, 0.002);
  EXPECT_DOUBLE_EQ(g.per_sequence_s, 3e-5);
  EXPECT_DOUBLE_EQ(g.frontend_latency_s, 0.04);
  EXPECT_DOUBLE_EQ(g.bandwidth_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(g.compute_efficiency, 0.5);
}

// A copy of data/ whose engines.json is `text`.
std::string DataWithEngines(const std::string& name, const std::string& text) {
  const std::filesystem::path dir = ::testing::TempDir() + std::to_string(getpid()) + "_" + name;
  std::filesystem::create_directories(dir / "hardware");
  std::ofstream(dir / "hardware" / "engines.json") << text;
  return dir.string();
}

TEST(EngineHost, ABrokenCatalogNamesTheFileAndTheEntry) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{}", "an \"engines\" list"},
      {R"({"engines": [{"step_overhead_s": 0}]})", "needs a \"name\""},
      {R"({"engines": [{"name": "a", "step_overhead_s": -1, "per_sequence_s": 0, "frontend_latency_s": 0}]})",
       "engine a: \"step_overhead_s\" must be a number of seconds >= 0"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "frontend_latency_s": 0}]})", "\"per_sequence_s\""},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0},
                       {"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0}]})",
       "engine a given twice"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "async_scheduling": "yes"}]})",
       "engine a: \"async_scheduling\" must be true or false"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "chunked_prefill": 0}]})",
       "engine a: \"chunked_prefill\" must be true or false"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "prefill_first": "first"}]})",
       "engine a: \"prefill_first\" must be true or false"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "token_budget_by_memory": [{"below_gib": 60, "tokens": 4096}, {"below_gib": 35, "tokens": 2048},
                                                   {"tokens": 8192}]}]})",
       "engine a: \"token_budget_by_memory\" must list"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "token_budget_by_memory": [{"below_gib": 60, "tokens": 4096}]}]})",
       "engine a: \"token_budget_by_memory\" must list"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "token_budget_by_memory": [{"tokens": 0}]}]})",
       "engine a: \"token_budget_by_memory\" must list"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "token_budget_by_memory": {"tokens": 8192}}]})",
       "engine a: \"token_budget_by_memory\" must list"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "token_budget_split_over_dp": 1}]})",
       "engine a: \"token_budget_split_over_dp\" must be true or false"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "graph_max_batch_by_memory": [{"below_gib": 60, "batch": 32, "batch_tp4": 0},
                                                      {"batch": 512}]}]})",
       "engine a: \"graph_max_batch_by_memory\" must list"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "graph_max_batch_by_memory": [{"below_gib": 60, "batch": 32.5}, {"batch": 512}]}]})",
       "engine a: \"graph_max_batch_by_memory\" must list"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "graph_max_batch_by_memory": [{"below_gib": 60, "batch": 32}]}]})",
       "engine a: \"graph_max_batch_by_memory\" must list"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "token_budget_by_memory": [{"tokens": 8192, "tokens_tp4": 4096}]}]})",
       "engine a: \"token_budget_by_memory\" must list"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "eager_prompt_kernel_s": -4e-5}]})",
       "engine a: \"eager_prompt_kernel_s\" must be a number of seconds >= 0"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "fused_allreduce": {"latency_s": -1, "architectures": ["X"], "cards": ["sm90"]}}]})",
       "engine a: \"fused_allreduce\" must give"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "fused_allreduce": {"latency_s": 1e-5, "cards": ["sm90"]}}]})",
       "engine a: \"fused_allreduce\" must give"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "fused_allreduce": {"latency_s": 1e-5, "architectures": ["X"], "cards": "sm90"}}]})",
       "engine a: \"fused_allreduce\" must give"},
      {R"({"engines": [{"name": "a", "step_overhead_s": 0, "per_sequence_s": 0, "frontend_latency_s": 0,
                        "fused_allreduce": {"latency_s": 1e-5, "architectures": ["X"], "cards": ["sm90"],
                                            "min_hidden_size": -1}}]})",
       "engine a: \"fused_allreduce\" must give"},
      {"not json", "engines.json"},
  };
  const char* saved = std::getenv("GOODPUT_DATA_DIR");
  const std::string restore = saved ? saved : "";
  int n = 0;
  for (const auto& [text, message] : cases) {
    setenv("GOODPUT_DATA_DIR", DataWithEngines("engines" + std::to_string(n++), text).c_str(), 1);
    auto got = LoadEngineHosts();
    ASSERT_FALSE(got.ok()) << text;
    EXPECT_NE(got.status().message().find(message), std::string::npos) << got.status().message();
    EXPECT_NE(got.status().message().find("engines.json"), std::string::npos) << got.status().message();
  }
  setenv("GOODPUT_DATA_DIR", restore.c_str(), 1);
}

}  // namespace
}  // namespace goodput
