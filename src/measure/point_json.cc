#include "measure/point_json.h"

#include <limits>
#include <utility>

#include <boost/json.hpp>

#include "core/json_file.h"

namespace goodput {
namespace json = boost::json;
namespace {

// [lower, upper]; a side that is not finite is null (JsonNumber).
json::array IntervalJson(const Interval& i) { return json::array{JsonNumber(i.lower), JsonNumber(i.upper)}; }

// A figure that could not be measured is null (JsonNumber); so is the
// unbounded side of a percentile's interval, which the count tells apart.
json::object LatencyJson(const LatencyStats& s) {
  json::array distribution;
  for (auto [percentile, value] : s.distribution) distribution.push_back(json::array{percentile, JsonNumber(value)});
  return json::object{{"p50_s", JsonNumber(s.p50)},
                      {"p90_s", JsonNumber(s.p90)},
                      {"p99_s", JsonNumber(s.p99)},
                      {"mean_s", JsonNumber(s.mean)},
                      {"count", s.count},
                      {"p50_interval_s", IntervalJson(s.p50_interval)},
                      {"p99_interval_s", IntervalJson(s.p99_interval)},
                      {"distribution_s", std::move(distribution)}};
}

// A windowed class's windows, each {"good": G, "requests": N}, in order.
json::array WindowCountsJson(const ClassAttainment& c) {
  json::array out;
  for (const auto& [good, total] : c.window_counts) out.push_back(json::object{{"good", good}, {"requests", total}});
  return out;
}

json::object ClassJson(const ClassAttainment& c) {
  return json::object{{"class", c.class_name},
                      {"has_slo", c.has_slo},
                      {"offline", c.offline},
                      {"requests", c.total},
                      {"good", c.good},
                      {"attainment", JsonNumber(c.attainment)},
                      {"interval", IntervalJson(c.interval)},
                      {"required", JsonNumber(c.required)},
                      {"min_requests", c.min_requests},
                      {"window_s", JsonNumber(c.window_s)},
                      {"worst_window", c.worst_window},
                      {"judged_window", c.judged_window},
                      {"window_counts", WindowCountsJson(c)},
                      {"verdict", VerdictName(c.verdict)},
                      {"holds", c.holds()},
                      {"throughput_tokens_per_s", JsonNumber(c.throughput)},
                      {"slo_margin", JsonNumber(c.slo_margin)},
                      {"slo_worst", c.slo_worst}};
}

// Readers for a parsed summary: a missing or null field keeps the default;
// a field of the wrong type is an error.
struct Reader {
  const json::object& o;
  std::string error;

  void Number(const char* key, double& out) {
    const json::value* v = o.if_contains(key);
    if (!v || v->is_null()) return;
    if (v->is_number()) out = v->to_number<double>();
    else error = std::string("'") + key + "' is not a number";
  }
  void Int(const char* key, int64_t& out) {
    double d = static_cast<double>(out);
    Number(key, d);
    out = static_cast<int64_t>(d);
  }
  void Text(const char* key, std::string& out) {
    const json::value* v = o.if_contains(key);
    if (!v || v->is_null()) return;
    if (v->is_string()) out = std::string(v->as_string());
    else error = std::string("'") + key + "' is not a string";
  }
  void Bool(const char* key, bool& out) {
    const json::value* v = o.if_contains(key);
    if (v && v->is_bool()) out = v->as_bool();
  }
  const json::object* Object(const char* key) {
    const json::value* v = o.if_contains(key);
    return v && v->is_object() ? &v->as_object() : nullptr;
  }
  const json::array* Array(const char* key) {
    const json::value* v = o.if_contains(key);
    return v && v->is_array() ? &v->as_array() : nullptr;
  }
};

Verdict VerdictFrom(const std::string& name, bool holds) {
  for (Verdict v : {Verdict::kHolds, Verdict::kFails, Verdict::kUndecided, Verdict::kNoData}) {
    if (name == VerdictName(v)) return v;
  }
  return holds ? Verdict::kHolds : Verdict::kFails;  // summaries written before verdicts
}

// [[percentile, value], ...] with percentiles rising within [0, 100]; absent
// in summaries written before it.
std::string ReadDistribution(const json::array* a, std::vector<std::pair<double, double>>& out) {
  if (!a) return "";
  for (const json::value& v : *a) {
    const json::array* pair = v.if_array();
    if (!pair || pair->size() != 2 || !(*pair)[0].is_number() || !(*pair)[1].is_number()) {
      return "'distribution_s' holds an entry that is not [percentile, value]";
    }
    const double percentile = (*pair)[0].to_number<double>();
    if (!(percentile >= 0 && percentile <= 100) || (!out.empty() && percentile <= out.back().first)) {
      return "'distribution_s' percentiles must rise within 0-100";
    }
    out.emplace_back(percentile, (*pair)[1].to_number<double>());
  }
  return "";
}

std::string ReadLatency(const json::object* o, LatencyStats& s) {
  if (!o) return "";
  Reader r{*o, ""};
  r.Number("p50_s", s.p50);
  r.Number("p90_s", s.p90);
  r.Number("p99_s", s.p99);
  r.Number("mean_s", s.mean);
  r.Int("count", s.count);
  // Over a sample (count > 0) a null side is unbounded; without one, no value.
  const double open = s.count > 0 ? std::numeric_limits<double>::infinity() : kNoValue;
  for (auto [key, interval] : {std::pair{"p50_interval_s", &s.p50_interval}, {"p99_interval_s", &s.p99_interval}}) {
    const json::array* i = r.Array(key);
    if (!i || i->size() != 2) continue;
    const auto side = [](const json::value& v, double unbounded) {
      return v.is_number() ? v.to_number<double>() : unbounded;
    };
    *interval = Interval{side((*i)[0], -open), side((*i)[1], open)};
  }
  return r.error.empty() ? ReadDistribution(r.Array("distribution_s"), s.distribution) : r.error;
}

std::string ReadClass(const json::value& v, ClassAttainment& c) {
  if (!v.is_object()) return "a class entry is not an object";
  Reader r{v.as_object(), ""};
  r.Text("class", c.class_name);
  r.Bool("has_slo", c.has_slo);
  r.Bool("offline", c.offline);
  r.Int("requests", c.total);
  r.Int("good", c.good);
  r.Number("attainment", c.attainment);
  r.Number("required", c.required);
  r.Int("min_requests", c.min_requests);
  r.Number("window_s", c.window_s);  // absent in points stored before windows: none
  int64_t worst = c.worst_window;
  r.Int("worst_window", worst);
  c.worst_window = static_cast<int>(worst);
  int64_t judged = c.judged_window;  // absent before "over peak": every window
  r.Int("judged_window", judged);
  c.judged_window = static_cast<int>(judged);
  if (const json::array* counts = r.Array("window_counts")) {
    for (const json::value& w : *counts) {
      if (!w.is_object()) continue;
      Reader wr{w.as_object(), ""};
      int64_t good = 0, total = 0;
      wr.Int("good", good);
      wr.Int("requests", total);
      c.window_counts.emplace_back(good, total);
    }
  }
  r.Number("throughput_tokens_per_s", c.throughput);
  r.Number("slo_margin", c.slo_margin);
  r.Text("slo_worst", c.slo_worst);
  if (const json::array* i = r.Array("interval"); i && i->size() == 2 && (*i)[0].is_number() && (*i)[1].is_number()) {
    c.interval = Interval{(*i)[0].to_number<double>(), (*i)[1].to_number<double>()};
  }
  bool holds = true;
  r.Bool("holds", holds);
  std::string verdict;
  r.Text("verdict", verdict);
  c.verdict = c.has_slo ? VerdictFrom(verdict, holds) : Verdict::kHolds;
  return r.error;
}

}  // namespace

json::value PointToJson(const PointResult& p) {
  json::array classes;
  for (const auto& c : p.classes) classes.push_back(ClassJson(c));
  json::object point{
      {"load", p.label},
      {"arrival", ArrivalKindName(p.load.kind)},
      {"concurrency", p.load.concurrency},
      {"rate", p.load.rate},
      {"repeats", p.repeats},
      {"throughput_tokens_per_s", JsonNumber(p.throughput)},
      {"requests_per_s", JsonNumber(p.request_rate)},
      {"per_request_tokens_per_s", JsonNumber(p.per_request_speed)},
      {"ttft_p50_s", JsonNumber(p.ttft.p50)},
      {"ttft_p99_s", JsonNumber(p.ttft.p99)},
      {"tpot_p50_s", JsonNumber(p.tpot.p50)},
      {"tpot_p99_s", JsonNumber(p.tpot.p99)},
      {"latency", json::object{{"ttft", LatencyJson(p.ttft)},
                               {"tpot", LatencyJson(p.tpot)},
                               {"itl", LatencyJson(p.itl)},
                               {"e2e", LatencyJson(p.e2e)}}},
      {"goodput_requests_per_s", JsonNumber(p.goodput)},
      {"goodput_tokens_per_s", JsonNumber(p.goodput_tokens)},
      {"throughput_spread", JsonNumber(p.throughput_spread)},
      {"preemptions", JsonNumber(p.preemptions)},
      {"rejected", JsonNumber(p.rejected)},
      {"steps", JsonNumber(p.steps)},
      {"classes", classes},
      {"slo_margin", JsonNumber(p.slo_margin)},
      {"verdict", p.verdict_text()},
      {"holds", p.holds()},
      {"saturation", json::object{{"saturated", p.saturation.saturated},
                                  {"offered_requests_per_s", JsonNumber(p.saturation.offered_rate)},
                                  {"backlog_growth_requests_per_s", JsonNumber(p.saturation.backlog_growth)},
                                  {"served_share", JsonNumber(p.saturation.served_share)},
                                  {"ttft_slope", JsonNumber(p.saturation.ttft_slope)}}},
      {"failed", JsonNumber(p.failed)},
      {"top_error", p.top_error},
      {"send_lag_p99_s", JsonNumber(p.send_lag_p99)},
      {"usage_mismatch", JsonNumber(p.usage_mismatch)},
      {"request_notes", json::value_from(p.request_notes)}};
  // Gamma arrivals are their shape as much as their rate (a constant profile
  // is shape 1000): without it a stored point reads back as Poisson.
  if (p.load.kind == ArrivalKind::kGamma) point["burstiness"] = p.load.burstiness;
  if (p.host_others_share) point["host_others_share"] = *p.host_others_share;
  if (const auto& sd = p.spec_decode) {
    point["spec_decode"] = json::object{{"drafts", sd->drafts},
                                        {"draft_tokens", sd->draft_tokens},
                                        {"accepted_tokens", sd->accepted_tokens},
                                        {"acceptance", sd->acceptance()},
                                        {"mean_acceptance_length", sd->mean_acceptance_length()}};
  }
  if (const auto& pc = p.prefix_cache) {
    point["prefix_cache"] =
        json::object{{"queried_tokens", pc->queries}, {"hit_tokens", pc->hits}, {"hit_rate", pc->hit_rate()}};
  }
  if (!p.replicas.empty()) {
    json::array replicas;
    for (const ReplicaCounts& r : p.replicas) {
      replicas.push_back(json::object{{"requests", r.requests},
                                      {"steps", r.steps},
                                      {"prefix_queried_tokens", r.prefix_cache.queries},
                                      {"prefix_hit_tokens", r.prefix_cache.hits},
                                      {"prefill", r.prefill}});
    }
    point["replicas"] = std::move(replicas);
  }
  return point;
}

Result<PointResult> PointFromJson(const std::string& text) {
  boost::system::error_code ec;
  const json::value v = json::parse(text, ec);
  if (ec) return Status::InvalidArgument("stored summary is not JSON: " + ec.message());
  if (!v.is_object()) return Status::InvalidArgument("stored summary is not a JSON object");
  PointResult p;
  Reader r{v.as_object(), ""};
  r.Text("load", p.label);
  std::string arrival;
  r.Text("arrival", arrival);
  p.load.kind = ArrivalKindFromName(arrival).value_or(ArrivalKind::kPoisson);
  r.Number("burstiness", p.load.burstiness);
  int64_t concurrency = p.load.concurrency, repeats = 0;
  r.Int("concurrency", concurrency);
  p.load.concurrency = static_cast<int>(concurrency);
  r.Number("rate", p.load.rate);
  r.Int("repeats", repeats);
  p.repeats = static_cast<int>(repeats);
  r.Number("throughput_tokens_per_s", p.throughput);
  r.Number("requests_per_s", p.request_rate);
  r.Number("per_request_tokens_per_s", p.per_request_speed);
  r.Number("ttft_p50_s", p.ttft.p50);
  r.Number("ttft_p99_s", p.ttft.p99);
  r.Number("tpot_p50_s", p.tpot.p50);
  r.Number("tpot_p99_s", p.tpot.p99);
  r.Number("goodput_requests_per_s", p.goodput);
  r.Number("goodput_tokens_per_s", p.goodput_tokens);
  r.Number("throughput_spread", p.throughput_spread);
  r.Number("preemptions", p.preemptions);
  r.Number("rejected", p.rejected);
  r.Number("steps", p.steps);
  r.Number("failed", p.failed);
  r.Text("top_error", p.top_error);
  r.Number("send_lag_p99_s", p.send_lag_p99);
  r.Number("usage_mismatch", p.usage_mismatch);
  r.Number("slo_margin", p.slo_margin);
  if (!r.error.empty()) return Status::InvalidArgument("stored summary: " + r.error);
  if (!(p.load.burstiness > 0)) return Status::InvalidArgument("stored summary: 'burstiness' must be positive");
  if (const json::object* lat = r.Object("latency")) {
    Reader l{*lat, ""};
    for (auto [key, stats] : {std::pair{"ttft", &p.ttft}, {"tpot", &p.tpot}, {"itl", &p.itl}, {"e2e", &p.e2e}}) {
      if (std::string e = ReadLatency(l.Object(key), *stats); !e.empty()) {
        return Status::InvalidArgument(std::string("stored summary: ") + key + ": " + e);
      }
    }
  }
  if (const json::array* cs = r.Array("classes")) {
    for (const json::value& c : *cs) {
      ClassAttainment a;
      if (std::string e = ReadClass(c, a); !e.empty()) return Status::InvalidArgument("stored summary: " + e);
      p.classes.push_back(a);
    }
  }
  if (const json::object* sd = r.Object("spec_decode")) {
    Reader s{*sd, ""};
    SpecDecodeCounts c;
    s.Number("drafts", c.drafts);
    s.Number("draft_tokens", c.draft_tokens);
    s.Number("accepted_tokens", c.accepted_tokens);
    if (!s.error.empty()) return Status::InvalidArgument("stored summary: spec_decode: " + s.error);
    p.spec_decode = c;
  }
  if (const json::object* pc = r.Object("prefix_cache")) {
    Reader s{*pc, ""};
    PrefixCacheCounts c;
    s.Number("queried_tokens", c.queries);
    s.Number("hit_tokens", c.hits);
    if (!s.error.empty()) return Status::InvalidArgument("stored summary: prefix_cache: " + s.error);
    p.prefix_cache = c;
  }
  if (const json::array* replicas = r.Array("replicas")) {
    for (const json::value& v : *replicas) {
      if (!v.is_object()) return Status::InvalidArgument("stored summary: replicas: each must be an object");
      Reader s{v.as_object(), ""};
      ReplicaCounts c;
      s.Number("requests", c.requests);
      s.Number("steps", c.steps);
      s.Number("prefix_queried_tokens", c.prefix_cache.queries);
      s.Number("prefix_hit_tokens", c.prefix_cache.hits);
      if (!s.error.empty()) return Status::InvalidArgument("stored summary: replicas: " + s.error);
      const json::value* prefill = v.as_object().if_contains("prefill");  // absent before disaggregation
      c.prefill = prefill && prefill->is_bool() && prefill->as_bool();
      p.replicas.push_back(c);
    }
  }
  if (const json::value* busy = r.o.if_contains("host_others_share"); busy && busy->is_number()) {
    p.host_others_share = busy->to_number<double>();
  }
  if (const json::array* notes = r.Array("request_notes")) {
    for (const json::value& n : *notes) {
      if (n.is_string()) p.request_notes.push_back(std::string(n.as_string()));
    }
  }
  bool holds = true;
  r.Bool("holds", holds);
  std::string verdict;
  r.Text("verdict", verdict);
  p.verdict = VerdictFrom(verdict, holds);
  if (const json::object* sat = r.Object("saturation")) {  // absent in summaries written before it
    Reader s{*sat, ""};
    s.Bool("saturated", p.saturation.saturated);
    s.Number("offered_requests_per_s", p.saturation.offered_rate);
    s.Number("backlog_growth_requests_per_s", p.saturation.backlog_growth);
    s.Number("served_share", p.saturation.served_share);
    s.Number("ttft_slope", p.saturation.ttft_slope);
    if (!s.error.empty()) return Status::InvalidArgument("stored summary: saturation: " + s.error);
  }
  return p;
}

}  // namespace goodput
