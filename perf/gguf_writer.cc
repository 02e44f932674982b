#include "gguf_writer.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <vector>

namespace goodput::bench {
namespace {

// GGUF's value types (ggml/include/gguf.h, enum gguf_type) and ggml's F32.
enum : uint32_t { kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7, kString = 8, kArray = 9 };
constexpr uint32_t kGgmlF32 = 0;
constexpr uint64_t kAlignment = 32;  // GGUF_DEFAULT_ALIGNMENT

// The file's bytes, built in memory: the header's counts come first, so the
// metadata is gathered before anything is written.
class Bytes {
 public:
  template <typename T>
  void Put(T v) {
    const auto* p = reinterpret_cast<const char*>(&v);
    out_.insert(out_.end(), p, p + sizeof(T));
  }
  void PutString(const std::string& s) {
    Put<uint64_t>(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void PadTo(uint64_t alignment) { out_.resize((out_.size() + alignment - 1) / alignment * alignment, 0); }
  const std::vector<char>& data() const { return out_; }

 private:
  std::vector<char> out_;
};

struct Tensor {
  std::string name;
  std::vector<uint64_t> ne;  // ggml order: ne[0] is the contiguous (input) dimension
  std::vector<float> data;
};

// Hugging Face's rotate-half rows of each head to llama.cpp's interleaved
// pairs: new row h*d + 2i + j is old row h*d + j*d/2 + i (convert_hf_to_gguf's
// LlamaModel.permute: reshape(heads, 2, d/2, in).swapaxes(1, 2)).
std::vector<float> PermuteForInterleavedRope(const float* rows, int64_t heads, int64_t head_dim, int64_t in) {
  std::vector<float> out(heads * head_dim * in);
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < head_dim / 2; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        const float* from = rows + (h * head_dim + j * head_dim / 2 + i) * in;
        std::copy(from, from + in, out.begin() + (h * head_dim + 2 * i + j) * in);
      }
    }
  }
  return out;
}

std::vector<float> Rows(const std::vector<float>& w, int64_t first, int64_t count, int64_t in) {
  return {w.begin() + first * in, w.begin() + (first + count) * in};
}

std::vector<Tensor> LlamaTensors(const ModelSpec& m, const cpu::ModelWeights& w) {
  const int64_t h = m.hidden_size, ff = m.intermediate_size, hd = m.attn.head_dim;
  const int64_t q = m.attn.num_heads * hd, kv = m.attn.num_kv_heads * hd;
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  std::vector<Tensor> t;
  t.push_back({"token_embd.weight", {u(h), u(m.vocab_size)}, w.embed});
  t.push_back({"output_norm.weight", {u(h)}, w.final_norm});
  if (!w.lm_head.empty()) t.push_back({"output.weight", {u(h), u(m.vocab_size)}, w.lm_head});
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const cpu::LayerWeights& L = w.layers[l];
    const std::string b = fmt::format("blk.{}.", l);
    t.push_back({b + "attn_norm.weight", {u(h)}, L.attn_norm});
    t.push_back({b + "attn_q.weight", {u(h), u(q)}, PermuteForInterleavedRope(L.wqkv.data(), m.attn.num_heads, hd, h)});
    t.push_back({b + "attn_k.weight",
                 {u(h), u(kv)},
                 PermuteForInterleavedRope(L.wqkv.data() + q * h, m.attn.num_kv_heads, hd, h)});
    t.push_back({b + "attn_v.weight", {u(h), u(kv)}, Rows(L.wqkv, q + kv, kv, h)});
    t.push_back({b + "attn_output.weight", {u(q), u(h)}, L.wo});
    t.push_back({b + "ffn_norm.weight", {u(h)}, L.mlp_norm});
    t.push_back({b + "ffn_gate.weight", {u(h), u(ff)}, Rows(L.w_gate_up, 0, ff, h)});
    t.push_back({b + "ffn_up.weight", {u(h), u(ff)}, Rows(L.w_gate_up, ff, ff, h)});
    t.push_back({b + "ffn_down.weight", {u(ff), u(h)}, L.w_down});
  }
  return t;
}

// Key/value pairs, each written as key, type, value.
class Metadata {
 public:
  void U32(const std::string& key, uint32_t v) { Key(key, kU32).Put(v); }
  void F32(const std::string& key, float v) { Key(key, kF32).Put(v); }
  void Bool(const std::string& key, bool v) { Key(key, kBool).Put<uint8_t>(v ? 1 : 0); }
  void String(const std::string& key, const std::string& v) { Key(key, kString).PutString(v); }
  void Strings(const std::string& key, const std::vector<std::string>& v) {
    Array(key, kString, v.size());
    for (const auto& s : v) bytes_.PutString(s);
  }
  template <typename T>
  void Numbers(const std::string& key, uint32_t type, const std::vector<T>& v) {
    Array(key, type, v.size());
    for (T x : v) bytes_.Put(x);
  }
  uint64_t count() const { return count_; }
  const Bytes& bytes() const { return bytes_; }

 private:
  Bytes& Key(const std::string& key, uint32_t type) {
    ++count_;
    bytes_.PutString(key);
    bytes_.Put(type);
    return bytes_;
  }
  void Array(const std::string& key, uint32_t type, uint64_t n) {
    Key(key, kArray).Put(type);
    bytes_.Put(n);
  }
  Bytes bytes_;
  uint64_t count_ = 0;
};

Metadata LlamaMetadata(const ModelSpec& m) {
  Metadata md;
  md.String("general.architecture", "llama");
  md.String("general.name", m.name);
  md.U32("general.file_type", 0);  // LLAMA_FTYPE_ALL_F32
  md.U32("llama.context_length", m.max_position_embeddings);
  md.U32("llama.embedding_length", m.hidden_size);
  md.U32("llama.block_count", m.num_layers);
  md.U32("llama.feed_forward_length", m.intermediate_size);
  md.U32("llama.attention.head_count", m.attn.num_heads);
  md.U32("llama.attention.head_count_kv", m.attn.num_kv_heads);
  md.U32("llama.attention.key_length", m.attn.head_dim);
  md.U32("llama.attention.value_length", m.attn.head_dim);
  md.F32("llama.attention.layer_norm_rms_epsilon", static_cast<float>(m.rms_norm_eps));
  md.F32("llama.rope.freq_base", static_cast<float>(m.rope.theta));
  md.U32("llama.rope.dimension_count", m.attn.head_dim);
  md.U32("llama.vocab_size", m.vocab_size);
  std::vector<std::string> tokens = {"<pad>", "<s>", "</s>"};
  std::vector<int32_t> types = {3, 3, 3};  // LLAMA_TOKEN_TYPE_CONTROL
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(fmt::format("<0x{:02X}>", b));
    types.push_back(6);  // LLAMA_TOKEN_TYPE_BYTE
  }
  md.String("tokenizer.ggml.model", "llama");
  md.Strings("tokenizer.ggml.tokens", tokens);
  md.Numbers("tokenizer.ggml.scores", kF32, std::vector<float>(tokens.size(), 0.0f));
  md.Numbers("tokenizer.ggml.token_type", kI32, types);
  md.U32("tokenizer.ggml.bos_token_id", 1);
  md.U32("tokenizer.ggml.eos_token_id", 2);
  md.U32("tokenizer.ggml.unknown_token_id", 0);
  md.U32("tokenizer.ggml.padding_token_id", 0);
  md.Bool("tokenizer.ggml.add_bos_token", false);
  return md;
}

Status CheckPlainLlama(const ModelSpec& m) {
  if (m.vocab_size != 259)
    return Status::InvalidArgument(
        fmt::format("{}: GGUF export needs goodput's byte vocabulary (259 tokens), not {}", m.name, m.vocab_size));
  if (m.attn.bias || m.attn.qk_norm || m.attn.output_gate || m.attn.sinks) {
    return Status::InvalidArgument(fmt::format("{}: GGUF export handles plain Llama attention only", m.name));
  }
  if (m.rope.type != "default" || m.rope.partial_rotary_factor != 1) {
    return Status::InvalidArgument(
        fmt::format("{}: GGUF export handles the default RoPE only, not '{}'", m.name, m.rope.type));
  }
  for (const LayerSpec& l : m.layers) {
    if (l.kind != LayerKind::kFullAttention)
      return Status::InvalidArgument(fmt::format("{}: GGUF export handles full attention only", m.name));
  }
  return Status::Ok();
}

}  // namespace

Status WriteLlamaGguf(const ModelSpec& m, const cpu::ModelWeights& w, const std::string& path) {
  if (Status s = CheckPlainLlama(m); !s.ok()) return s;
  const std::vector<Tensor> tensors = LlamaTensors(m, w);
  const Metadata md = LlamaMetadata(m);
  Bytes head;
  head.Put<uint32_t>(0x46554747);  // "GGUF"
  head.Put<uint32_t>(3);
  head.Put<uint64_t>(tensors.size());
  head.Put<uint64_t>(md.count());
  std::vector<char> out = head.data();
  out.insert(out.end(), md.bytes().data().begin(), md.bytes().data().end());
  Bytes infos;
  uint64_t offset = 0;
  for (const Tensor& t : tensors) {
    infos.PutString(t.name);
    infos.Put<uint32_t>(t.ne.size());
    for (uint64_t n : t.ne) infos.Put(n);
    infos.Put(kGgmlF32);
    infos.Put(offset);
    offset += (t.data.size() * sizeof(float) + kAlignment - 1) / kAlignment * kAlignment;
  }
  out.insert(out.end(), infos.data().begin(), infos.data().end());
  out.resize((out.size() + kAlignment - 1) / kAlignment * kAlignment, 0);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  for (const Tensor& t : tensors) {
    const size_t bytes = t.data.size() * sizeof(float);
    f.write(reinterpret_cast<const char*>(t.data.data()), static_cast<std::streamsize>(bytes));
    const std::vector<char> pad((kAlignment - bytes % kAlignment) % kAlignment, 0);
    f.write(pad.data(), static_cast<std::streamsize>(pad.size()));
  }
  if (!f.flush()) return Status::IoError(fmt::format("cannot write {}", path));
  return Status::Ok();
}

}  // namespace goodput::bench
