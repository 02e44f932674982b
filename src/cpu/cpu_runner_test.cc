// The paged, batched CPU forward pass against the plain reference model.
#include "cpu/cpu_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "cpu/reference_model.h"
#include "cpu/small_matmul.h"
#include "engine/scheduler.h"
#include "model/catalog.h"

namespace goodput::cpu {
namespace {

struct Generation {
  std::vector<std::vector<float>> logits;  // one per sampled token
  std::vector<int32_t> tokens;
};

std::vector<int32_t> Prompt(int n, int salt) {
  std::vector<int32_t> p;
  for (int i = 0; i < n; ++i) p.push_back(3 + (i * 37 + salt * 11) % 250);
  return p;
}

// Runs prompts through Scheduler + CpuModelRunner to `max_tokens` greedy
// tokens each, collecting every sampled step's logits.
std::map<RequestId, Generation> Generate(const ModelSpec& m, const ModelWeights& w, KvFormat format,
                                    const std::vector<std::vector<int32_t>>& prompts, int max_tokens,
                                    int64_t budget = 4096, int64_t blocks = 256, int64_t* preemptions = nullptr,
                                    int64_t* prefix_hits = nullptr) {
  // With prefix_hits, prefix caching is on and each request arrives when the
  // one before it has finished (so that it can find that one's blocks).
  const CpuKvLayout layout = MakeCpuKvLayout(m, 16);
  KvCacheManager kv(layout.groups, blocks, prefix_hits != nullptr);
  SchedulerConfig sc;
  sc.max_num_batched_tokens = budget;
  sc.max_num_seqs = 256;
  sc.max_model_len = m.max_position_embeddings;
  Scheduler sched(sc, &kv, nullptr);
  auto runner = CpuModelRunner::Create(m, w, layout, format, blocks, 16);
  EXPECT_TRUE(runner.ok()) << runner.status().message();
  (*runner)->keep_logits(true);
  size_t added = 0;
  const auto add = [&](size_t i) {
    Request r;
    r.id = static_cast<RequestId>(i);
    r.arrival_time = static_cast<double>(i);
    r.num_prompt_tokens = static_cast<int64_t>(prompts[i].size());
    r.token_ids = prompts[i];
    r.sampling.max_tokens = max_tokens;
    r.sampling.ignore_eos = true;
    EXPECT_FALSE(sched.Add(r).has_value());
    ++added;
  };
  if (!prefix_hits) while (added < prompts.size()) add(added);
  std::map<RequestId, Generation> out;
  while (sched.HasWork() || added < prompts.size()) {
    if (!sched.HasWork()) add(added);
    const StepPlan& plan = sched.Schedule();
    StepResult result = (*runner)->Execute(plan);
    size_t k = 0;
    for (const auto& s : plan.requests) {
      if (!s.samples) continue;
      out[s.id].logits.push_back((*runner)->last_logits()[k]);
      out[s.id].tokens.push_back(result.sampled[k].token_ids[0]);
      ++k;
    }
    sched.Update(plan, result);
  }
  if (preemptions) *preemptions = sched.num_preemptions();
  if (prefix_hits) *prefix_hits = sched.prefix_hit_tokens();
  EXPECT_EQ(kv.free_blocks(), blocks);  // every block back
  return out;
}

// max |a - b| / max |b| over the vectors.
double RelError(const std::vector<float>& a, const std::vector<float>& b) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    err = std::max(err, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  return err / scale;
}

// Feeds the reference the same prompt and generated tokens, comparing logits.
double WorstErrorAgainstReference(const ModelSpec& m, const ModelWeights& w, const std::vector<int32_t>& prompt,
                                  const Generation& g) {
  ReferenceModel ref(m, w);
  std::vector<float> logits;
  for (int32_t t : prompt) logits = ref.Forward(t);
  double worst = RelError(g.logits[0], logits);
  for (size_t i = 1; i < g.logits.size(); ++i) {
    logits = ref.Forward(g.tokens[i - 1]);
    worst = std::max(worst, RelError(g.logits[i], logits));
  }
  return worst;
}

class KvFormats : public ::testing::TestWithParam<std::pair<KvFormat, double>> {};

// Three requests prefilled together and decoded in one batch, for every KV
// format. Tolerance on max |logit error| / max |logit|: fp32 1e-4 (summation
// order only), bf16 2e-2, int8 5e-2, fp8 2e-1 (3 mantissa bits, per-token scales).
TEST_P(KvFormats, BatchedPagedForwardMatchesTheReference) {
  const ModelSpec m = *LoadModel("goodput-tiny");
  const ModelWeights w = DummyWeights(m, 7);
  const std::vector<std::vector<int32_t>> prompts = {Prompt(5, 1), Prompt(17, 2), Prompt(40, 3)};
  auto gens = Generate(m, w, GetParam().first, prompts, 8);
  for (size_t i = 0; i < prompts.size(); ++i) {
    ASSERT_EQ(gens[i].tokens.size(), 8u);
    const double err = WorstErrorAgainstReference(m, w, prompts[i], gens[i]);
    std::printf("%s request %zu: worst relative logit error %.2e\n", KvFormatName(GetParam().first), i, err);
    EXPECT_LT(err, GetParam().second) << "request " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, KvFormats,
                         ::testing::Values(std::make_pair(KvFormat::kFp32, 1e-4), std::make_pair(KvFormat::kBf16, 2e-2),
                                           std::make_pair(KvFormat::kInt8, 5e-2), std::make_pair(KvFormat::kFp8, 2e-1)),
                         [](const auto& info) { return std::string(KvFormatName(info.param.first)); });

// goodput's kernels at each instruction set this CPU has (AVX-512, AVX2, and
// OpenBLAS alone), attention's products with them, give the reference's logits.
TEST(CpuRunner, EveryInstructionSetMatchesTheReference) {
  const ModelSpec m = *LoadModel("goodput-tiny");
  const ModelWeights w = DummyWeights(m, 7);
  const std::vector<std::vector<int32_t>> prompts = {Prompt(5, 1), Prompt(70, 2)};
  for (VectorIsa isa : IsasThisCpuRuns()) {
    LimitKernelIsa(isa);
    auto gens = Generate(m, w, KvFormat::kFp32, prompts, 6);
    for (size_t i = 0; i < prompts.size(); ++i) {
      EXPECT_LT(WorstErrorAgainstReference(m, w, prompts[i], gens[i]), 1e-4) << VectorIsaName(isa) << " request " << i;
    }
  }
  LimitKernelIsa(VectorIsa::kAvx512);
}

// Window 32: a 50-token prompt and 20 more tokens reach well past it, and the
// released blocks must not be read.
TEST(CpuRunner, SlidingWindowLayersMatchTheReference) {
  const ModelSpec m = *LoadModel("goodput-hybrid");
  const ModelWeights w = DummyWeights(m, 3);
  auto gens = Generate(m, w, KvFormat::kFp32, {Prompt(50, 4)}, 20);
  EXPECT_LT(WorstErrorAgainstReference(m, w, Prompt(50, 4), gens[0]), 1e-4);
}

TEST(CpuRunner, ChunkedPrefillEqualsOnePiece) {
  const ModelSpec m = *LoadModel("goodput-tiny");
  const ModelWeights w = DummyWeights(m, 5);
  auto whole = Generate(m, w, KvFormat::kFp32, {Prompt(45, 6)}, 4, /*budget=*/4096);
  auto chunked = Generate(m, w, KvFormat::kFp32, {Prompt(45, 6)}, 4, /*budget=*/7);
  ASSERT_EQ(whole[0].logits.size(), chunked[0].logits.size());
  EXPECT_LT(RelError(chunked[0].logits[0], whole[0].logits[0]), 1e-5);
  EXPECT_EQ(chunked[0].tokens, whole[0].tokens);
}

TEST(CpuRunner, PreemptedRequestRecomputesTheSameGreedyTokens) {
  const ModelSpec m = *LoadModel("goodput-tiny");
  const ModelWeights w = DummyWeights(m, 9);
  const std::vector<std::vector<int32_t>> prompts = {Prompt(30, 1), Prompt(30, 2), Prompt(30, 3)};
  int64_t preemptions = 0;
  auto roomy = Generate(m, w, KvFormat::kFp32, prompts, 40, 4096, 256);
  auto tight = Generate(m, w, KvFormat::kFp32, prompts, 40, 4096, /*blocks=*/10, &preemptions);
  EXPECT_GT(preemptions, 0);
  for (RequestId i = 0; i < 3; ++i) EXPECT_EQ(tight[i].tokens, roomy[i].tokens) << "request " << i;
}

// Three requests share a `system_tokens`-token system prompt, each with 7
// tokens of its own, arriving one after another: the second and third find
// `hits_each` tokens of it in the cache, and their logits still match the
// reference model's, which computes every token itself.
void ExpectPrefixHitsGiveTheReferenceLogits(const std::string& model, int system_tokens, int64_t hits_each) {
  const ModelSpec m = *LoadModel(model);
  const ModelWeights w = DummyWeights(m, 11);
  const std::vector<int32_t> system = Prompt(system_tokens, 8);
  std::vector<std::vector<int32_t>> prompts;
  for (int salt = 1; salt <= 3; ++salt) {
    prompts.push_back(system);
    for (int32_t t : Prompt(7, salt)) prompts.back().push_back(t);
  }
  int64_t hits = 0;
  auto gens = Generate(m, w, KvFormat::kFp32, prompts, 6, 4096, 256, nullptr, &hits);
  EXPECT_EQ(hits, 2 * hits_each);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_LT(WorstErrorAgainstReference(m, w, prompts[i], gens[i]), 1e-4) << "request " << i;
  }
}

// 40 tokens: two whole blocks of 16.
TEST(CpuRunner, PrefixCacheHitsGiveTheReferenceLogits) {
  ExpectPrefixHitsGiveTheReferenceLogits("goodput-tiny", 40, 32);
}

// Sliding-window layers (window 32) with an 80-token system prompt: all five
// of its blocks are found (the sliding groups need only their last two,
// vLLM's cdiv(32 - 1, 16)).
TEST(CpuRunner, SlidingWindowPrefixCacheHitsGiveTheReferenceLogits) {
  ExpectPrefixHitsGiveTheReferenceLogits("goodput-hybrid", 80, 80);
}

TEST(CpuRunner, RejectsModelsItCannotRun) {
  auto m = LoadModel("qwen3-next-80b-a3b");
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(CheckCpuSupported(*m).ok());
  // Llama-shaped layers with Gemma 2's activation or its four norms would run
  // as Llama's and answer garbage.
  auto tiny = LoadModel("goodput-tiny");
  ASSERT_TRUE(tiny.ok());
  EXPECT_TRUE(CheckCpuSupported(*tiny).ok());
  ModelSpec gelu = *tiny;
  gelu.hidden_act = "gelu_pytorch_tanh";
  const Status st = CheckCpuSupported(gelu);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("SiLU activation only, not 'gelu_pytorch_tanh'"), std::string::npos) << st.message();
  ModelSpec sandwich = *tiny;
  sandwich.norms_per_layer = 4;
  EXPECT_FALSE(CheckCpuSupported(sandwich).ok());
}

}  // namespace
}  // namespace goodput::cpu
