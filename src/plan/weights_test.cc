// WeightBytes: what one GPU holds of a model's weights, by hand from the
// configs' shapes.
#include <gtest/gtest.h>

#include "model/catalog.h"
#include "model/params.h"
#include "plan/weights.h"

namespace goodput {
namespace {

ModelSpec Model(const std::string& name) {
  auto m = LoadModel(name);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return *m;
}

// vLLM, SGLang and TensorRT-LLM split MLA's heads across tensor-parallel GPUs
// but hold its down-projections to the latents whole on each (ReplicatedLinear
// q_a_proj and kv_a_proj_with_mqa; TensorRT-LLM's "Fuse_A" GEMM, "DP-based"),
// and the MoE routers too. DeepSeek-V3: 61 MLA layers of 7,168 x (1,536 q
// latent + 512 KV latent + 64 rope key), 58 routers of 7,168 x 256 in bf16.
TEST(Weights, MlaDownProjectionsAndRoutersAreWholeOnEveryGpu) {
  const ModelSpec m = Model("deepseek-v3");
  const ParamCounts c = CountParams(m);
  EXPECT_EQ(c.mixer_replicated, int64_t{61} * 7'168 * (1'536 + 512 + 64));
  EXPECT_EQ(c.router, int64_t{58} * 7'168 * 256);
  auto fp8 = ResolveWeightPrecision("auto", m);
  ASSERT_TRUE(fp8.ok());
  const double whole = static_cast<double>(c.mixer_replicated) * fp8->linear_bytes + static_cast<double>(c.router) * 2;
  const double one = static_cast<double>(WeightBytes(c, *fp8, m, 1));
  EXPECT_NEAR(static_cast<double>(WeightBytes(c, *fp8, m, 8)), whole + (one - whole) / 8, 8.0);
  // 0.93 GiB more on each of eight GPUs than an even split would put there:
  // 923.5M bytes of fp8 latent projections and 212.9M bytes of bf16 routers.
  EXPECT_NEAR(whole * 7 / 8 / (1 << 30), 0.926, 0.001);
  // A model without either splits evenly.
  const ModelSpec llama = Model("llama-3.1-8b");
  const ParamCounts l = CountParams(llama);
  EXPECT_EQ(l.mixer_replicated + l.router, 0);
  auto bf16 = ResolveWeightPrecision("auto", llama);
  ASSERT_TRUE(bf16.ok());
  EXPECT_NEAR(static_cast<double>(WeightBytes(l, *bf16, llama, 2)),
              static_cast<double>(WeightBytes(l, *bf16, llama, 1)) / 2, 1.0);
}

// vLLM's MLA keeps a bf16 copy of kv_b_proj (512 x 128 heads x (128 + 128))
// for its decode beside an fp8 one: 61 layers, an eighth of the heads on each
// of eight GPUs, 255,852,544 bytes. None when attention stays in bf16.
TEST(Weights, VllmKeepsABf16CopyOfMlasUpProjectionForDecode) {
  const ModelSpec m = Model("deepseek-v3");
  auto fp8 = ResolveWeightPrecision("auto", m);
  ASSERT_TRUE(fp8.ok());
  EXPECT_EQ(MlaDecodeCopyBytes(m, *fp8, 8), int64_t{61} * 512 * 128 * 256 / 8 * 2);
  EXPECT_EQ(MlaDecodeCopyBytes(m, *fp8, 8), 255'852'544);
  WeightPrecision kept = *fp8;
  ASSERT_TRUE(LeaveUnquantized("attention", m, kept).ok());
  EXPECT_EQ(MlaDecodeCopyBytes(m, kept, 8), 0);
  EXPECT_EQ(MlaDecodeCopyBytes(m, *ResolveWeightPrecision("bf16", m), 8), 0);
  const ModelSpec llama = Model("llama-3.1-8b");
  EXPECT_EQ(MlaDecodeCopyBytes(llama, *ResolveWeightPrecision("fp8", llama), 1), 0);
}

// NVIDIA's NVFP4 DeepSeek-R1 (TensorRT-LLM's blog on it, "Precision
// Strategy": attention and the MTP layer bf16, dense and MoE feed-forward
// layers nvfp4): --unquantized attention keeps the mixer's projections at two
// bytes a parameter, the routed experts and dense layers at NVFP4's 0.5625.
TEST(Weights, UnquantizedPartsStayInTheModelDtype) {
  const ModelSpec m = Model("deepseek-v3");
  const ParamCounts c = CountParams(m);
  auto all = ResolveWeightPrecision("nvfp4", m);
  ASSERT_TRUE(all.ok());
  WeightPrecision kept = *all;
  ASSERT_TRUE(LeaveUnquantized("attention,draft", m, kept).ok());
  EXPECT_TRUE(kept.unquantized.attention && kept.unquantized.draft);
  EXPECT_FALSE(kept.unquantized.dense_mlp || kept.unquantized.shared_experts);
  EXPECT_NE(kept.description.find("attention,draft in the model dtype"), std::string::npos) << kept.description;
  const double attention = static_cast<double>(c.mixer_linear);
  EXPECT_NEAR(static_cast<double>(WeightBytes(c, kept, m, 1) - WeightBytes(c, *all, m, 1)),
              attention * (2 - (0.5 + 1.0 / 16)), 2.0);
  // Split over eight GPUs but for the down-projections each holds whole.
  const double per_gpu =
      (attention - static_cast<double>(c.mixer_replicated)) / 8 + static_cast<double>(c.mixer_replicated);
  EXPECT_NEAR(UnquantizedParamsPerGpu(c, kept.unquantized, 8), per_gpu, 1.0);
  WeightPrecision shared = *all;
  ASSERT_TRUE(LeaveUnquantized("shared-experts,dense-mlp", m, shared).ok());
  EXPECT_NEAR(static_cast<double>(WeightBytes(c, shared, m, 1) - WeightBytes(c, *all, m, 1)),
              static_cast<double>(c.shared_experts + c.dense_mlp) * (2 - (0.5 + 1.0 / 16)), 2.0);
}

TEST(Weights, UnquantizedPartsRefuseWhatCannotBeLeftOut) {
  const ModelSpec m = Model("deepseek-v3");
  auto nvfp4 = ResolveWeightPrecision("nvfp4", m);
  ASSERT_TRUE(nvfp4.ok());
  WeightPrecision w = *nvfp4;
  auto bad = LeaveUnquantized("attention,routers", m, w);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("unknown part 'routers'"), std::string::npos) << bad.message();
  EXPECT_FALSE(LeaveUnquantized("attention,", m, w).ok());  // an empty part
  auto bf16 = ResolveWeightPrecision("bf16", m);
  ASSERT_TRUE(bf16.ok());
  WeightPrecision b = *bf16;
  auto none = LeaveUnquantized("attention", m, b);
  EXPECT_FALSE(none.ok());
  EXPECT_NE(none.message().find("not quantized"), std::string::npos) << none.message();
  EXPECT_TRUE(LeaveUnquantized("", m, b).ok());  // nothing asked, nothing to refuse
  EXPECT_EQ(UnquantizedPartsName(*ParseUnquantizedParts("draft,attention")), "attention,draft");
}

}  // namespace
}  // namespace goodput
