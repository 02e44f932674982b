#include "cli/bench_command.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iostream>
#include <memory>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "bench/diagnose.h"
#include "bench/measure.h"
#include "bench/target.h"
#include "cli/load_flags.h"
#include "cli/sim_command.h"
#include "core/text.h"
#include "core/units.h"
#include "ledger/ledger.h"
#include "report/html_report.h"
#include "sim/sim_report.h"

namespace goodput {
namespace {

enum class Mode { kBench, kSweep, kCapacity };

struct BenchArgs {
  std::string target, model, workload, slo, concurrency, rate, serve_args, api_key, vary, launch, ledger = "goodput.db";
  double burstiness = 1, timeout = 600, max_load = 0, lag_threshold_ms = 10, launch_timeout = 600;
  int repeat = 0;  // 0: the mode's default
  int64_t requests = 0;
  bool chat = false, no_fixed_length = false, json = false, csv = false, no_ledger = false, save_requests = false,
       insecure = false;
};

// Set by SIGINT: no new request is sent, the current point is dropped, the
// points already measured stay in the ledger and the run is marked interrupted.
std::atomic<bool> g_interrupted{false};
bool Interrupted() { return g_interrupted.load(); }

constexpr const char* kFooter = R"(Targets:
  http(s)://HOST:PORT[/v1]  any OpenAI-compatible server (--model: the served model name)
  embedded               goodput serve started on a free loopback port (--model: a preset;
                         --engine-args: its flags), stopped afterwards
  sim:GPU                the simulator on a catalog GPU (--model: a catalog model;
                         --engine-args: goodput sim's engine flags)
Definitions (DESIGN.md §1): TTFT = first token-carrying chunk - arrival (the scheduled
time in open loop, so client lateness counts); TPOT = (last - first) / (output tokens - 1);
output tokens from the server's usage, else counted chunks. Failed, timed-out and cut-off
requests count against attainment. A class holds its SLO when attainment >= its highest
percentile. Capacity = the last load before some class stops holding its SLO.
Prompts are sent as token ids (exact input lengths) and outputs fixed with ignore_eos +
min_tokens unless --no-fixed-length.
)";

void AddFlags(CLI::App& c, BenchArgs& a, Mode mode) {
  c.add_option("--target,-t", a.target, "URL | embedded | sim:GPU")->required();
  c.add_option("--model,-m", a.model, "Model: served name (URL), preset (embedded) or catalog name (sim)");
  c.add_option("--workload,-w", a.workload, "Workload file, e.g. data/workloads/chat.yaml")->required();
  c.add_option("--slo", a.slo, "SLO per class, e.g. 'interactive: ttft p99 <= 1s, tpot p99 <= 100ms'");
  c.add_option("--concurrency,-c", a.concurrency, mode == Mode::kSweep ? "Closed-loop loads, e.g. 1,2,4,8" : "Closed-loop clients");
  c.add_option("--rate,-r", a.rate, mode == Mode::kSweep ? "Open-loop request rates, e.g. 1,2,4" : "Open-loop requests/s");
  c.add_option("--burstiness", a.burstiness, "With --rate: gamma shape (1 = Poisson)")->capture_default_str();
  c.add_option("--repeat", a.repeat, "Runs per load, figures are medians (default: bench 1, sweep/capacity 5)");
  c.add_option("--requests", a.requests, "Requests per run (default: the workload's)");
  c.add_option("--timeout", a.timeout, "Seconds a request may take before it counts as failed")->capture_default_str();
  c.add_option("--engine-args,--serve-args", a.serve_args,
               "Engine flags: for embedded goodput serve's (e.g. '--max-num-seqs 16'), for sim:GPU goodput sim's");
  c.add_option("--vary", a.vary, "Run once per value of one engine flag, e.g. max-num-seqs=8,16,32 (embedded, "
                                 "sim:GPU, or a URL with --launch)");
  c.add_option("--launch", a.launch, "URL target: the command that starts the server, with {value} for --vary, e.g. "
                                     "'vllm serve M --port 8000 --max-num-seqs {value}'; stopped afterwards");
  c.add_option("--launch-timeout", a.launch_timeout, "Seconds to wait for a launched server to answer")
      ->capture_default_str();
  c.add_option("--api-key", a.api_key, "Bearer token for the target");
  c.add_flag("--insecure", a.insecure, "https: accept any server certificate (self-signed test servers)");
  c.add_option("--lag-threshold-ms", a.lag_threshold_ms, "Send lag (p99) above which a point is flagged")
      ->capture_default_str();
  c.add_flag("--chat", a.chat, "Use /chat/completions (text prompts; lengths approximate) instead of /completions");
  c.add_flag("--no-fixed-length", a.no_fixed_length, "Do not send ignore_eos/min_tokens (servers without them)");
  if (mode == Mode::kCapacity) {
    c.add_option("--max-load", a.max_load,
                 "Highest load to try (default 4096 clients or 1000 req/s; clients at most half the run's requests)");
  }
  c.add_option("--ledger", a.ledger, "SQLite ledger that keeps every run (goodput ledger list)")->capture_default_str();
  c.add_flag("--no-ledger", a.no_ledger, "Do not record this run");
  c.add_flag("--save-requests", a.save_requests, "Also keep every request's record in the ledger");
  c.add_flag("--json", a.json, "Print JSON instead of tables");
  c.add_flag("--csv", a.csv, "Print CSV (one row per load point) instead of tables");
  c.footer(kFooter);
}

// The launch command with every {value} replaced.
std::string LaunchCommand(const std::string& tmpl, const std::string& value) {
  std::string out = tmpl;
  for (size_t at = out.find("{value}"); at != std::string::npos; at = out.find("{value}", at + value.size())) {
    out.replace(at, 7, value);
  }
  return out;
}

Result<std::unique_ptr<Target>> MakeTarget(const BenchArgs& a, const std::vector<std::string>& serve_args,
                                           const std::string& value) {
  client::LoadOptions o;
  o.model = a.model;
  o.chat = a.chat;
  o.fixed_length = !a.no_fixed_length;
  o.timeout_s = a.timeout;
  o.endpoint.api_key = a.api_key;
  o.stop = Interrupted;
  o.insecure_tls = a.insecure;
  if (!(a.timeout > 0)) return Status::InvalidArgument("--timeout must be positive");
  if (!a.launch.empty() && (a.target == "embedded" || a.target.rfind("sim:", 0) == 0)) {
    return Status::InvalidArgument("--launch is for URL targets (embedded starts goodput serve itself)");
  }
  if (a.target == "embedded") {
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    GOODPUT_ASSIGN_OR_RETURN(auto t, EmbeddedTarget::Start(self, a.model.empty() ? "goodput-small" : a.model, serve_args, o));
    return std::unique_ptr<Target>(std::move(t));
  }
  if (a.target.rfind("sim:", 0) == 0) {
    if (a.model.empty()) return Status::InvalidArgument("--target sim:GPU needs --model (a catalog model)");
    return MakeSimTarget(a.model, a.target.substr(4), serve_args);
  }
  GOODPUT_ASSIGN_OR_RETURN(o.endpoint, client::ParseEndpoint(a.target));
  o.endpoint.api_key = a.api_key;
  if (a.model.empty()) return Status::InvalidArgument("--target URL needs --model (the served model name)");
  if (!a.launch.empty()) {
    GOODPUT_ASSIGN_OR_RETURN(auto t, LaunchedTarget::Start(LaunchCommand(a.launch, value), o, a.launch_timeout));
    return std::unique_ptr<Target>(std::move(t));
  }
  return std::unique_ptr<Target>(std::make_unique<HttpTarget>(o));
}

struct Outcome {
  std::string setting;  // "" or "max-num-seqs=16"
  std::string target;
  std::string startup;  // embedded: the server's KV capacity lines
  SweepResult sweep;
};

std::vector<std::string> SplitArgs(const std::string& s) {
  std::vector<std::string> out;
  for (const std::string& piece : Split(s, ' ')) {
    if (!piece.empty()) out.push_back(piece);
  }
  return out;
}

// Where a run is recorded (absent with --no-ledger).
struct Recording {
  Ledger* ledger = nullptr;
  int64_t run = 0;
  bool save_requests = false;
};

Status Record(const Recording& rec, const std::string& setting, const Workload& w, const ArrivalSpec& load,
              const PointResult& point, const std::vector<SimRun>& runs) {
  if (!rec.ledger) return Status::Ok();
  std::vector<PointResult> reps;
  std::vector<std::vector<RequestRecord>> records;
  for (const SimRun& run : runs) {
    reps.push_back(Summarise(w, load, {run}));
    if (rec.save_requests) records.push_back(run.records);
  }
  return rec.ledger->AddPoint(rec.run, setting, point, w.requests, reps, records);
}

Result<Outcome> RunOne(const BenchArgs& a, Mode mode, const Workload& w, const std::vector<ArrivalSpec>& ladder,
                       const std::string& setting, std::vector<std::string> serve_args, const std::string& value,
                       const Recording& rec) {
  GOODPUT_ASSIGN_OR_RETURN(std::unique_ptr<Target> target, MakeTarget(a, serve_args, value));
  Outcome out;
  out.setting = setting;
  out.target = target->Describe();
  if (auto* e = dynamic_cast<EmbeddedTarget*>(target.get())) out.startup = e->startup_log();
  const int repeat = a.repeat > 0 ? a.repeat : (mode == Mode::kBench ? 1 : 5);
  const std::string prefix = setting.empty() ? "" : setting + ": ";
  PointRunner run = [&](const ArrivalSpec& load) -> Result<PointResult> {
    std::vector<SimRun> runs;
    auto progress = [&](int i, int n) {
      Progress(fmt::format("{}load {}: run {} of {} ({} requests)", prefix, LoadLabel(load), i, n, w.requests));
    };
    GOODPUT_ASSIGN_OR_RETURN(PointResult point, MeasurePoint(*target, w, load, repeat, progress, &runs, Interrupted));
    GOODPUT_RETURN_IF_ERROR(Record(rec, setting, w, load, point, runs));
    return point;
  };
  GOODPUT_ASSIGN_OR_RETURN(out.sweep, mode == Mode::kCapacity
                                          ? RunCapacitySearch(run, ladder.front(), a.max_load, w.requests)
                                          : RunLadder(run, ladder));
  return out;
}

Result<Workload> LoadWithFlags(const BenchArgs& a) {
  GOODPUT_ASSIGN_OR_RETURN(Workload w, LoadWorkload(a.workload));
  if (!a.slo.empty()) {
    auto slo = ParseSlo(a.slo);
    if (!slo.ok()) return slo.status().WithContext("--slo");
    GOODPUT_RETURN_IF_ERROR(ApplySlo(w, *slo).WithContext("--slo"));
  }
  if (a.requests < 0) return Status::InvalidArgument("--requests must be positive");
  if (a.requests > 0) w.requests = a.requests;
  return w;
}

Result<std::vector<Outcome>> RunAll(const BenchArgs& a, Mode mode, const Workload& w, const Recording& rec) {
  if (a.repeat < 0) return Status::InvalidArgument("--repeat must be at least 1");
  GOODPUT_ASSIGN_OR_RETURN(std::vector<ArrivalSpec> ladder, Ladder(a.concurrency, a.rate, a.burstiness, w));
  if (mode == Mode::kBench && ladder.size() != 1) {
    return Status::InvalidArgument("goodput bench runs one load; use goodput sweep for several");
  }
  const std::vector<std::string> base_args = SplitArgs(a.serve_args);
  if (a.vary.empty()) {
    GOODPUT_ASSIGN_OR_RETURN(Outcome o, RunOne(a, mode, w, ladder, "", base_args, "", rec));
    return std::vector<Outcome>{std::move(o)};
  }
  const bool sim = a.target.rfind("sim:", 0) == 0;
  const bool launched = a.target != "embedded" && !sim && !a.launch.empty();
  if (a.target != "embedded" && !sim && !(launched && a.launch.find("{value}") != std::string::npos)) {
    return Status::InvalidArgument("--vary restarts the server per value: use --target embedded or sim:GPU, or a "
                                   "URL with --launch 'COMMAND ... {value}'");
  }
  const size_t eq = a.vary.find('=');
  if (eq == std::string::npos || eq == 0) return Status::InvalidArgument("--vary must look like FLAG=V1,V2");
  const std::string flag = a.vary.substr(0, eq);
  std::vector<Outcome> outs;
  for (const std::string& value : Split(a.vary.substr(eq + 1), ',')) {
    if (value.empty()) return Status::InvalidArgument("--vary: empty value in '" + a.vary + "'");
    std::vector<std::string> args = base_args;
    args.push_back("--" + flag);
    args.push_back(value);
    GOODPUT_ASSIGN_OR_RETURN(Outcome o, RunOne(a, mode, w, ladder, flag + "=" + value, args, value, rec));
    outs.push_back(std::move(o));
  }
  return outs;
}

// max_num_seqs two ways, when the target is goodput serve and a closed-loop
// capacity was found.
std::string Advice(const Outcome& o, const Workload& w) {
  const auto kv = KvTokensFromStartupLog(o.startup);
  const auto& cap = o.sweep.capacity;
  if (!kv || !cap) return "";
  return MaxNumSeqsAdvice(*kv, w, o.sweep.points[*cap]);
}

void Print(const BenchArgs& a, const Workload& w, const std::vector<Outcome>& outs) {
  const SloSpec slo = w.Slo();
  for (const Outcome& o : outs) {
    if (!o.setting.empty()) std::cout << "=== " << o.setting << " ===\n";
    std::cout << fmt::format("target: {}\nworkload {} ({} requests per run), SLO: {}\n", o.target, w.name, w.requests,
                             slo.empty() ? std::string("none") : slo.ToString());
    for (const std::string& line : Split(o.startup, '\n')) {
      if (line.rfind("GPU KV cache size", 0) == 0 || line.rfind("Maximum concurrency", 0) == 0) {
        std::cout << "server: " << line << "\n";
      }
    }
    std::cout << "\n" << FormatPointTable(o.sweep.points) << "\n"
              << FormatCapacity(o.sweep.points, o.sweep.capacity, o.sweep.capped) << Advice(o, w);
    const auto notes = Diagnose(o.sweep.points, a.lag_threshold_ms / 1e3);
    for (const auto& n : notes) std::cout << "note: " << n << "\n";
    std::cout << "\n";
  }
}

std::string ToCsv(const std::vector<Outcome>& outs) {
  std::string s =
      "setting,load,arrival,concurrency,rate,repeats,throughput_tok_s,requests_s,per_request_tok_s,ttft_p50_s,"
      "ttft_p99_s,tpot_p50_s,tpot_p99_s,goodput_req_s,goodput_tok_s,throughput_spread,failed,send_lag_p99_s,holds,"
      "capacity\n";
  for (const auto& o : outs) {
    for (size_t i = 0; i < o.sweep.points.size(); ++i) {
      const PointResult& p = o.sweep.points[i];
      s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", o.setting, p.label,
                       ArrivalKindName(p.load.kind), p.load.concurrency, p.load.rate, p.repeats, p.throughput,
                       p.request_rate, p.per_request_speed, p.ttft_p50, p.ttft_p99, p.tpot_p50, p.tpot_p99, p.goodput,
                       p.goodput_tokens, p.throughput_spread, p.failed, p.send_lag_p99, p.holds ? 1 : 0,
                       o.sweep.capacity == i ? 1 : 0);
    }
  }
  return s;
}

boost::json::value ToJson(const std::vector<Outcome>& outs) {
  boost::json::array results;
  for (const auto& o : outs) {
    boost::json::array points;
    for (const auto& p : o.sweep.points) points.push_back(PointToJson(p));
    const auto& cap = o.sweep.capacity;
    results.push_back(boost::json::object{
        {"setting", o.setting},
        {"target", o.target},
        {"points", points},
        {"capacity", cap ? boost::json::value(o.sweep.points[*cap].label) : boost::json::value(nullptr)},
        {"capacity_capped", o.sweep.capped}});
  }
  return boost::json::object{{"results", results}};
}

// "AMD EPYC (2 CPUs)" from /proc/cpuinfo, for the ledger.
std::string HostCpu() {
  std::ifstream f("/proc/cpuinfo");
  std::string line, model;
  int cpus = 0;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      model = std::string(Trim(line.substr(line.find(':') + 1)));
      ++cpus;
    }
  }
  return model.empty() ? "unknown CPU" : fmt::format("{} ({} CPUs)", model, cpus);
}

RunInfo InfoFor(const BenchArgs& a, const Workload& w, const char* name) {
  RunInfo i;
  i.command = CommandLine().empty() ? std::string("goodput ") + name : CommandLine();
  i.target = a.target + (a.serve_args.empty() ? "" : " " + a.serve_args) + (a.vary.empty() ? "" : " --vary " + a.vary);
  i.model = a.model;
  i.hardware = a.target.rfind("sim:", 0) == 0 ? a.target : HostCpu();
  i.workload_name = w.name;
  std::ifstream f(a.workload);
  std::stringstream text;
  text << f.rdbuf();
  i.workload_text = text.str();
  i.slo = w.Slo().empty() ? "" : w.Slo().ToString();
  i.version = GOODPUT_VERSION;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  i.host = host;
  return i;
}

void Run(const BenchArgs& a, Mode mode, const char* name) {
  const auto fail = [&](const Status& st) {
    throw CLI::RuntimeError(fmt::format("goodput {}: {}", name, st.message()), 2);
  };
  auto w = LoadWithFlags(a);
  if (!w.ok()) fail(w.status());
  std::unique_ptr<Ledger> ledger;
  Recording rec;
  rec.save_requests = a.save_requests;
  if (!a.no_ledger) {
    auto opened = Ledger::Open(a.ledger);
    if (!opened.ok()) fail(opened.status());
    ledger = std::move(*opened);
    auto id = ledger->BeginRun(InfoFor(a, *w, name));
    if (!id.ok()) fail(id.status());
    rec = Recording{ledger.get(), *id, a.save_requests};
  }
  std::signal(SIGINT, [](int) { g_interrupted.store(true); });
  auto outs = RunAll(a, mode, *w, rec);
  std::signal(SIGINT, SIG_DFL);
  Progress("");
  if (!outs.ok()) {
    if (rec.ledger) (void)rec.ledger->FinishRun(rec.run, Interrupted() ? "interrupted" : "failed");
    if (Interrupted()) {
      std::cerr << fmt::format("goodput {}: interrupted; the points measured so far are kept as run {} in {}\n", name,
                               rec.run, a.ledger);
      throw CLI::RuntimeError("", 130);
    }
    fail(outs.status());
  }
  if (rec.ledger) {
    if (Status st = rec.ledger->FinishRun(rec.run, "complete"); !st.ok()) fail(st);
  }
  if (a.csv) {
    std::cout << ToCsv(*outs);
    return;
  }
  if (a.json) {
    boost::json::value v = ToJson(*outs);
    if (rec.ledger) v.as_object()["ledger_run"] = rec.run;
    std::cout << boost::json::serialize(v) << "\n";
    return;
  }
  Print(a, *w, *outs);
  if (rec.ledger) {
    std::cout << fmt::format("ledger: run {} in {} (which figures may be quoted: goodput ledger quote {}{})\n", rec.run,
                             a.ledger, rec.run, a.ledger == "goodput.db" ? "" : " --ledger " + a.ledger);
    // The report goes beside the ledger.
    const std::filesystem::path dir = std::filesystem::absolute(a.ledger).parent_path();
    const std::string report = (dir / fmt::format("goodput-report-{}.html", rec.run)).string();
    if (Status st = report::WriteHtmlReport(*rec.ledger, rec.run, report); st.ok()) {
      std::cout << "report: " << report << "\n";
    } else {
      std::cerr << "goodput " << name << ": " << st.message() << "\n";
    }
  }
}

void AddOne(CLI::App& app, Mode mode, const char* name, const char* help) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* c = app.add_subcommand(name, help);
  AddFlags(*c, *args, mode);
  c->callback([args, mode, name]() { Run(*args, mode, name); });
}

}  // namespace

void AddBenchCommands(CLI::App& app) {
  AddOne(app, Mode::kBench, "bench", "Measure one load point against a target: TTFT/TPOT, attainment, goodput");
  AddOne(app, Mode::kSweep, "sweep", "Measure a ladder of loads (--repeat runs each, medians) against a target");
  AddOne(app, Mode::kCapacity, "capacity", "Search the highest load at which every class holds its SLO on a target");
}

}  // namespace goodput
