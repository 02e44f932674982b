#include "workload/conversations.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json/basic_parser_impl.hpp>
#include <cctype>
#include <cmath>
#include <fstream>

namespace goodput {
namespace {

using boost::json::string_view;
using boost::system::error_code;

// More conversations than any published dataset (ShareGPT holds ~90k,
// LMSYS-Chat 1M): a larger file is not a conversation dataset.
constexpr int64_t kMaxConversations = 20'000'000;

// Unicode code points in UTF-8 text: every byte that does not continue a
// sequence starts one (a part may end inside a sequence; the count holds).
int64_t CodePoints(string_view s) {
  return std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

// Streaming (SAX) handler: keeps only the first two turns' lengths of the
// conversation being read, so memory does not grow with the file's text.
// Depths: 1 the top array, 2 a conversation, 3 its turns, 4 a turn.
struct ConversationHandler {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  ConversationOptions options;
  ConversationLengths out;
  std::string error;  // why the handler stopped the parse

  int depth = 0;
  std::string key;        // the key whose value comes next
  bool in_turns = false;  // inside a conversation's "conversations" array
  int turns = 0;          // turns of this conversation so far
  int64_t chars[2] = {0, 0};

  bool Stop(error_code& ec, std::string why) {
    error = std::move(why);
    ec = boost::json::error::syntax;
    return false;
  }
  int64_t Tokens(int64_t n) const { return std::max<int64_t>(1, std::llround(n / options.chars_per_token)); }
  bool Keep(int64_t prompt, int64_t answer) const {
    if (!options.vllm_bench_filter) return true;
    return prompt >= 4 && answer >= 4 && prompt <= 1024 && prompt + answer <= 2048;
  }
  void EndConversation() {
    ++out.conversations;
    if (turns < 2) {
      ++out.too_short;
      return;
    }
    const int64_t prompt = Tokens(chars[0]), answer = Tokens(chars[1]);
    if (Keep(prompt, answer)) {
      out.rows.push_back(TraceRow{0, prompt, answer, "", {}});
    } else {
      ++out.filtered;
    }
  }

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_array_begin(error_code& ec) {
    ++depth;
    if (depth == 1) return true;
    if (depth == 2) return Stop(ec, "expected each element of the array to be a conversation object");
    if (depth == 3 && key == "conversations") in_turns = true;
    return true;
  }
  bool on_array_end(std::size_t, error_code&) {
    if (depth == 3) in_turns = false;
    --depth;
    return true;
  }
  bool on_object_begin(error_code& ec) {
    ++depth;
    if (depth == 1) return Stop(ec, "expected a JSON array of conversations (ShareGPT's layout)");
    if (depth == 2) {
      if (out.conversations >= kMaxConversations) {
        return Stop(ec, fmt::format("more than {} conversations", kMaxConversations));
      }
      turns = 0;
      chars[0] = chars[1] = 0;
    }
    return true;
  }
  bool on_object_end(std::size_t, error_code&) {
    if (depth == 2) EndConversation();
    if (depth == 4 && in_turns) ++turns;
    --depth;
    return true;
  }
  bool on_key_part(string_view s, std::size_t n, error_code&) {
    if (n == s.size()) key.clear();
    if (key.size() < 64) key.append(s.data(), std::min<size_t>(s.size(), 64));
    return true;
  }
  bool on_key(string_view s, std::size_t n, error_code& ec) { return on_key_part(s, n, ec); }
  bool on_string_part(string_view s, std::size_t, error_code&) {
    if (depth == 4 && in_turns && key == "value" && turns < 2) chars[turns] += CodePoints(s);
    return true;
  }
  bool on_string(string_view s, std::size_t n, error_code& ec) { return on_string_part(s, n, ec); }
  bool on_number_part(string_view, error_code&) { return true; }
  bool on_int64(int64_t, string_view, error_code&) { return true; }
  bool on_uint64(uint64_t, string_view, error_code&) { return true; }
  bool on_double(double, string_view, error_code&) { return true; }
  bool on_bool(bool, error_code&) { return true; }
  bool on_null(error_code&) { return true; }
  bool on_comment_part(string_view, error_code&) { return true; }
  bool on_comment(string_view, error_code&) { return true; }
};

}  // namespace

bool IsJsonArrayFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  while (in.get(c)) {
    if (c == '[') return true;
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  }
  return false;
}

Result<ConversationLengths> ReadConversations(const std::string& path, const ConversationOptions& options) {
  // A token is a byte-level piece of at least a quarter of a code point (a CJK character in up to four
  // pieces) and rarely over ten characters: outside [0.25, 100] the figure is a typo, whose lengths
  // (characters over it) would run past any model's context or round to one token each.
  if (!(options.chars_per_token >= 0.25 && options.chars_per_token <= 100)) {
    return Status::InvalidArgument(
        fmt::format("characters per token must be 0.25 to 100, not {}", options.chars_per_token));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("cannot read conversations '{}'", path));
  boost::json::basic_parser<ConversationHandler> parser(boost::json::parse_options{});
  parser.handler().options = options;
  std::vector<char> block(1 << 20);
  error_code ec;
  int64_t offset = 0;
  while (!ec && (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0)) {
    offset += static_cast<int64_t>(parser.write_some(true, block.data(), static_cast<size_t>(in.gcount()), ec));
  }
  if (!ec) parser.write_some(false, nullptr, 0, ec);
  if (in.bad()) return Status::IoError(fmt::format("cannot read conversations '{}'", path));
  if (ec) {
    const std::string& why = parser.handler().error;
    return Status::InvalidArgument(
        fmt::format("{}: {} (near byte {})", path, why.empty() ? "not valid JSON: " + ec.message() : why, offset));
  }
  ConversationLengths out = std::move(parser.handler().out);
  if (out.rows.empty()) {
    return Status::InvalidArgument(fmt::format(
        "{}: no conversation with a prompt and an answer ({} conversations, {} of fewer than two turns, {} filtered)",
        path, out.conversations, out.too_short, out.filtered));
  }
  return out;
}

}  // namespace goodput
