// Reading one streamed completion as its bytes arrive: the HTTP response is
// parsed incrementally, each SSE chunk's tokens are timed when the bytes that
// carried them were received, and the finished response is judged (whole,
// cut off, an error status, not a stream). The load generator does the I/O;
// this is what it makes of the bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "client/sse.h"
#include "core/request_record.h"

namespace goodput::client {

// What the request asked for: how the output length is known without usage.
struct ExpectedOutput {
  int64_t output_tokens = 0;
  bool fixed_length = true;
};

// What the response has said so far; tokens go into `rec` as they arrive.
struct ResponseReading {
  ResponseReading(RequestRecord& r, ExpectedOutput e) : rec(r), expected(e) {}
  RequestRecord& rec;
  ExpectedOutput expected;
  unsigned status = 0;
  bool sse = false;
  bool any_byte = false;  // something of the response arrived
  std::string text;       // the start of an error or non-SSE body
  SseParser sse_parser;
  std::vector<SseEvent> events;
  bool done = false;
  bool finished = false;  // a choice's finish_reason arrived
  bool saw_usage = false;
  bool usage_per_chunk = true;  // every token chunk so far carried usage (continuous_usage_stats)
  int64_t counted = 0;          // tokens in the chunks so far
};

using ResponseParser = boost::beast::http::response_parser<boost::beast::http::buffer_body>;

// "closed mid-stream after N tokens".
std::string CutMessage(const ResponseReading& r);

// Parses what `buffer` holds, bytes received at `t`: "" or the failure
// (a bad HTTP response, an SSE line or a chunk-size line too long, a chunk
// that is not a completion chunk).
std::string ParseReceived(ResponseParser& parser, boost::beast::flat_buffer& buffer, ResponseReading& r, double t);

// The verdict on a complete response: "" or why it is not a good answer;
// `reusable` says whether the connection can carry another request. Notes
// on how the output length was known go into the record.
std::string FinishResponse(ResponseParser& parser, ResponseReading& r, bool& reusable);

}  // namespace goodput::client
