#include "client/response_reading.h"

#include <algorithm>

#include <fmt/format.h>

#include "client/openai_stream.h"
#include "core/asio_names.h"

namespace goodput::client {
using namespace goodput::asio_names;  // beast, http

std::string CutMessage(const ResponseReading& r) {
  return "closed mid-stream after " + std::to_string(r.counted) + " tokens";
}

namespace {

// Body bytes that arrived at `t`; "" or why the response is unusable.
std::string Consume(ResponseReading& r, std::string_view bytes, double t) {
  if (r.status != 200 || !r.sse) {
    r.text.append(bytes.substr(0, 300 - std::min<size_t>(300, r.text.size())));
    return "";
  }
  r.events.clear();
  r.sse_parser.Feed(bytes, r.events);
  if (r.sse_parser.too_long()) {
    return fmt::format("SSE line too long (over {} bytes) after {} tokens", SseParser::kMaxLineBytes, r.counted);
  }
  for (const SseEvent& e : r.events) {
    if (r.done) continue;
    auto c = ParseStreamChunk(e.data);
    if (!c.ok()) return c.status().message();
    r.done = c->done;
    r.finished = r.finished || c->finish_reason.has_value();
    int32_t tokens = c->tokens;
    if (tokens > 0 && !c->completion_tokens) r.usage_per_chunk = false;
    if (c->completion_tokens) {
      // Continuous usage: the count grew by what this chunk carries, its
      // text shown or not (0 when it only releases text of tokens counted
      // before, e.g. the rest of a UTF-8 character; N for tokens whose text
      // is held back or empty). A server that sends usage only at the end
      // counts one token per chunk with text — or, when no chunk had text,
      // its tokens at that end.
      const int64_t grew = *c->completion_tokens - (r.saw_usage ? r.rec.n_out : 0);
      if (r.usage_per_chunk) tokens = static_cast<int32_t>(std::max<int64_t>(0, grew));
      r.rec.n_out = *c->completion_tokens;
      r.saw_usage = true;
    }
    if (tokens > 0) {
      r.rec.chunks.push_back({t, tokens});
      if (!r.rec.t_first) r.rec.t_first = t;
      r.rec.t_last = t;
      r.counted += tokens;
    }
    if (c->prompt_tokens) r.rec.n_in = *c->prompt_tokens;
  }
  return "";
}

constexpr size_t kMaxUnparsedBytes = 64 << 10;

}  // namespace

std::string ParseReceived(ResponseParser& parser, beast::flat_buffer& buffer, ResponseReading& r, double t) {
  char chunk[16384];
  while (buffer.size() > 0 && !parser.is_done()) {
    const bool header_done = parser.is_header_done();
    if (header_done) {
      parser.get().body().data = chunk;
      parser.get().body().size = sizeof(chunk);
    }
    boost::system::error_code ec;
    buffer.consume(parser.put(buffer.data(), ec));
    if (ec == http::error::need_more) {
      // Beast waits for a whole chunk-size line (extensions included): a
      // server sending an endless one would have us buffer it all.
      if (buffer.size() > kMaxUnparsedBytes) {
        return fmt::format("bad HTTP response: over {} KiB without a complete chunk line", kMaxUnparsedBytes >> 10);
      }
      return "";
    }
    if (ec && ec != http::error::need_buffer) return "bad HTTP response: " + ec.message();
    if (!header_done && parser.is_header_done()) {
      r.status = parser.get().result_int();
      r.sse = parser.get()[http::field::content_type].starts_with("text/event-stream");
      continue;
    }
    if (header_done) {
      std::string err = Consume(r, std::string_view(chunk, sizeof(chunk) - parser.get().body().size), t);
      if (!err.empty()) return err;
    }
  }
  return "";
}

std::string FinishResponse(ResponseParser& parser, ResponseReading& r, bool& reusable) {
  reusable = parser.get().keep_alive();
  if (r.status != 200) return fmt::format("HTTP {}: {}", r.status, r.text);
  if (!r.sse) return "not an SSE stream (content-type '" + std::string(parser.get()[http::field::content_type]) + "')";
  // A fixed-length answer that ended cleanly with its finish reason (or all
  // its tokens) is whole, even without usage and [DONE].
  const bool whole = r.expected.fixed_length && (r.finished || r.counted >= r.expected.output_tokens);
  if (!r.done && !r.saw_usage && !whole) return CutMessage(r) + " (no [DONE])";
  std::vector<std::string> notes;
  if (!r.done) {
    notes.push_back(r.saw_usage ? "the stream ended cleanly after its usage chunk but without [DONE]"
                                : "the stream ended cleanly after its last token but without usage or [DONE]");
  }
  if (!r.saw_usage && r.expected.fixed_length) {
    r.rec.n_out = r.expected.output_tokens;
    notes.push_back("no usage chunk: output length from the fixed length asked");
  } else if (!r.saw_usage) {
    r.rec.n_out = r.counted;
    notes.push_back(
        "WARNING: no usage chunk: output tokens counted from chunks (a chunk may carry several "
        "tokens, so TPOT may be wrong)");
  }
  if (r.rec.n_out > r.counted && !r.rec.chunks.empty()) {
    // No running count told what each chunk carried: ITL per token is the
    // chunk gap over its share, and throughput counts every token.
    SpreadTokensOverChunks(r.rec.chunks, r.rec.n_out);
    notes.push_back("fewer chunks than tokens and no running usage: the tokens spread evenly over the chunks");
  }
  for (const std::string& n : notes) r.rec.note += (r.rec.note.empty() ? "" : "; ") + n;
  return "";
}

}  // namespace goodput::client
