#include "cpu/safetensors.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/temp_file.h"

#include "cpu/kernels.h"
#include "cpu/weights.h"
#include "model/catalog.h"

namespace goodput::cpu {
namespace {

std::string TempDirFor(const std::string& name) {
  const std::string dir = testing::TempPath(name);
  std::filesystem::create_directories(dir);
  return dir;
}

Tensor Slice(const std::vector<float>& v, int64_t row0, int64_t rows, int64_t cols) {
  Tensor t;
  t.shape = cols ? std::vector<int64_t>{rows, cols} : std::vector<int64_t>{rows};
  const int64_t width = cols ? cols : 1;
  t.data.assign(v.begin() + row0 * width, v.begin() + (row0 + rows) * width);
  return t;
}

// The dummy weights written under Hugging Face's Llama names.
std::map<std::string, Tensor> AsCheckpoint(const ModelSpec& m, const ModelWeights& w) {
  const int64_t h = m.hidden_size, q = m.attn.num_heads * m.attn.head_dim, kv = m.attn.num_kv_heads * m.attn.head_dim;
  const int64_t inter = m.intermediate_size;
  std::map<std::string, Tensor> t;
  t["model.embed_tokens.weight"] = Slice(w.embed, 0, m.vocab_size, h);
  t["model.norm.weight"] = Slice(w.final_norm, 0, h, 0);
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    const LayerWeights& l = w.layers[i];
    t[p + "input_layernorm.weight"] = Slice(l.attn_norm, 0, h, 0);
    t[p + "self_attn.q_proj.weight"] = Slice(l.wqkv, 0, q, h);
    t[p + "self_attn.k_proj.weight"] = Slice(l.wqkv, q, kv, h);
    t[p + "self_attn.v_proj.weight"] = Slice(l.wqkv, q + kv, kv, h);
    t[p + "self_attn.o_proj.weight"] = Slice(l.wo, 0, h, q);
    t[p + "post_attention_layernorm.weight"] = Slice(l.mlp_norm, 0, h, 0);
    t[p + "mlp.gate_proj.weight"] = Slice(l.w_gate_up, 0, inter, h);
    t[p + "mlp.up_proj.weight"] = Slice(l.w_gate_up, inter, inter, h);
    t[p + "mlp.down_proj.weight"] = Slice(l.w_down, 0, h, inter);
  }
  return t;
}

TEST(Safetensors, F32CheckpointRoundTripsExactly) {
  const ModelSpec m = *LoadModel("goodput-tiny");
  const ModelWeights w = DummyWeights(m, 11);
  const std::string dir = TempDirFor("ckpt_f32");
  ASSERT_TRUE(WriteSafetensors(dir + "/model.safetensors", AsCheckpoint(m, w)).ok());
  auto loaded = LoadSafetensorsWeights(m, dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->embed, w.embed);
  EXPECT_EQ(loaded->layers[1].wqkv, w.layers[1].wqkv);
  EXPECT_EQ(loaded->layers[0].w_gate_up, w.layers[0].w_gate_up);
  EXPECT_EQ(loaded->layers[1].w_down, w.layers[1].w_down);
}

TEST(Safetensors, Bf16CheckpointRoundsEachValue) {
  const ModelSpec m = *LoadModel("goodput-tiny");
  const ModelWeights w = DummyWeights(m, 12);
  const std::string dir = TempDirFor("ckpt_bf16");
  ASSERT_TRUE(WriteSafetensors(dir + "/model.safetensors", AsCheckpoint(m, w), "BF16").ok());
  auto loaded = LoadSafetensorsWeights(m, dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  for (size_t i = 0; i < w.embed.size(); ++i) ASSERT_EQ(loaded->embed[i], Bf16ToFloat(FloatToBf16(w.embed[i])));
}

TEST(Safetensors, BrokenCheckpointsSayWhat) {
  const ModelSpec m = *LoadModel("goodput-tiny");
  const ModelWeights w = DummyWeights(m, 13);
  auto tensors = AsCheckpoint(m, w);
  tensors.erase("model.layers.1.mlp.down_proj.weight");
  const std::string dir = TempDirFor("ckpt_missing");
  ASSERT_TRUE(WriteSafetensors(dir + "/model.safetensors", tensors).ok());
  auto missing = LoadSafetensorsWeights(m, dir);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("lacks tensor 'model.layers.1.mlp.down_proj.weight'"), std::string::npos);
  tensors = AsCheckpoint(m, w);
  tensors["model.norm.weight"].shape = {8, 8};
  const std::string dir2 = TempDirFor("ckpt_shape");
  ASSERT_TRUE(WriteSafetensors(dir2 + "/model.safetensors", tensors).ok());
  auto shape = LoadSafetensorsWeights(m, dir2);
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.status().message().find("has shape [8, 8], expected [64]"), std::string::npos)
      << shape.status().message();
  const std::string dir3 = TempDirFor("ckpt_trunc");
  std::ofstream(dir3 + "/model.safetensors") << "\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":";
  EXPECT_FALSE(ReadSafetensors(dir3 + "/model.safetensors").ok());
  EXPECT_FALSE(LoadSafetensorsWeights(m, TempDirFor("ckpt_empty")).ok());
}

}  // namespace
}  // namespace goodput::cpu
