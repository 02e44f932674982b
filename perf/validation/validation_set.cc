#include "validation_set.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string_view>

#include "core/json_file.h"
#include "core/stats.h"
#include "hw/hardware.h"
#include "model/catalog.h"
#include "model/params.h"
#include "workload/length_dist.h"
#include "workload/yaml_input.h"

namespace goodput::validation {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

// Each figure's key in the files, its kind, and where goodput sim's --json point holds it
// (a metric under "latency", or none for a field of the point itself).
struct FigureInfo {
  Figure figure;
  const char* key;
  const char* kind;
  const char* metric;
  const char* stat;
};
constexpr std::array<FigureInfo, 8> kFigures = {{
    {Figure::kThroughput, "throughput", "throughput", nullptr, "throughput_tokens_per_s"},
    {Figure::kTtftP50, "ttft_p50_ms", "ttft", "ttft", "p50_s"},
    {Figure::kTtftMean, "ttft_mean_ms", "ttft", "ttft", "mean_s"},
    {Figure::kTpotP50, "tpot_p50_ms", "tpot", "tpot", "p50_s"},
    {Figure::kTpotMean, "tpot_mean_ms", "tpot", "tpot", "mean_s"},
    {Figure::kItlP50, "itl_p50_ms", "itl", "itl", "p50_s"},
    {Figure::kPerRequest, "per_request_tok_s", "per-request", nullptr, "per_request_tokens_per_s"},
    {Figure::kPerRequestMean, "per_request_mean_tok_s", "per-request", "tpot", "mean_s"},
}};

const FigureInfo& InfoOf(Figure f) {
  for (const auto& i : kFigures)
    if (i.figure == f) return i;
  return kFigures[0];  // unreachable: every Figure has an entry
}

const std::set<std::string> kRowKeys = {"model",    "gpu",       "tp",     "weights",  "kv_cache_dtype", "args",
                                        "workload", "prompt",    "output", "requests", "tags",           "concurrency",
                                        "rate",     "published", "fitted", "note",     "limits"};

// A row's field: the row's own value, else the file's default (an undefined node when neither has it).
struct Fields {
  YAML::Node row;
  YAML::Node defaults;
  YAML::Node operator[](const std::string& key) const { return row[key] ? row[key] : defaults[key]; }
};

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A length given as a plain number means exactly that many tokens.
std::string LengthSpec(const YAML::Node& n) {
  const std::string s = n.as<std::string>();
  return s.find_first_not_of("0123456789") == std::string::npos ? "fixed:" + s : s;
}

Status CheckKeys(const YAML::Node& row, const std::string& where) {
  if (!row.IsMap()) return YamlError(where, row, "a row must be a mapping");
  for (const auto& kv : row) {
    const auto key = kv.first.as<std::string>();
    if (!kRowKeys.count(key)) return YamlError(where, kv.first, fmt::format("unknown key '{}'", key));
  }
  return Status::Ok();
}

Result<Figure> FigureNamed(const std::string& key, const std::string& where, const YAML::Node& at) {
  for (const auto& i : kFigures)
    if (key == i.key) return i.figure;
  std::string known;
  for (const auto& i : kFigures) known += fmt::format("{}{}", known.empty() ? "" : ", ", i.key);
  return YamlError(where, at, fmt::format("unknown figure '{}' ({})", key, known));
}

Status ReadFigures(const Fields& f, const std::string& where, Row& row) {
  const YAML::Node published = f["published"];
  if (!published || !published.IsMap() || published.size() == 0)
    return YamlError(where, f.row, "a row needs 'published:', a mapping of at least one figure");
  const YAML::Node fitted = f["fitted"];
  if (fitted && !fitted.IsMap()) return YamlError(where, fitted, "'fitted' must map figures to what was fitted");
  for (const auto& kv : published) {
    const auto key = kv.first.as<std::string>();
    GOODPUT_ASSIGN_OR_RETURN(Figure figure, FigureNamed(key, where, kv.first));
    double value = 0;
    if (!YAML::convert<double>::decode(kv.second, value) || !(value > 0) || !std::isfinite(value))
      return YamlError(where, kv.second, fmt::format("'{}' must be a positive number", key));
    row.figures.push_back({figure, value, fitted && fitted[key] ? fitted[key].as<std::string>() : ""});
  }
  if (fitted)
    for (const auto& kv : fitted)
      if (!published[kv.first.as<std::string>()])
        return YamlError(where, kv.first, "'fitted' names a figure the row does not publish");
  return Status::Ok();
}

Status ReadWorkload(const Fields& f, const std::string& where, const std::string& workloads_dir, Row& row) {
  const bool lengths = f["prompt"] || f["output"];
  if (f["workload"] && lengths) return YamlError(where, f.row, "give a workload or prompt/output lengths, not both");
  if (!f["workload"] && !(f["prompt"] && f["output"]))
    return YamlError(where, f.row, "a row needs a workload, or both prompt and output lengths");
  if (f["workload"]) {
    const fs::path p = f["workload"].as<std::string>();
    row.workload = p.has_parent_path() ? p.string() : (fs::path(workloads_dir) / p).string();
  } else {
    row.prompt = LengthSpec(f["prompt"]);
    row.output = LengthSpec(f["output"]);
  }
  return Status::Ok();
}

Status ReadLoad(const Fields& f, const std::string& where, Row& row) {
  if (f["concurrency"] && f["rate"]) return YamlError(where, f.row, "give a concurrency or a rate, not both");
  if (f["concurrency"] && !YAML::convert<int>::decode(f["concurrency"], row.concurrency))
    return YamlError(where, f["concurrency"], "'concurrency' must be a whole number");
  if (f["rate"] && !YAML::convert<double>::decode(f["rate"], row.rate))
    return YamlError(where, f["rate"], "'rate' must be a number of requests per second");
  if (f["requests"] && !YAML::convert<int64_t>::decode(f["requests"], row.requests))
    return YamlError(where, f["requests"], "'requests' must be a whole number");
  if (row.concurrency < 0 || row.rate < 0 || row.requests < 0 || (f["concurrency"] && row.concurrency == 0) ||
      (f["rate"] && row.rate == 0) || (f["requests"] && row.requests == 0))
    return YamlError(where, f.row, "concurrency, rate and requests must be positive");
  return Status::Ok();
}

Status ReadDeployment(const Fields& f, const std::string& where, Row& row) {
  if (!f["model"] || !f["gpu"]) return YamlError(where, f.row, "a row needs a model and a gpu");
  row.model = f["model"].as<std::string>();
  row.gpu = f["gpu"].as<std::string>();
  if (f["tp"] && (!YAML::convert<int>::decode(f["tp"], row.tp) || row.tp < 1))
    return YamlError(where, f["tp"], "'tp' must be a whole number of GPUs");
  for (auto [key, field] : {std::pair{"weights", &row.weights},
                            {"kv_cache_dtype", &row.kv_cache_dtype},
                            {"args", &row.args},
                            {"note", &row.note},
                            {"limits", &row.limits}})
    if (f[key]) *field = f[key].as<std::string>();
  if (!row.limits.empty() && row.limits != "trtllm-bench")
    return YamlError(where, f["limits"], "'limits' must be trtllm-bench (the engine's own choice of batch limits)");
  if (f["tags"]) {
    if (!f["tags"].IsSequence()) return YamlError(where, f["tags"], "'tags' must be a list");
    for (const auto& t : f["tags"]) row.tags.push_back(t.as<std::string>());
  }
  return Status::Ok();
}

// Bytes per weight or KV element as trtllm-bench counts them (its BYTES_PER_ELEM; anything else 2).
double TrtllmBytesPerElement(const std::string& format) {
  if (format == "nvfp4") return 0.5;
  if (format == "fp8" || format == "fp8-block") return 1;
  return 2;
}

// The one length a spec always gives ("fixed:1000", "fixed:8k"); 0 when it varies or does not parse.
int64_t FixedLength(const std::string& spec) {
  const Result<LengthDistribution> d = LengthDistribution::FromSpec(spec);
  return d.ok() && d->Quantile(0) == d->Max() ? d->Max() : 0;
}

// The row's flags for trtllm-bench's limits, from the catalog's model and card.
Result<std::string> TrtllmBenchArgs(const Row& row, const std::string& where) {
  const int64_t isl = FixedLength(row.prompt), osl = FixedLength(row.output);
  if (isl <= 0 || osl <= 0) return Status::InvalidArgument(where + ": trtllm-bench limits need fixed lengths");
  Result<ModelSpec> model = LoadModel(row.model);
  Result<HardwareSpec> gpu = FindGpu(row.gpu);
  for (const Status& st : {model.status(), gpu.status()})
    if (!st.ok()) return Status::InvalidArgument(where + ": trtllm-bench limits: " + st.message());
  const ModelSpec& m = *model;
  const HardwareSpec& hw = *gpu;
  const double gib = static_cast<double>(hw.TotalMemoryBytes()) / (1 << 30);
  const double weight_gib =
      static_cast<double>(CountParams(m).total()) * TrtllmBytesPerElement(row.weights) / (1 << 30);
  // Every attention layer keeps K and V for at least one KV head per GPU.
  const double kv_bytes = 2.0 * m.CountLayers(LayerKind::kFullAttention) *
                          std::max<int64_t>(row.tp, m.attn.num_kv_heads) * m.attn.head_dim *
                          TrtllmBytesPerElement(row.kv_cache_dtype);
  BatchLimits l = TrtllmBenchLimits(gib, row.tp, weight_gib, kv_bytes, isl, osl);
  // The PyTorch backend's trtllm-bench runs without chunked context and so
  // raises the budget to hold a whole prompt beside a full batch of decodes
  // (tensorrt_llm/bench/benchmark/utils/general.py, get_settings).
  if (row.engine_kind == "trtllm") l.max_num_tokens = std::max(l.max_num_tokens, isl + l.max_batch_size);
  return fmt::format("--max-num-seqs {} --max-num-batched-tokens {}", l.max_batch_size, l.max_num_tokens);
}

Result<Row> ReadRow(const Fields& f, const std::string& file, const std::string& workloads_dir, const Row& proto) {
  Row row;
  row.source = proto.source, row.url = proto.url, row.engine_kind = proto.engine_kind;
  row.where = fmt::format("{}:{}", file, f.row.Mark().line + 1);
  GOODPUT_RETURN_IF_ERROR(CheckKeys(f.row, file));
  GOODPUT_RETURN_IF_ERROR(ReadDeployment(f, file, row));
  GOODPUT_RETURN_IF_ERROR(ReadWorkload(f, file, workloads_dir, row));
  GOODPUT_RETURN_IF_ERROR(ReadLoad(f, file, row));
  GOODPUT_RETURN_IF_ERROR(ReadFigures(f, file, row));
  if (row.limits == "trtllm-bench") {
    GOODPUT_ASSIGN_OR_RETURN(const std::string limits, TrtllmBenchArgs(row, row.where));
    row.args = row.args.empty() ? limits : row.args + " " + limits;
  }
  return row;
}

Status ReadSource(const YAML::Node& doc, const std::string& path, Row& proto) {
  const YAML::Node source = doc["source"];
  if (!source || !source.IsMap() || !source["title"] || !source["url"] || !source["engine"] || !source["engine_kind"])
    return YamlError(path, source ? source : doc, "'source' must give title, url, engine and engine_kind");
  proto.source = source["title"].as<std::string>();
  proto.url = source["url"].as<std::string>();
  proto.engine_kind = source["engine_kind"].as<std::string>();
  if (std::find(kEngineKinds.begin(), kEngineKinds.end(), proto.engine_kind) == kEngineKinds.end()) {
    const auto head = std::vector<std::string_view>(kEngineKinds.begin(), kEngineKinds.end() - 1);
    return YamlError(path, source["engine_kind"],
                     fmt::format("'engine_kind' must be {} or {}", fmt::join(head, ", "), kEngineKinds.back()));
  }
  return Status::Ok();
}

// The source's title without its parenthesis: the files of one source (one per engine) group together.
std::string SourceName(const Row& r) { return r.source.substr(0, r.source.find(" (")); }

// Each outcome's group keys beside its kind: "" (the kind alone), then "card h100", ...
std::vector<std::string> GroupsOf(const Row& r) {
  return {"",
          "card " + r.gpu,
          "engine " + r.engine_kind,
          "source " + SourceName(r),
          "weights " + (r.weights.empty() ? std::string("checkpoint's") : r.weights),
          r.tp > 1 ? "tp > 1" : "tp 1"};
}

// Runs `command` and returns its stdout; the exit code in `rc`.
std::string Capture(const std::string& command, int& rc) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return rc = -1, out;
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = pclose(p);
  rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

const json::value* PointField(const json::value& sim, const char* metric, const char* stat) {
  const auto* results = sim.as_object().if_contains("results");
  if (!results || !results->is_array() || results->as_array().empty()) return nullptr;
  const auto* points = results->as_array()[0].as_object().if_contains("points");
  if (!points || !points->is_array() || points->as_array().empty()) return nullptr;
  const auto& point = points->as_array()[0].as_object();
  if (!metric) return point.if_contains(stat);
  const auto* latency = point.if_contains("latency");
  const auto* m = latency && latency->is_object() ? latency->as_object().if_contains(metric) : nullptr;
  return m && m->is_object() ? m->as_object().if_contains(stat) : nullptr;
}

}  // namespace

BatchLimits TrtllmBenchLimits(double gpu_memory_gib, int gpus, double weight_gib, double kv_bytes_per_token,
                              int64_t isl, int64_t osl, double fraction) {
  const double cache_gib = (gpu_memory_gib * gpus - weight_gib) * fraction;
  const double requests = cache_gib * (1 << 30) / (kv_bytes_per_token * static_cast<double>(isl + osl));
  const double raw_bs = std::min(requests, 4096.0);
  const double raw_tokens = std::min(raw_bs * (1 + static_cast<double>(isl) / osl), 32768.0);
  const auto up = [](double x, double step) { return static_cast<int64_t>(step * std::ceil(x / step)); };
  BatchLimits l;
  l.max_batch_size = raw_bs < 256 ? std::max<int64_t>(64, up(raw_bs, 32)) : up(raw_bs, raw_bs < 1024 ? 128 : 256);
  l.max_num_tokens = raw_tokens < 4096   ? std::max<int64_t>(2048, up(raw_tokens, 256))
                     : raw_tokens < 8192 ? up(raw_tokens, 512)
                                         : up(raw_tokens, 1024);
  return l;
}

const char* FigureKey(Figure f) { return InfoOf(f).key; }

const char* FigureKind(Figure f) { return InfoOf(f).kind; }

Result<std::vector<Row>> ReadSourceFile(const std::string& path, const std::string& workloads_dir) {
  GOODPUT_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path, "validation source"));
  GOODPUT_ASSIGN_OR_RETURN(YAML::Node doc,
                           ParseYamlMapping(text, path, "a validation source is a mapping with source and rows"));
  Row proto;
  GOODPUT_RETURN_IF_ERROR(ReadSource(doc, path, proto));
  const YAML::Node rows = doc["rows"];
  if (!rows || !rows.IsSequence() || rows.size() == 0) return YamlError(path, doc, "'rows' must list at least one row");
  const YAML::Node defaults = doc["defaults"] ? doc["defaults"] : YAML::Node(YAML::NodeType::Map);
  if (!defaults.IsMap()) return YamlError(path, defaults, "'defaults' must be a mapping");
  GOODPUT_RETURN_IF_ERROR(CheckKeys(defaults, path));
  std::vector<Row> out;
  for (const auto& r : rows) {
    Result<Row> read = Status::InvalidArgument(path + ": row not read");
    try {  // a list or mapping where a word belongs: yaml-cpp throws on as<std::string>()
      read = ReadRow(Fields{r, defaults}, path, workloads_dir, proto);
    } catch (const YAML::Exception& e) {
      return YamlError(path, r, "a field is not of its kind: " + e.msg);
    }
    GOODPUT_ASSIGN_OR_RETURN(Row row, std::move(read));
    out.push_back(std::move(row));
  }
  return out;
}

Result<std::vector<Row>> ReadValidationSet(const std::string& dir, const std::string& workloads_dir) {
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  if (ec) return Status::IoError(fmt::format("{}: cannot read the directory: {}", dir, ec.message()));
  if (files.empty()) return Status::InvalidArgument(dir + ": no *.yaml validation sources");
  std::sort(files.begin(), files.end());
  std::vector<Row> all;
  for (const auto& f : files) {
    GOODPUT_ASSIGN_OR_RETURN(std::vector<Row> rows, ReadSourceFile(f, workloads_dir));
    all.insert(all.end(), rows.begin(), rows.end());
  }
  return all;
}

Result<std::string> WorkloadYaml(const Row& row) {
  YAML::Node w;
  if (!row.workload.empty()) {
    GOODPUT_ASSIGN_OR_RETURN(std::string text, ReadTextFile(row.workload, "workload"));
    GOODPUT_ASSIGN_OR_RETURN(w, ParseYamlMapping(text, row.workload, "a workload is a mapping"));
  } else {
    w["name"] = "validation";
    w["seed"] = 1;
    w["requests"] = row.requests > 0 ? row.requests : 100;
    w["warmup"] = "0%";
    w["cooldown"] = "0%";
    YAML::Node cls;
    cls["name"] = "interactive", cls["prompt"] = row.prompt, cls["output"] = row.output;
    w["classes"].push_back(cls);
  }
  if (row.concurrency == 0 && row.rate == 0) {
    w.remove("arrival");
    w["arrival"]["type"] = "batch";
  }
  YAML::Emitter out;
  out << w;
  return std::string(out.c_str()) + "\n";
}

std::string SimArgs(const Row& row, const std::string& workload_path) {
  std::string a = fmt::format("sim --model {} --gpu {} --tp {} --workload {} --repeat {} --json", ShellQuote(row.model),
                              ShellQuote(row.gpu), row.tp, ShellQuote(workload_path), row.repeat);
  a += " --engine " + row.engine_kind;  // its entry of the engines catalog: host costs and scheduling
  if (!row.weights.empty()) a += " --weights " + ShellQuote(row.weights);
  if (!row.kv_cache_dtype.empty()) a += " --kv-cache-dtype " + ShellQuote(row.kv_cache_dtype);
  if (row.requests > 0) a += fmt::format(" --requests {}", row.requests);
  if (row.concurrency > 0) a += fmt::format(" -c {}", row.concurrency);
  if (row.rate > 0) a += fmt::format(" -r {}", row.rate);
  if (!row.args.empty()) a += " " + row.args;  // flags as the file spells them, split by the shell
  return a;
}

Result<json::value> SimulateRow(const std::string& goodput, const Row& row, const std::string& extra_args, bool echo) {
  GOODPUT_ASSIGN_OR_RETURN(const std::string yaml, WorkloadYaml(row));
  const std::string scratch = (fs::temp_directory_path() / fmt::format("goodput_validation_{}.yaml", getpid()));
  std::ofstream(scratch) << yaml;
  const std::string command = goodput + " " + SimArgs(row, scratch) + (extra_args.empty() ? "" : " " + extra_args);
  if (echo) std::fprintf(stderr, "$ %s\n", command.c_str());
  int rc = 0;
  const std::string out = Capture(command + " 2>/dev/null", rc);
  fs::remove(scratch);
  if (rc != 0)
    return Status::InvalidArgument(fmt::format("{}: goodput sim failed (exit {}): {}", row.where, rc, command));
  boost::system::error_code ec;
  json::value sim = json::parse(out, ec);
  if (ec) return Status::InvalidArgument(row.where + ": goodput sim printed no JSON");
  return sim;
}

Result<double> SimulatedFigure(const json::value& sim, Figure f) {
  const FigureInfo& info = InfoOf(f);
  if (!sim.is_object()) return Status::InvalidArgument("goodput sim's output is not a JSON object");
  const json::value* v = PointField(sim, info.metric, info.stat);
  if (!v || !v->is_number()) return Status::InvalidArgument(fmt::format("goodput sim's output has no {}", info.key));
  const double x = v->to_number<double>();
  if (f == Figure::kPerRequestMean) return x > 0 ? 1 / x : NAN;
  return f == Figure::kThroughput || f == Figure::kPerRequest ? x : x * 1e3;
}

std::vector<GroupSummary> Summarise(const std::vector<Outcome>& outcomes, bool held_out_only) {
  std::map<std::string, std::vector<double>> errors;  // "kind" or "kind / group" -> signed errors
  std::vector<std::string> order;
  for (const Outcome& o : outcomes) {
    if (held_out_only && !o.published.fitted.empty()) continue;
    for (const std::string& g : GroupsOf(*o.row)) {
      const std::string key = std::string(FigureKind(o.published.figure)) + (g.empty() ? "" : " / " + g);
      if (!errors.count(key)) order.push_back(key);
      errors[key].push_back(o.Error());
    }
  }
  // The kinds alone first, in the order met; then every group, by name.
  std::stable_sort(order.begin(), order.end(), [](const std::string& a, const std::string& b) {
    const bool ka = a.find(" / ") == std::string::npos, kb = b.find(" / ") == std::string::npos;
    return ka != kb ? ka : (!ka && a < b);
  });
  std::vector<GroupSummary> out;
  for (const auto& key : order) {
    const auto& e = errors[key];
    std::vector<double> abs(e.size());
    std::transform(e.begin(), e.end(), abs.begin(), [](double x) { return std::fabs(x); });
    const auto above = std::count_if(e.begin(), e.end(), [](double x) { return x > 0; });
    out.push_back({key, static_cast<int>(e.size()), *Median(abs), static_cast<double>(above) / e.size()});
  }
  return out;
}

std::vector<WithinGroups> ErrorWithinGroups(const std::vector<Outcome>& outcomes, const std::string& kind) {
  const auto group = [](const Row& r, bool deployment) {
    return deployment ? fmt::format("{}|{}|{}|{}|{}", SourceName(r), r.model, r.gpu, r.tp, r.weights) : SourceName(r);
  };
  std::vector<WithinGroups> out;
  for (const bool deployment : {false, true}) {
    std::map<std::string, std::vector<double>> logs;  // group -> log(simulated / published)
    for (const Outcome& o : outcomes) {
      if (o.published.fitted.empty() && FigureKind(o.published.figure) == kind)
        logs[group(*o.row, deployment)].push_back(std::log1p(o.Error()));
    }
    std::vector<double> left;
    for (const auto& entry : logs) {
      const double bias = *Median(entry.second);
      for (double x : entry.second) left.push_back(std::fabs(std::expm1(x - bias)));
    }
    if (left.empty()) return {};
    out.push_back({deployment ? "deployment" : "source", static_cast<int>(logs.size()), static_cast<int>(left.size()),
                   *Median(left)});
  }
  return out;
}

}  // namespace goodput::validation
