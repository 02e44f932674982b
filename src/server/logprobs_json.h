// OpenAI's logprobs objects for generated tokens: on /completions
// {"tokens", "token_logprobs", "top_logprobs", "text_offset"}, on chat
// {"content": [{"token", "logprob", "bytes", "top_logprobs"}]}. A token is
// its decoded bytes (invalid UTF-8 replaced; chat also gives the bytes); a
// log-probability too small for a double is -9999.0, as vLLM writes it.
#pragma once

#include <cstdint>
#include <vector>

#include <boost/json/value.hpp>

#include "engine/step.h"
#include "model/tokenizer.h"

namespace goodput::server {

// `text_offset` is where the first token's text starts in the completion;
// it is advanced past these tokens (for the next chunk of a stream).
boost::json::value CompletionLogprobs(const Tokenizer& tokenizer, const std::vector<int32_t>& ids,
                                      const std::vector<TokenLogprob>& logprobs, int64_t& text_offset);

boost::json::value ChatLogprobs(const Tokenizer& tokenizer, const std::vector<int32_t>& ids,
                                const std::vector<TokenLogprob>& logprobs);

}  // namespace goodput::server
