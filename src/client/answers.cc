#include "client/answers.h"

#include <boost/json.hpp>
#include <fmt/format.h>

#include "client/openai_stream.h"
#include "workload/arrivals.h"

namespace goodput::client {
namespace json = boost::json;
namespace {

std::string Body(const AnswerOptions& o, const AnswerPrompt& p, bool logprobs) {
  json::object b{{"model", o.model}, {"max_tokens", o.max_tokens}, {"temperature", 0}, {"seed", o.seed}};
  if (o.chat) {
    const std::string text = p.token_ids.empty() ? p.text : ChatPromptText(p.token_ids);
    b["messages"] = json::array{json::object{{"role", "user"}, {"content", text}}};
    if (logprobs) {
      b["logprobs"] = true;
      b["top_logprobs"] = 0;
    }
  } else {
    if (p.token_ids.empty()) b["prompt"] = p.text;
    else b["prompt"] = json::value_from(p.token_ids);
    if (logprobs) b["logprobs"] = 0;
  }
  return json::serialize(b);
}

// A text's UTF-8 characters: the tokens of an answer that came without any.
std::vector<std::string> Characters(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    size_t n = 1;
    while (i + n < text.size() && (static_cast<unsigned char>(text[i + n]) & 0xC0) == 0x80) ++n;
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

double LogprobValue(const json::value& v) { return v.is_number() ? v.to_number<double>() : -9999.0; }

// Tokens and log-probabilities from OpenAI's logprobs object of one choice.
Status ReadLogprobs(const json::value& lp, bool chat, Answer& a) {
  if (chat) {
    const json::value* content = lp.is_object() ? lp.as_object().if_contains("content") : nullptr;
    if (!content || !content->is_array()) return Status::InvalidArgument("no logprobs.content list");
    for (const json::value& e : content->as_array()) {
      if (!e.is_object() || !e.as_object().contains("token") || !e.at("token").is_string()) {
        return Status::InvalidArgument("a logprobs.content entry without a token");
      }
      a.tokens.emplace_back(e.at("token").as_string());
      a.logprobs.push_back(e.as_object().contains("logprob") ? LogprobValue(e.at("logprob")) : -9999.0);
    }
    return Status::Ok();
  }
  const json::value* tokens = lp.is_object() ? lp.as_object().if_contains("tokens") : nullptr;
  const json::value* values = lp.is_object() ? lp.as_object().if_contains("token_logprobs") : nullptr;
  if (!tokens || !tokens->is_array() || !values || !values->is_array() ||
      tokens->as_array().size() != values->as_array().size()) {
    return Status::InvalidArgument("logprobs without matching 'tokens' and 'token_logprobs' lists");
  }
  for (size_t i = 0; i < tokens->as_array().size(); ++i) {
    const json::value& t = tokens->as_array()[i];
    if (!t.is_string()) return Status::InvalidArgument("a logprobs token that is not a string");
    a.tokens.emplace_back(t.as_string());
    a.logprobs.push_back(LogprobValue(values->as_array()[i]));
  }
  return Status::Ok();
}

Result<Answer> ParseAnswer(const std::string& body, bool chat, bool logprobs, const std::string& label) {
  boost::system::error_code ec;
  const json::value doc = json::parse(body, ec);
  const json::value* choices = !ec && doc.is_object() ? doc.as_object().if_contains("choices") : nullptr;
  if (!choices || !choices->is_array() || choices->as_array().empty() || !choices->as_array()[0].is_object()) {
    return Status::InvalidArgument(fmt::format("{}: the answer is not an OpenAI completion (no choices)", label));
  }
  const json::object& c = choices->as_array()[0].as_object();
  Answer a;
  a.prompt_label = label;
  const json::value* text =
      chat ? (c.contains("message") && c.at("message").is_object() ? c.at("message").as_object().if_contains("content")
                                                                   : nullptr)
           : c.if_contains("text");
  if (text && text->is_string()) a.text = std::string(text->as_string());
  const json::value* lp = c.if_contains("logprobs");
  if (logprobs && lp && !lp->is_null()) {
    if (Status st = ReadLogprobs(*lp, chat, a); !st.ok()) return st.WithContext(label);
  } else {
    a.tokens = Characters(a.text);
  }
  return a;
}

// The server turned log-probabilities down (a 400 or 422 that names them).
bool RefusesLogprobs(const HttpAnswer& r) {
  return (r.status == 400 || r.status == 422) && r.body.find("logprobs") != std::string::npos;
}

}  // namespace

std::vector<AnswerPrompt> FixedQuestions() {
  return {{"question 1", "What is the capital of France? Answer in one sentence.", {}},
          {"question 2", "Explain in two sentences why the sky is blue.", {}},
          {"question 3", "Write a Python function that returns the n-th Fibonacci number.", {}},
          {"question 4", "Translate 'good morning' into Korean, Japanese and Spanish.", {}},
          {"question 5", "List three reasons a server keeps a KV cache while generating text.", {}}};
}

std::vector<AnswerPrompt> WorkloadPrompts(const Workload& w, int n) {
  std::vector<AnswerPrompt> out;
  RequestGenerator gen(w, ArrivalSpec{ArrivalKind::kClosedLoop, 1, 1, 1});
  for (int i = 0; i < n; ++i) {
    auto item = gen.NextForClient(0, 0);
    if (!item) break;
    out.push_back(AnswerPrompt{fmt::format("workload request {}", i + 1), "", PromptTokenIds(*item, w.seed)});
  }
  return out;
}

Result<std::vector<Answer>> CollectAnswers(const AnswerOptions& o, const std::vector<AnswerPrompt>& prompts) {
  const std::string path = o.endpoint.api_prefix + (o.chat ? "/chat/completions" : "/completions");
  bool logprobs = true;
  std::vector<Answer> out;
  for (const AnswerPrompt& p : prompts) {
    if (o.stop && o.stop()) return Status::FailedPrecondition("interrupted");
    GOODPUT_ASSIGN_OR_RETURN(HttpAnswer r,
                             HttpPost(o.endpoint, path, Body(o, p, logprobs), o.timeout_s, o.insecure_tls));
    if (logprobs && RefusesLogprobs(r)) {
      logprobs = false;  // compared by character from here on
      GOODPUT_ASSIGN_OR_RETURN(r, HttpPost(o.endpoint, path, Body(o, p, false), o.timeout_s, o.insecure_tls));
    }
    if (r.status != 200) {
      return Status::IoError(fmt::format("{}: HTTP {}: {}", p.label, r.status, r.body.substr(0, 300)));
    }
    GOODPUT_ASSIGN_OR_RETURN(Answer a, ParseAnswer(r.body, o.chat, logprobs, p.label));
    out.push_back(std::move(a));
  }
  if (!logprobs) {
    for (Answer& a : out) {  // answers from before the refusal had none either way
      a.logprobs.clear();
      a.tokens = Characters(a.text);
    }
  }
  return out;
}

}  // namespace goodput::client
