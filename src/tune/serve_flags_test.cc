#include "tune/serve_flags.h"

#include <gtest/gtest.h>

#include <tuple>

namespace goodput {
namespace {

using Strings = std::vector<std::string>;

// Whether some note mentions `text`.
bool Noted(const ServeFlags& f, const std::string& text) {
  for (const std::string& n : f.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

TEST(ServeFlags, VllmTakesGoodputsNamesWithSizesInBytes) {
  const Setting s{{{"max-num-seqs", "64"}, {"kv-cache-memory", "1GiB"}, {"weights", "fp8"}, {"slo-tpot", "50ms"}}};
  const ServeFlags f = ServeFlagsFor(s, "vllm");
  EXPECT_EQ(f.command, "vllm serve");
  EXPECT_EQ(f.args,
            (Strings{"--max-num-seqs", "64", "--kv-cache-memory-bytes", "1073741824", "--quantization", "fp8"}));
  EXPECT_EQ(f.yaml, (Strings{"max-num-seqs: 64", "kv-cache-memory-bytes: 1073741824", "quantization: fp8"}));
  ASSERT_EQ(f.notes.size(), 1u);
  EXPECT_TRUE(Noted(f, "slo-tpot=50ms is goodput's own setting"));
  // The simulator's own flags are vLLM's, and V0 is vLLM too.
  EXPECT_EQ(ServeFlagsFor(s, "vllm-v0").args, f.args);
  EXPECT_EQ(ServeFlagsFor(s, "none").command, "vllm serve");
}

TEST(ServeFlags, SglangSpellsWhatMeansTheSameAndNotesTheRest) {
  const Setting s{{{"max-num-seqs", "64"},
                   {"max-num-batched-tokens", "4096"},
                   {"kv-cache-dtype", "fp8"},
                   {"gpu-memory-utilization", "0.9"},
                   {"max-model-len", "8192"},
                   {"block-size", "32"},
                   {"enable-chunked-prefill", "false"},
                   {"weights", "fp8"},
                   {"scheduling-policy", "fcfs"},
                   {"num-speculative-tokens", "2"}}};
  const ServeFlags f = ServeFlagsFor(s, "sglang");
  EXPECT_EQ(f.command, "python -m sglang.launch_server");
  EXPECT_EQ(f.args, (Strings{"--max-running-requests", "64", "--chunked-prefill-size", "4096", "--kv-cache-dtype",
                             "fp8_e4m3", "--context-length", "8192", "--page-size", "32", "--quantization", "fp8",
                             "--schedule-policy", "fcfs"}));
  EXPECT_EQ(f.yaml.front(), "max-running-requests: 64");
  EXPECT_EQ(f.yaml.size(), 7u);
  ASSERT_EQ(f.notes.size(), 3u);
  EXPECT_TRUE(Noted(f, "gpu-memory-utilization=0.9: SGLang's --mem-fraction-static"));
  EXPECT_TRUE(Noted(f, "enable-chunked-prefill=false: no SGLang spelling"));
  EXPECT_TRUE(Noted(f, "num-speculative-tokens=2"));
}

// SGLang's own settings are its flags and only notes for vLLM: its static share (vLLM's also holds the
// activation peak) and its receive interval (vLLM takes arrivals in at every step).
TEST(ServeFlags, SglangsOwnSettingsAreItsFlagsAndOnlyNotesForVllm) {
  for (const auto& [name, value, note] :
       {std::tuple{"mem-fraction-static", "0.82", "mem-fraction-static=0.82: SGLang's share"},
        std::tuple{"scheduler-recv-interval", "10", "scheduler-recv-interval=10: SGLang's"}}) {
    const Setting s{{{name, value}}};
    EXPECT_EQ(ServeFlagsFor(s, "sglang").args, (Strings{std::string("--") + name, value}));
    const ServeFlags vllm = ServeFlagsFor(s, "vllm");
    EXPECT_TRUE(vllm.args.empty()) << name;
    EXPECT_TRUE(Noted(vllm, note)) << name;
  }
  // The simulator's bound on a decode step's CUDA graph is SGLang's --cuda-graph-max-bs.
  const Setting graphs{{{"cuda-graph-max-batch", "640"}}};
  EXPECT_EQ(ServeFlagsFor(graphs, "sglang").args, (Strings{"--cuda-graph-max-bs", "640"}));
  EXPECT_TRUE(ServeFlagsFor(graphs, "vllm").args.empty());
  EXPECT_TRUE(Noted(ServeFlagsFor(graphs, "vllm"), "cuda-graph-max-batch=640: SGLang's --cuda-graph-max-bs"));
}

TEST(ServeFlags, SglangRefusesValuesItDoesNotTake) {
  const Setting s{{{"kv-cache-dtype", "int8"}, {"scheduling-policy", "slo"}, {"weights", "nvfp4"}}};
  const ServeFlags f = ServeFlagsFor(s, "sglang");
  EXPECT_TRUE(f.args.empty());
  ASSERT_EQ(f.notes.size(), 3u);
  EXPECT_TRUE(Noted(f, "kv-cache-dtype=int8"));
  EXPECT_TRUE(Noted(f, "scheduling-policy=slo"));
  EXPECT_TRUE(Noted(f, "weights=nvfp4: serve a checkpoint"));
}

TEST(ServeFlags, TensorRtLlmHasNoCommandOnlyANote) {
  const ServeFlags f = ServeFlagsFor(Setting{{{"max-num-seqs", "64"}}}, "trtllm");
  EXPECT_TRUE(f.command.empty());
  EXPECT_TRUE(f.args.empty());
  EXPECT_TRUE(f.yaml.empty());
  EXPECT_TRUE(Noted(f, "TensorRT-LLM's spelling"));
  EXPECT_TRUE(ServeFlagsFor(Setting{}, "trtllm-cpp").notes.empty()) << "nothing to set, nothing to say";
}

TEST(ServeFlags, TheEngineOfASimTargetsFlags) {
  EXPECT_EQ(EngineOfSimArgs({}), "vllm");
  EXPECT_EQ(EngineOfSimArgs({"--max-num-seqs", "8", "--engine", "sglang"}), "sglang");
  EXPECT_EQ(EngineOfSimArgs({"--engine=trtllm"}), "trtllm");
  EXPECT_EQ(EngineOfSimArgs({"--engine", "sglang", "--engine", "vllm-v0"}), "vllm-v0") << "the last one wins";
  EXPECT_EQ(EngineOfSimArgs({"--engine"}), "vllm") << "a dangling flag names nothing";
}

}  // namespace
}  // namespace goodput
