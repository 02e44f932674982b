// Writes a Llama-family model's float32 weights as a GGUF file (version 3)
// that llama.cpp loads as architecture "llama", with goodput's byte
// vocabulary (0 pad, 1 BOS, 2 EOS, then the 256 bytes as "<0xXX>" tokens, the
// form llama.cpp's SentencePiece vocabulary gives byte fallbacks). Used by
// perf/vs_llama_cpp to run the same weights in both engines.
#pragma once

#include <string>

#include "core/status.h"
#include "cpu/weights.h"
#include "model/model_spec.h"

namespace goodput::bench {

// Writes `w` of `m` (plain Llama: no biases, no q/k norms, rotate-half RoPE of
// type "default", goodput's 259-token byte vocabulary) to `path`. The q and k
// rows are permuted as llama.cpp's convert_hf_to_gguf.py does, because its
// "llama" graph rotates interleaved pairs where Hugging Face rotates halves.
// Errors name what the format cannot express.
Status WriteLlamaGguf(const ModelSpec& m, const cpu::ModelWeights& w, const std::string& path);

}  // namespace goodput::bench
