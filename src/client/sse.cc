#include "client/sse.h"

namespace goodput::client {

void SseParser::Feed(std::string_view bytes, std::vector<SseEvent>& out) {
  for (const char c : bytes) {
    if (too_long_) return;
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n') continue;  // the LF of a CRLF
    }
    if (c == '\r' || c == '\n') {
      after_cr_ = c == '\r';
      Line(line_, out);
      line_.clear();
    } else {
      line_.push_back(c);
      if (line_.size() > kMaxLineBytes || pending_.data.size() + line_.size() > kMaxLineBytes) {
        too_long_ = true;
        line_.clear();
        pending_ = {};
      }
    }
  }
}

void SseParser::Line(std::string_view line, std::vector<SseEvent>& out) {
  if (line.empty()) {  // a blank line dispatches the event
    if (has_fields_) out.push_back(std::move(pending_));
    pending_ = {};
    has_fields_ = false;
    return;
  }
  if (line.front() == ':') return;  // comment
  const size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (has_fields_ && !pending_.data.empty()) pending_.data.push_back('\n');
    pending_.data.append(value);
    has_fields_ = true;
  } else if (field == "event") {
    pending_.event.assign(value);
    has_fields_ = true;
  }
  // `id`, `retry` and unknown fields do not matter to a measurement.
}

}  // namespace goodput::client
