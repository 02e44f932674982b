#include "model/tokenizer.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>
#include <fmt/format.h>

namespace goodput {
namespace {

// GPT-2's byte <-> printable-character table (bytes_to_unicode), as UTF-8.
std::string CodepointUtf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xc0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    s += static_cast<char>(0xe0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return s;
}

const std::vector<std::string>& ByteToUnicode() {
  static const std::vector<std::string> table = [] {
    std::vector<std::string> t(256);
    uint32_t extra = 0;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae);
      t[b] = CodepointUtf8(printable ? b : 256 + extra++);
    }
    return t;
  }();
  return table;
}

}  // namespace

const std::vector<std::string>& ByteLevelAlphabet() { return ByteToUnicode(); }

namespace {

const std::unordered_map<std::string, uint8_t>& UnicodeToByte() {
  static const std::unordered_map<std::string, uint8_t> table = [] {
    std::unordered_map<std::string, uint8_t> t;
    for (int b = 0; b < 256; ++b) t[ByteToUnicode()[b]] = static_cast<uint8_t>(b);
    return t;
  }();
  return table;
}

enum class CharClass { kLetter, kDigit, kSpace, kOther };

CharClass Classify(unsigned char c) {
  if (c >= 0x80 || std::isalpha(c)) return CharClass::kLetter;  // non-ASCII bytes join letter runs
  if (std::isdigit(c)) return CharClass::kDigit;
  if (std::isspace(c)) return CharClass::kSpace;
  return CharClass::kOther;
}

// GPT-2-style pre-tokenization: contractions; runs of letters, digits or
// other symbols, each with an optional leading space; whitespace runs, whose
// last space goes with the word after them. Unicode classes beyond ASCII are
// approximated: every non-ASCII byte counts as a letter.
std::vector<std::string> PreTokenize(const std::string& text) {
  std::vector<std::string> words;
  const size_t n = text.size();
  auto space = [&](size_t k) { return Classify(static_cast<unsigned char>(text[k])) == CharClass::kSpace; };
  size_t i = 0;
  while (i < n) {
    bool matched = false;
    for (const char* c : {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"}) {
      const size_t len = std::char_traits<char>::length(c);
      if (text.compare(i, len, c) == 0) {
        words.emplace_back(c);
        i += len;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    if (space(i)) {
      size_t j = i;
      while (j < n && space(j)) ++j;
      const bool word_follows = j < n && text[j - 1] == ' ';
      const size_t end = word_follows ? j - 1 : j;
      if (end > i) {
        words.push_back(text.substr(i, end - i));
        i = end;
        continue;
      }
    }
    const size_t start = i;
    if (text[i] == ' ') ++i;  // the leading space of a word
    const CharClass cls = Classify(static_cast<unsigned char>(text[i]));
    while (i < n && Classify(static_cast<unsigned char>(text[i])) == cls) ++i;
    words.push_back(text.substr(start, i - start));
  }
  return words;
}

}  // namespace

size_t CompleteUtf8Prefix(const std::string& s) {
  size_t i = s.size();
  size_t back = 0;
  while (i > 0 && back < 4 && (static_cast<unsigned char>(s[i - 1]) & 0xc0) == 0x80) {
    --i;
    ++back;
  }
  if (i == 0) return s.size();
  const auto lead = static_cast<unsigned char>(s[i - 1]);
  size_t need = lead < 0x80 ? 1 : (lead >> 5) == 6 ? 2 : (lead >> 4) == 14 ? 3 : (lead >> 3) == 30 ? 4 : 1;
  return back + 1 >= need ? s.size() : i - 1;
}

std::vector<int32_t> ByteTokenizer::Encode(const std::string& text) const {
  std::vector<int32_t> ids;
  for (unsigned char c : text) ids.push_back(3 + c);
  return ids;
}

std::string ByteTokenizer::Decode(const std::vector<int32_t>& ids) const {
  std::string s;
  for (int32_t id : ids) {
    if (id >= 3 && id < 259) s += static_cast<char>(id - 3);
  }
  return s;
}

Result<std::unique_ptr<BpeTokenizer>> BpeTokenizer::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(fmt::format("cannot read tokenizer '{}'", path));
  std::stringstream buf;
  buf << in.rdbuf();
  return Parse(buf.str(), path);
}

Result<std::unique_ptr<BpeTokenizer>> BpeTokenizer::Parse(const std::string& text, const std::string& where) {
  boost::system::error_code ec;
  auto doc = boost::json::parse(text, ec);
  if (ec || !doc.is_object()) return Status::InvalidArgument(where + ": not a JSON object");
  const auto* model = doc.as_object().if_contains("model");
  if (!model || !model->is_object() || !model->as_object().contains("vocab") ||
      !model->as_object().at("vocab").is_object() || !model->as_object().contains("merges") ||
      !model->as_object().at("merges").is_array()) {
    return Status::InvalidArgument(where + ": needs model.vocab (object) and model.merges (list) of a BPE model");
  }
  if (const auto* type = model->as_object().if_contains("type");
      type && type->is_string() && type->as_string() != "BPE") {
    return Status::InvalidArgument(fmt::format("{}: model.type is {}, not BPE", where, boost::json::serialize(*type)));
  }
  auto tok = std::unique_ptr<BpeTokenizer>(new BpeTokenizer());
  for (const auto& [token, id] : model->as_object().at("vocab").as_object()) {
    if (!id.is_int64() || id.as_int64() < 0) return Status::InvalidArgument(where + ": vocab ids must be integers");
    tok->vocab_[std::string(token)] = static_cast<int32_t>(id.as_int64());
    tok->vocab_size_ = std::max(tok->vocab_size_, static_cast<int32_t>(id.as_int64()) + 1);
  }
  int rank = 0;
  for (const auto& m : model->as_object().at("merges").as_array()) {
    std::string a, b;
    if (m.is_string()) {  // "a b"
      const std::string s(m.as_string());
      const size_t sp = s.find(' ');
      if (sp == std::string::npos) return Status::InvalidArgument(fmt::format("{}: merge '{}' is not 'a b'", where, s));
      a = s.substr(0, sp);
      b = s.substr(sp + 1);
    } else if (m.is_array() && m.as_array().size() == 2 && m.as_array()[0].is_string() && m.as_array()[1].is_string()) {
      a = std::string(m.as_array()[0].as_string());
      b = std::string(m.as_array()[1].as_string());
    } else {
      return Status::InvalidArgument(where + ": merges must be 'a b' strings or [a, b] pairs");
    }
    tok->merge_rank_[{a, b}] = rank++;
  }
  if (const auto* added = doc.as_object().if_contains("added_tokens"); added && added->is_array()) {
    for (const auto& t : added->as_array()) {
      if (!t.is_object() || !t.as_object().contains("id") || !t.as_object().contains("content")) continue;
      const auto id = static_cast<int32_t>(t.at("id").as_int64());
      const std::string content(t.at("content").as_string());
      tok->special_[content] = id;
      tok->vocab_size_ = std::max(tok->vocab_size_, id + 1);
    }
  }
  for (int b = 0; b < 256; ++b) {  // every byte must be encodable, or text would be dropped
    if (!tok->vocab_.count(ByteToUnicode()[b])) {
      return Status::InvalidArgument(
          fmt::format("{}: not a byte-level BPE: the vocabulary lacks byte 0x{:02x}", where, b));
    }
  }
  tok->id_to_token_.resize(static_cast<size_t>(tok->vocab_size_));
  tok->is_special_.assign(static_cast<size_t>(tok->vocab_size_), false);
  for (const auto& [t, id] : tok->vocab_) tok->id_to_token_[id] = t;
  for (const auto& [t, id] : tok->special_) {
    tok->id_to_token_[id] = t;
    tok->is_special_[id] = true;
    const bool bos = t.find("begin_of_text") != std::string::npos || t == "<s>" || t == "<|startoftext|>";
    const bool eos =
        t.find("end_of_text") != std::string::npos || t == "</s>" || t == "<|endoftext|>" || t == "<|eot_id|>";
    if (bos && tok->bos_ < 0) tok->bos_ = id;
    if (eos && tok->eos_ < 0) tok->eos_ = id;
  }
  return tok;
}

std::vector<int32_t> BpeTokenizer::EncodeWord(const std::string& word) const {
  std::vector<std::string> parts;
  for (unsigned char c : word) parts.push_back(ByteToUnicode()[c]);
  while (parts.size() > 1) {  // merge the best-ranked adjacent pair until none applies
    int best = -1;
    size_t at = 0;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      auto it = merge_rank_.find({parts[i], parts[i + 1]});
      if (it != merge_rank_.end() && (best < 0 || it->second < best)) {
        best = it->second;
        at = i;
      }
    }
    if (best < 0) break;
    parts[at] += parts[at + 1];
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  std::vector<int32_t> ids;
  for (const auto& p : parts) {
    auto it = vocab_.find(p);
    if (it != vocab_.end()) ids.push_back(it->second);  // byte-level vocabularies cover every byte
  }
  return ids;
}

std::vector<int32_t> BpeTokenizer::Encode(const std::string& text) const {
  std::vector<int32_t> ids;
  for (const auto& word : PreTokenize(text)) {
    const auto w = EncodeWord(word);
    ids.insert(ids.end(), w.begin(), w.end());
  }
  return ids;
}

std::string BpeTokenizer::Decode(const std::vector<int32_t>& ids) const {
  std::string out;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size_ || is_special_[id]) continue;
    const std::string& t = id_to_token_[id];
    for (size_t i = 0; i < t.size();) {  // one printable character per byte
      size_t len = 1;
      const auto c = static_cast<unsigned char>(t[i]);
      if (c >= 0xf0) len = 4;
      else if (c >= 0xe0) len = 3;
      else if (c >= 0xc0) len = 2;
      auto it = UnicodeToByte().find(t.substr(i, len));
      if (it != UnicodeToByte().end()) out += static_cast<char>(it->second);
      i += len;
    }
  }
  return out;
}

}  // namespace goodput
