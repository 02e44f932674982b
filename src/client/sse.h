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
  // Consumes `bytes` and appends every event they complete to `out`.
  void Feed(std::string_view bytes, std::vector<SseEvent>& out);
  // Bytes held for an unfinished line or event (for end-of-stream checks).
  bool HasPartial() const { return !line_.empty() || has_fields_; }

 private:
  void Line(std::string_view line, std::vector<SseEvent>& out);

  std::string line_;  // the unfinished line
  bool after_cr_ = false;
  SseEvent pending_;
  bool has_fields_ = false;
};

}  // namespace goodput::client
