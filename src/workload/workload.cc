#include "workload/workload.h"

#include <filesystem>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/json_file.h"
#include "core/units.h"
#include "workload/day_profile.h"
#include "workload/yaml_input.h"

namespace goodput {
namespace {

std::string Scalar(const YAML::Node& n) { return n.IsScalar() ? n.as<std::string>() : std::string(); }

template <typename T>
Result<T> Get(const YAML::Node& n, const std::string& where, const char* what) {
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    return YamlError(where, n,
                     fmt::format("'{}' must be {}", what, std::is_same_v<T, bool> ? "true or false" : "a number"));
  }
}

constexpr double kMinBurstiness = 1e-3, kMaxBurstiness = 1e4;

Status CheckLoadBounds(const YAML::Node& n, const std::string& where, std::optional<int> concurrency,
                       std::optional<double> rate) {
  if (concurrency && (*concurrency < 1 || *concurrency > kMaxConcurrency)) {
    return YamlError(where, n, fmt::format("'concurrency' must be 1 to {}", kMaxConcurrency));
  }
  if (rate && !(*rate >= kMinRate && *rate <= kMaxRate)) {
    return YamlError(where, n, fmt::format("'rate' must be {:g} to {:g} requests/s", kMinRate, kMaxRate));
  }
  return Status::Ok();
}

Result<Margin> ParseMargin(const YAML::Node& n, const std::string& where, const char* what) {
  Margin m;
  if (!n) return m;
  const std::string s = Scalar(n);
  if (!s.empty() && s.back() == '%') {
    try {
      m.fraction = std::stod(s.substr(0, s.size() - 1)) / 100.0;
    } catch (const std::exception&) {
      return YamlError(where, n, fmt::format("'{}' must be a share like 10% or a duration like 30s", what));
    }
    if (m.fraction < 0 || m.fraction >= 1) return YamlError(where, n, fmt::format("'{}' must be in [0%, 100%)", what));
    return m;
  }
  auto d = ParseDuration(s);
  if (!d.ok()) return YamlError(where, n, fmt::format("'{}': {}", what, d.status().message()));
  m.seconds = *d;
  return m;
}

Result<LengthDistribution> ParseLengths(const YAML::Node& n, const std::string& where, const std::string& base,
                                        const char* what) {
  if (!n) return YamlError(where, n, fmt::format("class needs '{}' lengths", what));
  if (n.IsMap() && n["file"]) {
    std::filesystem::path p = Scalar(n["file"]);
    if (p.is_relative()) p = std::filesystem::path(base) / p;
    return LengthDistribution::FromFile(p.string());
  }
  auto d = LengthDistribution::FromSpec(Scalar(n));
  if (!d.ok()) return YamlError(where, n, fmt::format("'{}': {}", what, d.status().message()));
  return d;
}

// "20ms", "0", "10ms-30ms" or "0-30ms" (the unit of the range's end serves a
// bare start): a think time, a closed-loop client's or a conversation's.
Result<ThinkTime> ParseThink(const YAML::Node& n, const std::string& where) {
  const std::string text = Scalar(n);
  const size_t dash = text.find('-', 1);
  const auto bad = [&] {
    return YamlError(
        where, n,
        fmt::format("'think' must be a duration or a range, e.g. 20ms or 10ms-30ms (or 0), of at most {:g} s",
                    kMaxThinkSeconds));
  };
  const std::string end = dash == std::string::npos ? "" : text.substr(dash + 1);
  std::string start = text.substr(0, dash);
  if (start.find_first_not_of("0123456789.") == std::string::npos) {  // a bare number: the end's unit, or 0
    start += end.empty() ? (start == "0" ? "s" : "") : end.substr(end.find_last_of("0123456789.") + 1);
  }
  const Result<double> lo = ParseDuration(start);
  const Result<double> hi = dash == std::string::npos ? lo : ParseDuration(end);
  if (!lo.ok() || !hi.ok() || !(*lo >= 0) || !(*hi >= *lo) || !(*hi <= kMaxThinkSeconds)) return bad();
  return ThinkTime{*lo, *hi};
}

// "session: {turns: fixed:4, think: 5s}": turns at least 1 (at most
// kMaxSessionTurns), think as ParseThink reads it.
Result<SessionSpec> ParseSession(const YAML::Node& n, const std::string& at) {
  if (!n.IsMap() || !n["turns"]) {
    return YamlError(at, n, "'session' needs 'turns' (e.g. {turns: fixed:4, think: 5s})");
  }
  SessionSpec s;
  auto turns = LengthDistribution::FromSpec(Scalar(n["turns"]));
  if (!turns.ok()) return YamlError(at, n["turns"], "'turns': " + turns.status().message());
  if (turns->Max() > kMaxSessionTurns) {
    return YamlError(at, n["turns"], fmt::format("'turns' may be at most {} a conversation", kMaxSessionTurns));
  }
  s.turns = std::move(*turns);
  if (n["think"]) {
    GOODPUT_ASSIGN_OR_RETURN(s.think, ParseThink(n["think"], at));
  }
  return s;
}

// The longest prompt a class can send: its prefix and longest message, and
// in a conversation's last turn every earlier message and answer too.
int64_t LongestPrompt(const RequestClass& c) {
  const int64_t turns = c.session ? c.session->turns.Max() : 1;
  return c.prefix_tokens + turns * c.prompt.Max() + (turns - 1) * c.output.Max();
}

Result<RequestClass> ParseClassBody(const YAML::Node& n, const std::string& at, const std::string& base,
                                    RequestClass c) {
  if (n["share"]) {
    GOODPUT_ASSIGN_OR_RETURN(c.share, Get<double>(n["share"], at, "share"));
  }
  if (c.share < 0) return YamlError(at, n["share"], "'share' must be >= 0");
  if (n["rate"]) {
    GOODPUT_ASSIGN_OR_RETURN(c.rate, Get<double>(n["rate"], at, "rate"));
  }
  if (n["concurrency"]) {
    GOODPUT_ASSIGN_OR_RETURN(c.concurrency, Get<int>(n["concurrency"], at, "concurrency"));
  }
  GOODPUT_RETURN_IF_ERROR(CheckLoadBounds(n, at, c.concurrency, c.rate));
  if (n["profile"]) {
    GOODPUT_ASSIGN_OR_RETURN(c.profile, ParseRateProfile(n["profile"], at));
  }
  if (c.share == 0 && !c.rate && !c.concurrency && c.profile.empty()) {
    return YamlError(at, n["share"],
                     "'share' is 0: the class would never get a request (remove it, or give it a share)");
  }
  if (n["priority"]) {
    GOODPUT_ASSIGN_OR_RETURN(c.priority, Get<int>(n["priority"], at, "priority"));
  }
  if (n["offline"]) {
    GOODPUT_ASSIGN_OR_RETURN(c.offline, Get<bool>(n["offline"], at, "offline"));
  }
  if (const YAML::Node p = n["prefix"]) {  // "prefix: 512" or "prefix: {tokens: 512, groups: 4}"
    const YAML::Node tokens = p.IsMap() ? p["tokens"] : p;
    if (!tokens) return YamlError(at, p, "'prefix' needs 'tokens'");
    GOODPUT_ASSIGN_OR_RETURN(c.prefix_tokens, Get<int64_t>(tokens, at, "prefix tokens"));
    if (p.IsMap() && p["groups"]) {
      GOODPUT_ASSIGN_OR_RETURN(c.prefix_groups, Get<int>(p["groups"], at, "prefix groups"));
    }
    if (c.prefix_tokens < 1 || c.prefix_groups < 1)
      return YamlError(at, p, "'prefix' tokens and groups must be positive");
    if (c.prefix_tokens > kMaxTokenLength) {
      return YamlError(at, p, fmt::format("'prefix' may be at most {} tokens (16M)", kMaxTokenLength));
    }
  }
  if (const YAML::Node s = n["session"]) {
    GOODPUT_ASSIGN_OR_RETURN(c.session, ParseSession(s, at));
  }
  GOODPUT_ASSIGN_OR_RETURN(c.prompt, ParseLengths(n["prompt"], at, base, "prompt"));
  GOODPUT_ASSIGN_OR_RETURN(c.output, ParseLengths(n["output"], at, base, "output"));
  if (const int64_t longest = LongestPrompt(c); longest > kMaxTokenLength) {
    return YamlError(at, n,
                     fmt::format("its longest prompt ({}) would be {} tokens, over the limit of {} (16M)",
                                 c.session ? "prefix, message and, at the last turn, every earlier message and answer"
                                           : "prefix and message",
                                 longest, kMaxTokenLength));
  }
  if (n["slo"]) {
    if (c.offline) return YamlError(at, n["slo"], "an offline class has no SLO");
    auto slo = ParseSlo(c.name + ": " + Scalar(n["slo"]));
    if (!slo.ok()) return YamlError(at, n["slo"], slo.status().message());
    c.slo = slo->classes[0];
  }
  return c;
}

// Errors read "file:line: class 'name': what".
Result<RequestClass> ParseClass(const YAML::Node& n, const std::string& where, const std::string& base) {
  RequestClass c;
  if (!n.IsMap() || !n["name"]) return YamlError(where, n, "each class needs a 'name'");
  c.name = Scalar(n["name"]);
  auto parsed = ParseClassBody(n, where, base, c);
  if (parsed.ok()) return parsed;
  std::string msg = parsed.status().message();
  const size_t colon = msg.find(": ", where.size());
  msg.insert(colon == std::string::npos ? 0 : colon + 2, fmt::format("class '{}': ", c.name));
  return Status::InvalidArgument(msg);
}

Result<ArrivalSpec> ParseArrival(const YAML::Node& n, const std::string& where) {
  ArrivalSpec a;
  if (!n) return a;
  if (!n.IsMap()) return YamlError(where, n, "'arrival' must be a mapping, e.g. {type: poisson, rate: 4}");
  const std::string type = n["type"] ? Scalar(n["type"]) : "closed";
  const std::optional<ArrivalKind> kind = ArrivalKindFromName(type);
  if (!kind) {
    return YamlError(where, n["type"],
                     fmt::format("unknown arrival type '{}' (closed, poisson, gamma, trace, batch)", type));
  }
  a.kind = *kind;
  if (n["concurrency"]) {
    GOODPUT_ASSIGN_OR_RETURN(a.concurrency, Get<int>(n["concurrency"], where, "concurrency"));
  }
  if (n["rate"]) {
    GOODPUT_ASSIGN_OR_RETURN(a.rate, Get<double>(n["rate"], where, "rate"));
  }
  if (n["burstiness"]) {
    GOODPUT_ASSIGN_OR_RETURN(a.burstiness, Get<double>(n["burstiness"], where, "burstiness"));
  }
  GOODPUT_RETURN_IF_ERROR(CheckLoadBounds(n, where, a.concurrency, a.rate));
  if (!(a.burstiness >= kMinBurstiness && a.burstiness <= kMaxBurstiness)) {
    return YamlError(where, n, fmt::format("'burstiness' must be {:g} to {:g}", kMinBurstiness, kMaxBurstiness));
  }
  return a;
}

Status ParseTop(const YAML::Node& root, const std::string& where, Workload& w) {
  if (root["name"]) w.name = Scalar(root["name"]);
  if (root["seed"]) {
    GOODPUT_ASSIGN_OR_RETURN(w.seed, Get<uint64_t>(root["seed"], where, "seed"));
  }
  if (root["requests"]) {
    GOODPUT_ASSIGN_OR_RETURN(w.requests, Get<int64_t>(root["requests"], where, "requests"));
  }
  if (w.requests < 1 || w.requests > kMaxRequests) {
    return YamlError(where, root["requests"], fmt::format("'requests' must be 1 to {}", kMaxRequests));
  }
  GOODPUT_ASSIGN_OR_RETURN(w.warmup, ParseMargin(root["warmup"], where, "warmup"));
  GOODPUT_ASSIGN_OR_RETURN(w.cooldown, ParseMargin(root["cooldown"], where, "cooldown"));
  if (w.warmup.fraction + w.cooldown.fraction >= 1)
    return YamlError(where, root, "warmup and cooldown leave nothing to measure");
  GOODPUT_ASSIGN_OR_RETURN(w.arrival, ParseArrival(root["arrival"], where));
  if (root["arrival"] && root["arrival"].IsMap() && root["arrival"]["think"]) {
    GOODPUT_ASSIGN_OR_RETURN(w.client_think, ParseThink(root["arrival"]["think"], where));
  }
  if (const YAML::Node step = root["profile_step"]) {
    auto d = ParseDuration(Scalar(step));
    if (!d.ok() || !(*d > 0)) {
      return YamlError(where, step, "'profile_step' must be a positive duration, e.g. 1h or 10m");
    }
    w.profile_step_s = *d;
  }
  return Status::Ok();
}

}  // namespace

const char* ArrivalKindName(ArrivalKind k) {
  switch (k) {
    case ArrivalKind::kClosedLoop: return "closed";
    case ArrivalKind::kPoisson: return "poisson";
    case ArrivalKind::kGamma: return "gamma";
    case ArrivalKind::kTrace: return "trace";
    case ArrivalKind::kBatch: return "batch";
    case ArrivalKind::kProfile:
      return "profile";
  }
  return "?";
}

std::optional<ArrivalKind> ArrivalKindFromName(const std::string& name) {
  for (ArrivalKind k : {ArrivalKind::kClosedLoop, ArrivalKind::kPoisson, ArrivalKind::kGamma, ArrivalKind::kTrace,
                        ArrivalKind::kBatch, ArrivalKind::kProfile}) {
    if (name == ArrivalKindName(k)) return k;
  }
  return std::nullopt;
}

SloSpec Workload::Slo() const {
  SloSpec s;
  for (const auto& c : classes) {
    if (c.slo) s.classes.push_back(*c.slo);
  }
  return s;
}

int Workload::ClassIndex(const std::string& name) const {
  for (size_t i = 0; i < classes.size(); ++i) {
    if (classes[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// The workload in `text`; yaml-cpp may throw (see ParseWorkload).
static Result<Workload> ParseWorkloadNodes(const std::string& text, const std::string& where,
                                           const std::string& base_dir) {
  GOODPUT_ASSIGN_OR_RETURN(const YAML::Node root,
                           ParseYamlMapping(text, where, "a workload is a mapping with 'classes'"));
  Workload w;
  GOODPUT_RETURN_IF_ERROR(ParseTop(root, where, w));
  const YAML::Node classes = root["classes"];
  if (!classes || !classes.IsSequence() || classes.size() == 0) {
    return Status::InvalidArgument(where + ": 'classes' must list at least one request class");
  }
  for (const auto& n : classes) {
    GOODPUT_ASSIGN_OR_RETURN(RequestClass c, ParseClass(n, where, base_dir));
    if (w.ClassIndex(c.name) >= 0) return YamlError(where, n, fmt::format("class '{}' appears twice", c.name));
    w.classes.push_back(std::move(c));
  }
  GOODPUT_RETURN_IF_ERROR(FinishProfile(root, where, static_cast<bool>(root["requests"]), w));
  if (w.arrival.kind == ArrivalKind::kTrace) {
    const YAML::Node file = root["arrival"]["file"];
    if (!file) return YamlError(where, root["arrival"], "a trace arrival needs 'file'");
    std::filesystem::path p = Scalar(file);
    if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
    bool skip_empty = false;
    if (const YAML::Node skip = root["arrival"]["skip_empty"]) {
      GOODPUT_ASSIGN_OR_RETURN(skip_empty, Get<bool>(skip, where, "skip_empty"));
    }
    GOODPUT_ASSIGN_OR_RETURN(w.trace, ReadTrace(p.string(), skip_empty));
    for (const auto& r : w.trace) {
      if (!r.request_class.empty() && w.ClassIndex(r.request_class) < 0) {
        return Status::InvalidArgument(fmt::format("{}: the trace names class '{}', which the workload lacks", where,
                                                   r.request_class));
      }
    }
  }
  return w;
}

Result<Workload> ParseWorkload(const std::string& text, const std::string& where, const std::string& base_dir) {
  // Each lookup checks its node's type; this catch is for one a check missed
  // (yaml-cpp throws where a scalar is indexed), so bad input never aborts.
  try {
    return ParseWorkloadNodes(text, where, base_dir);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: unexpected YAML shape ({})", where, e.mark.line + 1, e.msg));
  }
}

Result<Workload> LoadWorkload(const std::string& path) {
  GOODPUT_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path, "workload"));
  return ParseWorkload(text, path, std::filesystem::path(path).parent_path().string());
}

Status ApplySlo(Workload& w, const SloSpec& slo) {
  for (const auto& c : slo.classes) {
    if (c.class_name != "*" && w.ClassIndex(c.class_name) < 0) {
      std::string known;
      for (const auto& k : w.classes) known += (known.empty() ? "" : ", ") + k.name;
      return Status::InvalidArgument(
          fmt::format("the SLO names class '{}', which the workload lacks (classes: {})", c.class_name, known));
    }
  }
  for (auto& c : w.classes) {
    const ClassSlo* s = slo.For(c.name);
    if (!s || (c.offline && s->class_name == "*")) continue;
    c.slo = *s;
    c.slo->class_name = c.name;
  }
  return Status::Ok();
}

Workload ForRepetition(const Workload& w, uint64_t repetition) {
  Workload out = w;
  out.seed = w.seed + repetition - 1;
  return out;
}

Workload FixedLengthWorkload(int64_t requests, int64_t prompt_tokens, int64_t output_tokens,
                             const std::string& class_name) {
  Workload w;
  w.name = "fixed";
  w.requests = requests;
  RequestClass c;
  c.name = class_name;
  c.prompt = *LengthDistribution::FromSpec("fixed:" + std::to_string(prompt_tokens));
  c.output = *LengthDistribution::FromSpec("fixed:" + std::to_string(output_tokens));
  w.classes.push_back(std::move(c));
  return w;
}

}  // namespace goodput
