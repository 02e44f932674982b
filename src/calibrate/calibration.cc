#include "calibrate/calibration.h"

#include <algorithm>
#include <cmath>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/json_file.h"

namespace goodput {
namespace json = boost::json;
namespace {

struct Reader {
  const json::object& o;
  std::string where;
  Status status = Status::Ok();

  double Number(const char* key, double fallback, bool required = false) {
    const json::value* v = o.if_contains(key);
    if (!v || v->is_null()) {
      if (required && status.ok()) status = Status::InvalidArgument(fmt::format("{}: '{}' is required", where, key));
      return fallback;
    }
    if (!v->is_number()) {
      if (status.ok()) status = Status::InvalidArgument(fmt::format("{}: '{}' must be a number", where, key));
      return fallback;
    }
    return v->to_number<double>();
  }
  std::string Text(const char* key) {
    const json::value* v = o.if_contains(key);
    if (v && !v->is_null() && !v->is_string() && status.ok()) {
      status = Status::InvalidArgument(fmt::format("{}: '{}' must be a string", where, key));
    }
    return v && v->is_string() ? std::string(v->as_string()) : "";
  }
  const json::object* Object(const char* key) {
    const json::value* v = o.if_contains(key);
    if (v && v->is_object()) return &v->as_object();
    if (status.ok()) status = Status::InvalidArgument(fmt::format("{}: '{}' must be an object", where, key));
    return nullptr;
  }
};

// One field per line, two spaces per level: the file is read and diffed by
// people, and Boost.JSON serializes on one line only. Arrays of numbers stay
// on one line.
std::string PrettyJson(const json::value& v, int depth) {
  const std::string pad(2 * (depth + 1), ' '), end(2 * depth, ' ');
  if (v.is_object()) {
    if (v.as_object().empty()) return "{}";
    std::string s = "{\n";
    bool first = true;
    for (const auto& [key, value] : v.as_object()) {
      s += (first ? "" : ",\n") + pad + json::serialize(json::value(key)) + ": " + PrettyJson(value, depth + 1);
      first = false;
    }
    return s + "\n" + end + "}";
  }
  if (v.is_array()) {
    const json::array& a = v.as_array();
    const bool flat = std::all_of(a.begin(), a.end(), [](const json::value& e) { return !e.is_structured(); });
    if (flat) {
      std::string s = "[";
      for (size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + PrettyJson(a[i], depth + 1);
      return s + "]";
    }
    std::string s = "[\n";
    for (size_t i = 0; i < a.size(); ++i) s += (i ? ",\n" : "") + pad + PrettyJson(a[i], depth + 1);
    return s + "\n" + end + "]";
  }
  if (v.is_double()) return fmt::format("{:.6g}", v.as_double());  // "0.6", not Boost's "6E-1"
  return json::serialize(v);
}

json::object LoopTimeToJson(const LoopTime& t) {
  json::array spread;
  for (double r : t.spread) spread.push_back(JsonNumber(r));
  return json::object{{"base_s", JsonNumber(t.base_s)},
                      {"per_request_s", JsonNumber(t.per_request_s)},
                      {"per_rank_s", JsonNumber(t.per_rank_s)},
                      {"spread", spread}};
}

json::value EngineLoopToJson(const EngineLoopFit& f) {
  if (!f.loop.measured) return nullptr;
  const JoinChance& j = f.loop.join;
  return json::object{{"between_steps", LoopTimeToJson(f.loop.between_steps)},
                      {"join", json::object{{"base", JsonNumber(j.base)},
                                            {"per_doubling", JsonNumber(j.per_doubling)},
                                            {"per_rank", JsonNumber(j.per_rank)}}},
                      {"late_follow_up", LoopTimeToJson(f.loop.late_follow_up)},
                      {"gaps", f.gaps},
                      {"follow_ups", f.follow_ups},
                      {"races", f.races},
                      {"joined", f.joined},
                      {"closed_logs", f.closed_logs}};
}

Status LoopTimeFromJson(const json::object& o, const std::string& where, LoopTime& t) {
  Reader r{o, where};
  t.base_s = r.Number("base_s", 0, true);
  t.per_request_s = r.Number("per_request_s", 0, true);
  t.per_rank_s = r.Number("per_rank_s", 0);
  GOODPUT_RETURN_IF_ERROR(r.status);
  if (!(t.base_s >= 0) || !(t.per_request_s >= 0) || !(t.per_rank_s >= 0)) {
    return Status::InvalidArgument(where + ": times must be >= 0");
  }
  t.spread.clear();
  if (const json::value* v = o.if_contains("spread"); v && v->is_array()) {
    for (const json::value& x : v->as_array()) {
      if (!x.is_number() || !(x.to_number<double>() > 0) ||
          (!t.spread.empty() && x.to_number<double>() < t.spread.back())) {
        return Status::InvalidArgument(where + ": spread must list positive ratios, rising");
      }
      t.spread.push_back(x.to_number<double>());
    }
  }
  return Status::Ok();
}

Status JoinChanceFromJson(const json::object& o, const std::string& where, JoinChance& j) {
  Reader r{o, where};
  j.base = r.Number("base", 0, true);
  j.per_doubling = r.Number("per_doubling", 0);
  j.per_rank = r.Number("per_rank", 0);
  // Any line: the chance is clamped to [0, 1] where it is drawn (a fit to
  // one load's steps may reach past 1 at one request).
  return r.status;
}

Status EngineLoopFromJson(const json::object& top, const std::string& where, EngineLoopFit& f) {
  const json::value* v = top.if_contains("engine_loop");
  if (!v || v->is_null()) return Status::Ok();  // not measured (or written before it was)
  if (!v->is_object()) return Status::InvalidArgument(where + ": 'engine_loop' must be an object");
  Reader r{v->as_object(), where + ": engine_loop"};
  if (v->as_object().contains("follow_up") && !v->as_object().contains("join")) {
    return Status::InvalidArgument(where + ": engine_loop: written by an earlier goodput (one follow-up time, no "
                                   "chance to join): fit it again with goodput calibrate steps --from-step-log");
  }
  const json::object* between = r.Object("between_steps");
  const json::object* join = r.Object("join");
  const json::object* late = r.Object("late_follow_up");
  f.gaps = static_cast<int64_t>(r.Number("gaps", 0));
  f.follow_ups = static_cast<int64_t>(r.Number("follow_ups", 0));
  f.races = static_cast<int64_t>(r.Number("races", 0));
  f.joined = static_cast<int64_t>(r.Number("joined", 0));
  f.closed_logs = static_cast<int64_t>(r.Number("closed_logs", 0));
  GOODPUT_RETURN_IF_ERROR(r.status);
  GOODPUT_RETURN_IF_ERROR(LoopTimeFromJson(*between, r.where + ": between_steps", f.loop.between_steps));
  GOODPUT_RETURN_IF_ERROR(JoinChanceFromJson(*join, r.where + ": join", f.loop.join));
  GOODPUT_RETURN_IF_ERROR(LoopTimeFromJson(*late, r.where + ": late_follow_up", f.loop.late_follow_up));
  f.loop.measured = true;
  return Status::Ok();
}

}  // namespace

std::string CalibrationToJson(const Calibration& c) {
  json::array curve, attention;
  for (const auto& [tokens, eff] : c.factors.efficiency_curve) curve.push_back(json::array{tokens, eff});
  for (const auto& [tokens, eff] : c.factors.attention_curve) attention.push_back(json::array{tokens, eff});
  json::array residuals;
  for (const FitResidual& r : c.residuals) {
    residuals.push_back(
        json::object{{"what", r.what}, {"measured", JsonNumber(r.measured)}, {"modeled", JsonNumber(r.modeled)}});
  }
  const HardwareSpec& h = c.hardware;
  const CostFactors& f = c.factors;
  const json::object doc{
      {"goodput_calibration", Calibration::kVersion},
      {"source", c.source},
      {"model", c.model},
      {"weight_precision", c.weight_precision},
      {"hardware",
       json::object{{"name", h.name},
                    {"display", h.display},
                    {"arch", h.arch},
                    {"cpu", h.cpu},
                    {"memory_bytes", h.memory_bytes},
                    {"usable_memory_gib",
                     h.usable_memory_gib ? json::value(JsonNumber(*h.usable_memory_gib)) : json::value(nullptr)},
                    {"link_bandwidth", JsonNumber(h.link_bandwidth)},
                    {"link_latency_s", JsonNumber(h.link_latency_s)},
                    {"kernel_latency_s", JsonNumber(f.kernel_latency_s)}}},
      {"factors", json::object{{"peak_flops", JsonNumber(f.peak_flops)},
                               {"bandwidth", JsonNumber(f.bandwidth)},
                               {"compute_efficiency", JsonNumber(f.compute_efficiency)},
                               {"head_rate", JsonNumber(f.head_rate)},
                               {"expert_efficiency", JsonNumber(f.expert_efficiency)},
                               {"efficiency_curve", curve},
                               {"attention_curve", attention},
                               {"bandwidth_efficiency", JsonNumber(f.bandwidth_efficiency)},
                               {"step_overhead_s", JsonNumber(f.step_overhead_s)},
                               {"per_sequence_s", JsonNumber(f.per_sequence_s)},
                               {"async_scheduling", f.async_scheduling},
                               {"overlap", JsonNumber(f.overlap)},
                               {"frontend_latency_s", JsonNumber(f.frontend_latency_s)},
                               {"eager_kernel_s", JsonNumber(f.eager_kernel_s)},
                               {"graph_max_batch", f.graph_max_batch}}},
      {"engine_loop", EngineLoopToJson(c.engine_loop)},
      {"fit", json::object{{"rms_log_error", JsonNumber(c.rms_log_error)}, {"residuals", residuals}}}};
  return PrettyJson(doc, 0) + "\n";
}

namespace {

Result<Calibration> CalibrationFromJson(const json::value& v, const std::string& where) {
  if (!v.is_object()) return Status::InvalidArgument(where + ": not a JSON object");
  Reader top{v.as_object(), where};
  const double version = top.Number("goodput_calibration", 0, true);
  GOODPUT_RETURN_IF_ERROR(top.status);
  if (version > Calibration::kVersion || version < 1) {
    return Status::InvalidArgument(fmt::format("{}: calibration version {} (this goodput reads version {})", where,
                                               version, Calibration::kVersion));
  }
  Calibration c;
  c.source = top.Text("source");
  c.model = top.Text("model");
  c.weight_precision = top.Text("weight_precision");
  GOODPUT_RETURN_IF_ERROR(top.status);
  const json::object* hw = top.Object("hardware");
  const json::object* fo = top.Object("factors");
  GOODPUT_RETURN_IF_ERROR(top.status);
  Reader h{*hw, where + ": hardware"};
  c.hardware.name = h.Text("name");
  c.hardware.display = h.Text("display");
  c.hardware.arch = h.Text("arch");  // absent in files written before it was kept: not known
  GOODPUT_RETURN_IF_ERROR(h.status);
  if (!c.hardware.arch.empty() && !IsGpuArch(c.hardware.arch)) {
    return Status::InvalidArgument(where + ": hardware arch must look like \"sm90\" or \"gfx942\"");
  }
  if (const json::value* cpu = hw->if_contains("cpu"); cpu && cpu->is_bool()) c.hardware.cpu = cpu->as_bool();
  c.hardware.memory_bytes = static_cast<int64_t>(h.Number("memory_bytes", 0, true));
  if (const json::value* u = hw->if_contains("usable_memory_gib"); u && !u->is_null()) {
    const double gib = h.Number("usable_memory_gib", 0);
    if (!(gib > 0)) return Status::InvalidArgument(where + ": hardware usable_memory_gib must be a positive number");
    c.hardware.usable_memory_gib = gib;
  }
  c.hardware.link_bandwidth = h.Number("link_bandwidth", 0);
  c.hardware.link_latency_s = h.Number("link_latency_s", 0);
  // Absent in files written before kernels were counted: fitted without them.
  c.hardware.kernel_latency_s = h.Number("kernel_latency_s", 0);
  GOODPUT_RETURN_IF_ERROR(h.status);
  Reader f{*fo, where + ": factors"};
  CostFactors& k = c.factors;
  k.peak_flops = f.Number("peak_flops", 0, true);
  k.bandwidth = f.Number("bandwidth", 0, true);
  k.compute_efficiency = f.Number("compute_efficiency", k.compute_efficiency);
  k.head_rate = f.Number("head_rate", 1);  // absent in files written before: the head at the weights' rate
  k.expert_efficiency = f.Number("expert_efficiency", 0);  // absent in files written before: as the dense matmuls
  k.bandwidth_efficiency = f.Number("bandwidth_efficiency", k.bandwidth_efficiency);
  k.step_overhead_s = f.Number("step_overhead_s", k.step_overhead_s);
  k.per_sequence_s = f.Number("per_sequence_s", k.per_sequence_s);
  k.overlap = f.Number("overlap", k.overlap);
  k.frontend_latency_s = f.Number("frontend_latency_s", 0);  // absent in files written before the front end: none
  k.eager_kernel_s = f.Number("eager_kernel_s", 0);  // absent in files written before: prompt steps replay graphs
  // Absent in files written before: every decode step replays a graph. Bounded before the cast (CheckFactors
  // refuses a negative one).
  k.graph_max_batch = static_cast<int64_t>(std::clamp(f.Number("graph_max_batch", 0), -1.0, 1e9));
  GOODPUT_RETURN_IF_ERROR(f.status);
  if (const json::value* a = fo->if_contains("async_scheduling"); a && !a->is_null()) {  // absent: not overlapped
    if (!a->is_bool()) return Status::InvalidArgument(where + ": factors: 'async_scheduling' must be true or false");
    k.async_scheduling = a->as_bool();
  }
  for (auto [key, curve] :
       {std::pair{"efficiency_curve", &k.efficiency_curve}, {"attention_curve", &k.attention_curve}}) {
    const json::value* v = fo->if_contains(key);
    if (!v || v->is_null()) continue;
    if (!v->is_array()) {
      return Status::InvalidArgument(fmt::format("{}: {} must be a list of [tokens, efficiency]", where, key));
    }
    for (const json::value& p : v->as_array()) {
      if (!p.is_array() || p.as_array().size() != 2 || !p.as_array()[0].is_number() || !p.as_array()[1].is_number()) {
        return Status::InvalidArgument(fmt::format("{}: {} entries must be [tokens, efficiency]", where, key));
      }
      curve->emplace_back(p.as_array()[0].to_number<double>(), p.as_array()[1].to_number<double>());
    }
  }
  k.link_bandwidth = c.hardware.link_bandwidth;
  k.link_latency_s = c.hardware.link_latency_s;
  k.kernel_latency_s = c.hardware.kernel_latency_s;
  GOODPUT_RETURN_IF_ERROR(CheckFactors(k, where));
  c.hardware.memory_bandwidth = k.bandwidth;
  c.hardware.bf16_flops = k.peak_flops;
  c.hardware.compute_efficiency = k.compute_efficiency;
  c.hardware.bandwidth_efficiency = k.bandwidth_efficiency;
  c.hardware.step_overhead_s = k.step_overhead_s;
  if (c.hardware.memory_bytes <= 0) return Status::InvalidArgument(where + ": hardware memory_bytes must be positive");
  GOODPUT_RETURN_IF_ERROR(EngineLoopFromJson(v.as_object(), where, c.engine_loop));
  return c;
}

}  // namespace

Result<Calibration> ParseCalibration(const std::string& text, const std::string& where) {
  boost::system::error_code ec;
  const json::value v = json::parse(text, ec);
  if (ec) return Status::InvalidArgument(where + ": not a JSON object");
  return CalibrationFromJson(v, where);
}

Result<Calibration> LoadCalibration(const std::string& path) {
  GOODPUT_ASSIGN_OR_RETURN(json::value v, ReadJsonFile(path, "calibration"));
  return CalibrationFromJson(v, path);
}

Status SaveCalibration(const Calibration& c, const std::string& path) {
  return WriteFileAtomically(path, CalibrationToJson(c));
}

std::string FormatResiduals(const Calibration& c) {
  std::vector<FitResidual> rs = c.residuals;
  std::stable_sort(rs.begin(), rs.end(), [](const FitResidual& a, const FitResidual& b) {
    return std::fabs(a.Error()) < std::fabs(b.Error());
  });
  std::string s = fmt::format("  {:<52}{:>14}{:>14}{:>10}\n", "measurement", "measured", "model", "error");
  for (const FitResidual& r : rs) {
    s += fmt::format("  {:<52}{:>14.6g}{:>14.6g}{:>9.1f}%\n", r.what, r.measured, r.modeled, 100 * r.Error());
  }
  s += fmt::format("  rms log error {:.3f} over {} fitted measurements\n", c.rms_log_error,
                   c.measurements > 0 ? c.measurements : static_cast<int64_t>(c.residuals.size()));
  if (c.stopped_at_budget) {
    s += "  the fit stopped at its evaluation budget before converging: a larger --max-evaluations may fit closer\n";
  }
  return s + FormatEngineLoop(c.engine_loop);
}

namespace {

std::string FormatLoopTime(const LoopTime& t) {
  std::string s = fmt::format("median {:.2f} ms at 1 request, {:.2f} at 32", 1e3 * t.Median(1), 1e3 * t.Median(32));
  if (t.per_rank_s > 0) s += fmt::format(", +{:.2f} per earlier follow-up", 1e3 * t.per_rank_s);
  if (t.spread.size() >= 2) {  // the spread's ends sit half a step inside 0 and 1
    s += fmt::format(" (x{:.2f}-x{:.2f} of it, the middle {:.0f}%)", t.spread.front(), t.spread.back(),
                     100.0 * (1.0 - 1.0 / static_cast<double>(t.spread.size())));
  }
  return s;
}

}  // namespace

std::string FormatEngineLoop(const EngineLoopFit& f) {
  if (!f.loop.measured) return "";
  const JoinChance& j = f.loop.join;
  return fmt::format(
      "  the engine's loop: between steps {} over {} steps followed at once;\n"
      "    a closed-loop client's next request joined the next step {} of {} times ({} finishes paired in {} "
      "closed-loop logs): a chance of {:.2f} after a step of 1 request, {:.2f} after 32, {:+.2f} per earlier "
      "follow-up;\n"
      "    else it arrived after the next step's start: {}\n",
      FormatLoopTime(f.loop.between_steps), f.gaps, f.joined, f.races, f.follow_ups, f.closed_logs, j.At(1), j.At(32),
      j.per_rank, FormatLoopTime(f.loop.late_follow_up));
}

}  // namespace goodput
