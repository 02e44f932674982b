// The simulator against the public validation set: every row of
// data/validation/*.yaml (GPU serving figures someone published, with their
// sources) run through `goodput sim` as a user would, with catalog defaults
// and no calibration, then the error of every figure and the median absolute
// errors by figure kind and by group (card, engine, source, weight format,
// tensor parallelism), all figures and those no catalog factor was fitted to,
// and how much of the held-out error is left within each source and each
// deployment once its own median error is taken out (ErrorWithinGroups).
//
// Usage: published_validation [--json] [--engine-kind KIND [--fit [--hold-kernel-latency S]]]
//                             [--sim-args FLAGS] [GOODPUT_BINARY] [VALIDATION_DIR]
//   (default: the goodput binary beside this program's directory and the data
//   directory's validation/). Exits 1 when a file is malformed or a row fails
//   to simulate, naming it; the errors themselves are figures, not a verdict.
//   --engine-kind keeps that engine's rows; --sim-args adds flags to every
//   command; --fit searches the engine's host costs (step overhead, per-request
//   cost, front end: data/hardware/engines.json) on its rows and judges each
//   source under the costs fitted without it (perf/validation/host_fit.h), with the GPU
//   kernel latency (data/hardware/gpus.json) searched beside them unless
//   --hold-kernel-latency holds it at S seconds.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/data_dir.h"
#include "validation/host_fit.h"
#include "validation/validation_set.h"

using namespace goodput;
using namespace goodput::validation;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

struct Options {
  bool json = false;
  std::string engine_kind;  // only the rows of this engine kind; empty: all
  std::string sim_args;     // flags added to every row's command (what-ifs: --per-request-cost 2e-5)
  bool fit = false;         // fit the engine kind's host costs, leaving one source out at a time
  std::vector<double> kernel_latencies = HostGrid{}.kernel_latency_s;  // the fit's kernel-latency axis
  bool quiet = false;       // no command lines on stderr
  std::string goodput;
  std::string dir;
};

std::string RowLabel(const Row& r) {
  const std::string load = r.concurrency > 0 ? fmt::format("c={}", r.concurrency)
                           : r.rate > 0      ? fmt::format("{:g}/s", r.rate)
                                             : std::string("all at once");
  const std::string work =
      r.workload.empty() ? fmt::format("{} -> {}", r.prompt, r.output) : fs::path(r.workload).stem().string();
  return fmt::format("{} {} x{} {} | {} | {}", r.model, r.gpu, r.tp, r.weights.empty() ? "auto" : r.weights, work,
                     load);
}

std::string SourceId(const Row& r) { return fs::path(r.where.substr(0, r.where.rfind(':'))).stem().string(); }

// Simulates one row: its figures compared, or the reason it could not run.
Result<std::vector<Outcome>> Simulate(const Row& row, const Options& o) {
  GOODPUT_ASSIGN_OR_RETURN(const json::value sim, SimulateRow(o.goodput, row, o.sim_args, !o.quiet));
  std::vector<Outcome> outcomes;
  for (const Published& p : row.figures) {
    GOODPUT_ASSIGN_OR_RETURN(double simulated, SimulatedFigure(sim, p.figure));
    outcomes.push_back({&row, p, simulated});
  }
  return outcomes;
}

void PrintOutcome(const Outcome& o) {
  std::printf("%-26s %-60s %-12s %12.5g %12.5g %+7.1f%%%s\n", SourceId(*o.row).c_str(), RowLabel(*o.row).c_str(),
              FigureKey(o.published.figure), o.published.value, o.simulated, 100 * o.Error(),
              o.published.fitted.empty() ? "" : "  (fitted)");
}

void PrintSummary(const std::vector<GroupSummary>& groups, const char* title) {
  std::printf("\n%s\n%-58s %5s %12s %12s\n", title, "figures", "n", "median |err|", "above");
  for (const auto& g : groups)
    std::printf("%-58s %5d %11.1f%% %11.0f%%\n", g.group.c_str(), g.count, 100 * g.median_abs_error,
                100 * g.share_above);
}

json::array SummaryJson(const std::vector<GroupSummary>& groups) {
  json::array a;
  for (const auto& g : groups)
    a.push_back({{"group", g.group},
                 {"count", g.count},
                 {"median_abs_error", g.median_abs_error},
                 {"share_above", g.share_above}});
  return a;
}

constexpr const char* kKinds[] = {"throughput", "tpot", "ttft"};

// The held-out errors left within sources and within deployments (ErrorWithinGroups).
void PrintWithinGroups(const std::vector<Outcome>& outcomes) {
  std::printf("\nHeld out, each group's median error taken out (an oracle, not a model: what lies within groups)\n");
  for (const char* kind : kKinds) {
    for (const WithinGroups& w : ErrorWithinGroups(outcomes, kind))
      std::printf("%-10s by %-10s %4d groups %5d figures %11.1f%%\n", kind, w.by.c_str(), w.groups, w.count,
                  100 * w.median_abs_error);
  }
}

json::array WithinGroupsJson(const std::vector<Outcome>& outcomes) {
  json::array a;
  for (const char* kind : kKinds) {
    for (const WithinGroups& w : ErrorWithinGroups(outcomes, kind))
      a.push_back({{"figure", kind},
                   {"by", w.by},
                   {"groups", w.groups},
                   {"count", w.count},
                   {"median_abs_error", w.median_abs_error}});
  }
  return a;
}

void PrintJson(const std::vector<Outcome>& outcomes, size_t sources, const std::vector<std::string>& failed) {
  json::array rows;
  for (const Outcome& o : outcomes)
    rows.push_back({{"where", o.row->where},
                    {"source", o.row->source},
                    {"url", o.row->url},
                    {"row", RowLabel(*o.row)},
                    {"figure", FigureKey(o.published.figure)},
                    {"published", o.published.value},
                    {"simulated", o.simulated},
                    {"error", o.Error()},
                    {"fitted", o.published.fitted}});
  json::array fails(failed.begin(), failed.end());
  json::object doc{{"sources", sources},
                   {"figures", rows},
                   {"failed", fails},
                   {"summary", SummaryJson(Summarise(outcomes, false))},
                   {"summary_held_out", SummaryJson(Summarise(outcomes, true))},
                   {"held_out_within_groups", WithinGroupsJson(outcomes)}};
  std::printf("%s\n", json::serialize(doc).c_str());
}

bool ParseOptions(int argc, char** argv, Options& o) {
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json")
      o.json = true;
    else if (a == "--fit")
      o.fit = o.quiet = true;
    else if (a == "--hold-kernel-latency" && i + 1 < argc) {
      char* end = nullptr;
      const double s = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(s >= 0)) return false;
      o.kernel_latencies = {s};
    }
    else if ((a == "--engine-kind" || a == "--sim-args") && i + 1 < argc)
      (a == "--engine-kind" ? o.engine_kind : o.sim_args) = argv[++i];
    else if (a == "-h" || a == "--help")
      return false;
    else
      positional.push_back(a);
  }
  if (positional.size() > 2 || (o.fit && (o.engine_kind.empty() || o.json))) return false;
  const fs::path self = fs::canonical("/proc/self/exe");
  o.goodput = positional.size() > 0 ? positional[0] : (self.parent_path().parent_path() / "goodput").string();
  o.dir = positional.size() > 1 ? positional[1] : DataDir() + "/validation";
  return true;
}

// Every figure of the rows of `o.engine_kind` (all when empty) under `o`'s
// flags; rows that fail to simulate go to `failed`.
std::vector<Outcome> SimulateAll(const std::vector<Row>& rows, const Options& o, std::vector<std::string>& failed) {
  std::vector<Outcome> outcomes;
  for (const Row& row : rows) {
    if (!o.engine_kind.empty() && row.engine_kind != o.engine_kind) continue;
    auto got = Simulate(row, o);
    if (!got.ok())
      failed.push_back(got.status().message());
    else
      outcomes.insert(outcomes.end(), got->begin(), got->end());
  }
  return outcomes;
}

std::set<std::string> SourcesOf(const std::vector<Row>& rows, const std::string& engine_kind) {
  std::set<std::string> out;
  for (const Row& r : rows)
    if (engine_kind.empty() || r.engine_kind == engine_kind) out.insert(r.source);
  return out;
}

std::string KindsLine(const std::vector<Outcome>& outcomes) {
  std::string line;
  for (const auto& g : Summarise(outcomes, true))
    if (g.group.find(" / ") == std::string::npos)
      line += fmt::format("  {} {:.1f}% (n {}, {:.0f}% above)", g.group, 100 * g.median_abs_error, g.count,
                          100 * g.share_above);
  return line;
}

// The engine kind's host costs fitted on all its sources, then each source
// under the factors fitted without it.
int RunFit(const std::vector<Row>& rows, Options o) {
  std::map<HostFactors, std::vector<Outcome>> memo;
  std::vector<std::string> failed;
  const EvaluateHost evaluate = [&](const HostFactors& h) -> const std::vector<Outcome>& {
    auto [it, fresh] = memo.try_emplace(h);
    if (fresh) {
      std::fprintf(stderr, "fit: %s (%zu settings simulated)\n", h.Flags().c_str(), memo.size());
      Options with = o;
      with.sim_args = (o.sim_args.empty() ? "" : o.sim_args + " ") + h.Flags();
      it->second = SimulateAll(rows, with, failed);
    }
    return it->second;
  };
  const std::set<std::string> sources = SourcesOf(rows, o.engine_kind);
  HostGrid grid;
  grid.kernel_latency_s = o.kernel_latencies;
  const HostFactors all = FitHostFactors(grid, evaluate, sources);
  std::printf("fitted on all %zu %s sources: %s\n\n", sources.size(), o.engine_kind.c_str(), all.Flags().c_str());
  std::vector<Outcome> held;
  for (const auto& [source, h] : LeaveOneSourceOut(grid, evaluate, sources)) {
    std::vector<Outcome> mine;
    for (const Outcome& out : evaluate(h))
      if (out.row->source == source) mine.push_back(out);
    held.insert(held.end(), mine.begin(), mine.end());
    std::printf("without %s: %s\n  its figures:%s\n", source.c_str(), h.Flags().c_str(), KindsLine(mine).c_str());
  }
  std::printf("\neach source under the factors fitted without it:%s\n", KindsLine(held).c_str());
  std::vector<std::string> unused;
  std::printf("the catalog's factors as they stand:%s\n", KindsLine(SimulateAll(rows, o, unused)).c_str());
  for (const auto& f : failed) std::fprintf(stderr, "published_validation: %s\n", f.c_str());
  return failed.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseOptions(argc, argv, o)) {
    std::fprintf(stderr, "%s",
                 fmt::format("usage: published_validation [--json] [--engine-kind {} [--fit [--hold-kernel-latency "
                             "S]]] [--sim-args FLAGS] [GOODPUT_BINARY] [VALIDATION_DIR]\n",
                             fmt::join(kEngineKinds, "|"))
                     .c_str());
    return 2;
  }
  auto rows = ReadValidationSet(o.dir, DataDir() + "/workloads");
  if (!rows.ok()) return std::fprintf(stderr, "published_validation: %s\n", rows.status().message().c_str()), 1;
  if (o.fit) return RunFit(*rows, o);
  std::vector<std::string> failed;
  const std::vector<Outcome> outcomes = SimulateAll(*rows, o, failed);
  const std::set<std::string> sources = SourcesOf(*rows, o.engine_kind);
  if (o.json) {
    PrintJson(outcomes, sources.size(), failed);
  } else {
    std::printf("%-26s %-60s %-12s %12s %12s %8s\n", "source", "row", "figure", "published", "simulated", "error");
    for (const Outcome& out : outcomes) PrintOutcome(out);
    PrintSummary(Summarise(outcomes, false), "All figures:");
    PrintSummary(Summarise(outcomes, true), "Held out (no catalog factor fitted to them):");
    PrintWithinGroups(outcomes);
    std::printf("\n%zu figures from %zu sources; %zu rows failed\n", outcomes.size(), sources.size(), failed.size());
  }
  for (const auto& f : failed) std::fprintf(stderr, "published_validation: %s\n", f.c_str());
  return failed.empty() ? 0 : 1;
}
