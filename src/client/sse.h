// Server-sent events (the WHATWG EventSource format that OpenAI streams use),
// parsed incrementally: bytes arrive in arbitrary pieces, an event may be
// split across reads and one read may hold several events. Comments (lines
// starting with ':') are skipped; CRLF, LF and CR line ends are accepted; the
// `data:` lines of one event are joined with '\n'.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace goodput::client {

struct SseEvent {
  std::string event;  // the `event:` field; empty for the default "message"
  std::string data;
};

class SseParser {
 public:
  // Lines and events longer than this are refused (a stream is not allowed
  // to grow the client's memory without bound).
  static constexpr size_t kMaxLineBytes = size_t{1} << 20;

  // Consumes `bytes` and appends every event they complete to `out`. Once a
  // line or an event exceeds kMaxLineBytes, too_long() is true and the
  // parser takes nothing more.
  void Feed(std::string_view bytes, std::vector<SseEvent>& out);
  bool too_long() const { return too_long_; }
  // Bytes held for an unfinished line or event (for end-of-stream checks).
  bool HasPartial() const { return !line_.empty() || has_fields_; }

 private:
  void Line(std::string_view line, std::vector<SseEvent>& out);

  std::string line_;  // the unfinished line
  bool after_cr_ = false;
  SseEvent pending_;
  bool has_fields_ = false;
  bool too_long_ = false;
};

}  // namespace goodput::client
