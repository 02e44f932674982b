// Tokenizers for served models: the built-in byte tokenizer (ids 3..258 are
// the bytes 0..255; 0 pad, 1 BOS, 2 EOS) and Hugging Face byte-level BPE
// read from tokenizer.json (GPT-2 / Llama 3 style: bytes mapped to printable
// characters, merges applied by rank within pre-tokenized words).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace goodput {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual std::vector<int32_t> Encode(const std::string& text) const = 0;
  // Bytes of the tokens (special tokens left out); may end inside a UTF-8
  // character, which the caller holds back when streaming.
  virtual std::string Decode(const std::vector<int32_t>& ids) const = 0;
  virtual int32_t vocab_size() const = 0;
  virtual int32_t bos_id() const = 0;
  virtual int32_t eos_id() const = 0;
};

class ByteTokenizer final : public Tokenizer {
 public:
  std::vector<int32_t> Encode(const std::string& text) const override;
  std::string Decode(const std::vector<int32_t>& ids) const override;
  int32_t vocab_size() const override { return 259; }
  int32_t bos_id() const override { return 1; }
  int32_t eos_id() const override { return 2; }
};

class BpeTokenizer final : public Tokenizer {
 public:
  // Reads tokenizer.json; errors name what is missing or malformed.
  static Result<std::unique_ptr<BpeTokenizer>> Load(const std::string& path);
  static Result<std::unique_ptr<BpeTokenizer>> Parse(const std::string& json_text, const std::string& where);

  std::vector<int32_t> Encode(const std::string& text) const override;
  std::string Decode(const std::vector<int32_t>& ids) const override;
  int32_t vocab_size() const override { return vocab_size_; }
  int32_t bos_id() const override { return bos_; }
  int32_t eos_id() const override { return eos_; }

 private:
  std::vector<int32_t> EncodeWord(const std::string& word) const;

  std::unordered_map<std::string, int32_t> vocab_;       // byte-level token -> id
  std::vector<std::string> id_to_token_;
  std::map<std::pair<std::string, std::string>, int> merge_rank_;
  std::unordered_map<std::string, int32_t> special_;     // added special tokens
  std::vector<bool> is_special_;
  int32_t vocab_size_ = 0, bos_ = -1, eos_ = -1;
};

// GPT-2's printable stand-ins for the 256 byte values (bytes_to_unicode), as UTF-8.
const std::vector<std::string>& ByteLevelAlphabet();

// Largest prefix of `bytes` that ends on a UTF-8 character boundary.
size_t CompleteUtf8Prefix(const std::string& bytes);

}  // namespace goodput
