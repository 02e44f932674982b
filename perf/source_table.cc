// The source document's table beside goodput sim's: every row of a table file
// (data/source-documents/003-b200-table.yaml, in the validation set's format
// plus the source's request lengths and its drafter) run through `goodput
// sim` with the drafter and without it, and each figure's error printed.
// Each row runs as the source measured it: a burst of as many requests as
// its concurrency (max_num_seqs the same), five runs, the figures their
// medians (the table file says why).
// With --derive, the workload the rows run is derived from the table first:
// the prompts' scale (in the shape of the source's own request lengths) from
// the lowest load's first token, the answers' mean from the highest load's
// throughput (the ceiling) and their spread from the next-lowest load's
// throughput (a small burst ends with its longest answer), each by bisection.
//
// Usage: source_table [--json] [--derive] [GOODPUT_BINARY] [TABLE_FILE]
//   (default: the goodput binary beside this program's directory and the data
//   directory's source-documents/003-b200-table.yaml). Exits 1 when the file
//   is malformed or a run fails; the errors themselves are figures.
#include <fmt/format.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <boost/json.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/data_dir.h"
#include "core/json_file.h"
#include "core/text.h"
#include "core/units.h"
#include "validation/validation_set.h"
#include "workload/length_dist.h"

using namespace goodput;
using namespace goodput::validation;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

struct Options {
  bool json = false;
  bool derive = false;
  std::string goodput;
  std::string table;
};

// The table file's rows and the two keys the validation format does not have.
struct Table {
  std::vector<Row> rows;
  std::string lengths;  // the source's request-length histogram
  std::string drafter;  // flags added for the runs with the drafter
};

Result<Table> ReadTable(const std::string& path) {
  Table t;
  GOODPUT_ASSIGN_OR_RETURN(t.rows, ReadSourceFile(path, DataDir() + "/workloads"));
  YAML::Node doc;
  try {
    doc = YAML::LoadFile(path);
    t.lengths = doc["lengths"] ? doc["lengths"].as<std::string>() : "";
    t.drafter = doc["drafter"] ? doc["drafter"].as<std::string>() : "";
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}: {}", path, e.msg));
  }
  if (t.lengths.empty() || t.drafter.empty())
    return Status::InvalidArgument(path + ": a source table needs 'lengths' and 'drafter' beside its rows");
  GOODPUT_RETURN_IF_ERROR(LengthDistribution::FromSpec(t.lengths).status().WithContext(path + ": lengths"));
  return t;
}

// The source's histogram scaled so its mean is `mean` tokens (every bin edge by the same factor).
std::string ScaledLengths(const std::string& spec, double mean) {
  const double factor = mean / LengthDistribution::FromSpec(spec)->Mean();
  std::string out;
  for (const std::string& bin : Split(spec, ',')) {
    const size_t dash = bin.find('-'), colon = bin.find(':');
    const auto edge = [&](const std::string& t) {  // the spec was checked when read; "0" is the only edge not a count
      const Result<int64_t> n = ParseTokenCount(t);
      return n.ok() ? std::llround(static_cast<double>(*n) * factor) : 0LL;
    };
    out += fmt::format("{}{}-{}:{}", out.empty() ? "" : ",", edge(bin.substr(0, dash)),
                       edge(bin.substr(dash + 1, colon - dash - 1)), bin.substr(colon + 1));
  }
  return out;
}

// The row's published figure `f`; nullptr when the row does not give it.
const validation::Published* FindFigure(const Row& r, Figure f) {
  for (const auto& p : r.figures)
    if (p.figure == f) return &p;
  return nullptr;
}

double Published(const Row& r, Figure f) {
  const auto* p = FindFigure(r, f);
  return p ? p->value : NAN;
}

bool Fitted(const Row& r, Figure f) {
  const auto* p = FindFigure(r, f);
  return p && !p->fitted.empty();
}

double Simulated(const json::value& sim, Figure f) {
  const Result<double> v = SimulatedFigure(sim, f);
  return v.ok() ? *v : NAN;
}

// Each statistic a figure may be read as, and the same figure's other reading.
struct Reading {
  Figure figure, other;
  const char* name;
};
constexpr Reading kReadings[] = {
    {Figure::kPerRequest, Figure::kPerRequestMean, "1 / TPOT p50"},
    {Figure::kPerRequestMean, Figure::kPerRequest, "1 / mean TPOT"},
    {Figure::kTtftP50, Figure::kTtftMean, "the p50"},
    {Figure::kTtftMean, Figure::kTtftP50, "the mean"},
};
const Reading& ReadingOf(Figure f) {
  for (const Reading& r : kReadings)
    if (r.figure == f) return r;
  return kReadings[0];  // unreachable: only the four figures above are read two ways
}

// How the table reads a figure: as the mean when a row publishes the mean's
// reading of `median` (per_request_mean_tok_s, ttft_mean_ms), else the p50's.
Figure ReadAs(const Row& r, Figure median) {
  return FindFigure(r, ReadingOf(median).other) ? ReadingOf(median).other : median;
}
Figure SpeedOf(const Row& r) { return ReadAs(r, Figure::kPerRequest); }
Figure FirstTokenOf(const Row& r) { return ReadAs(r, Figure::kTtftP50); }

// The source's runs at each load: a burst of `concurrency` requests, as many
// running at once (max_num_seqs), five runs, the figures their medians.
constexpr int kRuns = 5;
Row BurstOf(const Row& r) {
  Row b = r;
  b.requests = r.concurrency;
  b.concurrency = 0;  // no load given: every request at once (WorkloadYaml)
  b.args += fmt::format("{}--max-num-seqs {}", b.args.empty() ? "" : " ", r.concurrency);
  b.repeat = kRuns;
  return b;
}

// One row's figures: the source's, the simulator's with the drafter, and without it.
struct Line {
  const Row* row = nullptr;
  json::value with, without;
};

Result<std::vector<Line>> SimulateTable(const Options& o, const Table& t) {
  std::vector<Line> lines;
  for (const Row& r : t.rows) {
    std::fprintf(stderr, "source_table: concurrency %d ...\n", r.concurrency);
    Line l;
    l.row = &r;
    GOODPUT_ASSIGN_OR_RETURN(l.with, SimulateRow(o.goodput, BurstOf(r), t.drafter, false));
    GOODPUT_ASSIGN_OR_RETURN(l.without, SimulateRow(o.goodput, BurstOf(r), "", false));
    lines.push_back(std::move(l));
  }
  return lines;
}

// The rows' workload, read once for --derive, which replaces its (first) class's lengths.
struct WorkloadTemplate {
  YAML::Node doc;
  std::string output;  // the class's output spec as the file gives it
};

Result<WorkloadTemplate> LoadTemplate(const std::string& path) {
  WorkloadTemplate t;
  try {
    t.doc = YAML::LoadFile(path);
    t.output = t.doc["classes"][0]["output"].as<std::string>("");
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}: {}", path, e.msg));
  }
  return t;
}

// The workload with the class's prompt and output replaced, in a scratch file.
Result<std::string> WriteWorkload(const WorkloadTemplate& t, const std::string& prompt, const std::string& output) {
  YAML::Node w = YAML::Clone(t.doc);
  w["classes"][0]["prompt"] = prompt;
  w["classes"][0]["output"] = output;
  YAML::Emitter out;
  out << w;
  const std::string path = (fs::temp_directory_path() / fmt::format("source_table_{}.yaml", getpid())).string();
  GOODPUT_RETURN_IF_ERROR(WriteFileAtomically(path, std::string(out.c_str()) + "\n"));
  return path;
}

struct Derived {
  WorkloadTemplate workload;
  double answers = 0, prompts = 0;  // means, tokens
  double spread = 0;                // the answers' lognormal sigma
  std::string prompt, output;       // the workload's lines
  double first_token = 0;           // the simulated first token (as the table reads it) at the lowest load, ms
  double ceiling = 0;               // the simulated throughput at the highest load under them
  double small_burst = 0;           // ... and at the next-lowest load
};

// The searches' start: the workload file's answers, which must be lognormal:MEAN,SIGMA (LengthDistribution checks
// the numbers).
Status StartFromAnswers(const std::string& spec, const std::string& path, Derived& d) {
  const auto answers = LengthDistribution::FromSpec(spec);
  if (!answers.ok() || spec.rfind("lognormal:", 0) != 0)
    return Status::InvalidArgument(path + ": --derive needs the output as lognormal:MEAN,SIGMA");
  d.answers = answers->Mean();
  d.spread = std::stod(spec.substr(spec.find(',') + 1));
  return Status::Ok();
}

std::string AnswersSpec(const Derived& d) { return fmt::format("lognormal:{:.0f},{:.3g}", d.answers, d.spread); }

// `figure` of row `r` (as the source ran it) under prompts and answers of `d`'s means.
Result<double> SimulateUnder(const Options& o, const Table& t, const Derived& d, const Row& r, Figure figure) {
  Row b = BurstOf(r);
  GOODPUT_ASSIGN_OR_RETURN(b.workload, WriteWorkload(d.workload, ScaledLengths(t.lengths, d.prompts), AnswersSpec(d)));
  auto sim = SimulateRow(o.goodput, b, t.drafter, false);
  fs::remove(b.workload);
  if (!sim.ok()) return sim.status();
  const double v = Simulated(*sim, figure);
  std::fprintf(stderr, "source_table: prompts %.0f, answers %.0f tokens (sigma %.3g): %s %.4g at concurrency %d\n",
               d.prompts, d.answers, d.spread, FigureKey(figure), v, r.concurrency);
  return v;
}

// The x in [lo, hi] where the rising `f` reaches `target`, by bisection on a
// log scale: of the points tried, the one whose value came nearest, since `f`
// may move in steps (a first token moves as a prompt's chunks do) and the
// target lie inside one.
Result<double> Bisect(double lo, double hi, double target, const std::function<Result<double>(double)>& f) {
  double best = std::sqrt(lo * hi), best_miss = INFINITY;
  for (int i = 0; i < 24 && hi / lo > 1.002; ++i) {
    const double mid = std::sqrt(lo * hi);
    GOODPUT_ASSIGN_OR_RETURN(const double v, f(mid));
    if (std::fabs(v - target) < best_miss) best = mid, best_miss = std::fabs(v - target);
    (v < target ? lo : hi) = mid;
  }
  return best;
}

// One round of the derivation, each quantity found with the others held: the
// prompts' mean that gives the lowest load's first token (longer prompts,
// later first tokens), the answers' mean that gives the highest load's
// throughput (longer answers, less time in prefill) and their spread that
// gives the next-lowest load's (a wider spread, a longer last answer for a
// small burst to wait on: the throughput falls, so the search runs on its
// negative).
Status DeriveRound(const Options& o, const Table& t, Derived& d) {
  const Row &low = t.rows.front(), &small = t.rows[1], &top = t.rows.back();
  GOODPUT_ASSIGN_OR_RETURN(d.prompts, Bisect(256, 500'000, Published(low, FirstTokenOf(low)), [&](double p) {
                             d.prompts = p;
                             return SimulateUnder(o, t, d, low, FirstTokenOf(low));
                           }));
  GOODPUT_ASSIGN_OR_RETURN(d.answers, Bisect(16, 100'000, Published(top, Figure::kThroughput), [&](double a) {
                             d.answers = a;
                             return SimulateUnder(o, t, d, top, Figure::kThroughput);
                           }));
  GOODPUT_ASSIGN_OR_RETURN(
      d.spread, Bisect(0.01, 2, -Published(small, Figure::kThroughput), [&](double s) -> Result<double> {
        d.spread = s;
        GOODPUT_ASSIGN_OR_RETURN(const double v, SimulateUnder(o, t, d, small, Figure::kThroughput));
        return -v;
      }));
  return Status::Ok();
}

// The three quantities in turn until none moves.
Result<Derived> Derive(const Options& o, Table& t) {
  Derived d;
  const Row &low = t.rows.front(), &top = t.rows.back();
  if (t.rows.size() < 3 || !(Published(low, FirstTokenOf(low)) > 0) ||
      !(Published(t.rows[1], Figure::kThroughput) > 0) || !(Published(top, Figure::kThroughput) > 0)) {
    return Status::InvalidArgument(
        low.where +
        ": --derive needs three loads or more, the lowest's first token (ttft_p50_ms or ttft_mean_ms) and the "
        "next-lowest's and highest's throughput");
  }
  GOODPUT_ASSIGN_OR_RETURN(d.workload, LoadTemplate(top.workload));
  GOODPUT_RETURN_IF_ERROR(StartFromAnswers(d.workload.output, top.workload, d));
  d.prompts = LengthDistribution::FromSpec(t.lengths)->Mean();
  for (int round = 0; round < 4; ++round) {
    const Derived before = d;
    GOODPUT_RETURN_IF_ERROR(DeriveRound(o, t, d));
    const auto moved = [](double now, double was) { return std::fabs(now / was - 1) >= 0.005; };
    if (!moved(d.prompts, before.prompts) && !moved(d.answers, before.answers) && !moved(d.spread, before.spread))
      break;
  }
  GOODPUT_ASSIGN_OR_RETURN(d.first_token, SimulateUnder(o, t, d, low, FirstTokenOf(low)));
  GOODPUT_ASSIGN_OR_RETURN(d.small_burst, SimulateUnder(o, t, d, t.rows[1], Figure::kThroughput));
  GOODPUT_ASSIGN_OR_RETURN(d.ceiling, SimulateUnder(o, t, d, top, Figure::kThroughput));
  d.prompt = ScaledLengths(t.lengths, d.prompts);
  d.output = AnswersSpec(d);
  return d;
}

double Error(double simulated, double published) { return simulated / published - 1; }

// "+5.3%", with "*" when the figure was used to derive the workload.
std::string Cell(const Row& r, Figure f, double simulated) {
  return fmt::format("{:+.0f}%{}", 100 * Error(simulated, Published(r, f)), Fitted(r, f) ? "*" : " ");
}

// "per-request: ... read as 1 / mean TPOT; read as 1 / TPOT p50 the errors would be -4% ...": the source names
// neither statistic, so the table shows what the other reading gives.
void PrintOtherReading(const std::vector<Line>& lines, const char* what, Figure f) {
  std::printf("%s read as %s; read as %s the errors would be", what, ReadingOf(f).name,
              ReadingOf(ReadingOf(f).other).name);
  for (const Line& l : lines)
    std::printf(" %+.0f%%", 100 * Error(Simulated(l.with, ReadingOf(f).other), Published(*l.row, f)));
  std::printf("\n");
}

void PrintTable(const std::vector<Line>& lines, const Table& t, const std::string& workload) {
  const Row& r0 = *lines.front().row;
  std::printf(
      "$ goodput sim --model %s --gpu %s --weights %s --workload %s --requests C --max-num-seqs C --repeat %d %s\n\n",
      r0.model.c_str(), r0.gpu.c_str(), r0.weights.c_str(), workload.c_str(), kRuns, t.drafter.c_str());
  std::printf("%11s  %-21s  %-20s  %-12s  %-21s  %s\n", "", "throughput (tok/s)", "per-request (tok/s)", "decoding",
              "first token (s)", "no drafter");
  std::printf("%11s  %6s %6s %7s  %6s %5s %7s  %5s %6s  %6s %6s %7s  %6s %6s\n", "concurrency", "source", "sim",
              "error", "source", "sim", "error", "src", "sim", "source", "sim", "error", "tok/s", "per-r.");
  for (const Line& l : lines) {
    const Row& r = *l.row;
    const Figure speed = SpeedOf(r);
    const double x = Simulated(l.with, Figure::kThroughput), s = Simulated(l.with, speed);
    const double px = Published(r, Figure::kThroughput), ps = Published(r, speed);
    const Figure first = FirstTokenOf(r);
    const double ttft = Simulated(l.with, first);
    std::printf("%11d  %6.0f %6.0f %7s  %6.0f %5.0f %7s  %5.0f %6.0f  %6.2f %6.2f %7s  %6.0f %6.0f\n", r.concurrency,
                px, x, Cell(r, Figure::kThroughput, x).c_str(), ps, s, Cell(r, speed, s).c_str(), px / ps, x / s,
                Published(r, first) / 1e3, ttft / 1e3, Cell(r, first, ttft).c_str(),
                Simulated(l.without, Figure::kThroughput), Simulated(l.without, speed));
  }
  std::printf(
      "* a figure the workload was derived from; the rest are held out\n"
      "decoding: requests decoding at once on average (throughput / per-request); the others of the burst wait "
      "for a first token or are done\n");
  const Figure speed = SpeedOf(r0);
  PrintOtherReading(lines, "per-request: one user's speed", speed);
  PrintOtherReading(lines, "first token", FirstTokenOf(r0));
  for (Figure f : {Figure::kThroughput, speed}) {
    int held = 0, within = 0;
    for (const Line& l : lines) {
      if (Fitted(*l.row, f)) continue;
      ++held;
      within += std::fabs(Error(Simulated(l.with, f), Published(*l.row, f))) <= 0.15;
    }
    std::printf("%s: %d of %d held-out figures within 15%% of the source\n", FigureKey(f), within, held);
  }
}

json::object LineJson(const Line& l) {
  json::object o{{"concurrency", l.row->concurrency}};
  for (Figure f : {Figure::kThroughput, SpeedOf(*l.row), FirstTokenOf(*l.row)}) {
    const double sim = Simulated(l.with, f);
    o[FigureKey(f)] = {{"source", Published(*l.row, f)},
                       {"sim", sim},
                       {"error", Error(sim, Published(*l.row, f))},
                       {"derived_from", Fitted(*l.row, f)},
                       {"sim_without_drafter", Simulated(l.without, f)}};
  }
  return o;
}

bool ParseOptions(int argc, char** argv, Options& o) {
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      o.json = true;
    } else if (a == "--derive") {
      o.derive = true;
    } else if (a.rfind("--", 0) == 0 || positional.size() == 2) {
      return false;
    } else {
      positional.push_back(a);
    }
  }
  const fs::path self = fs::canonical("/proc/self/exe");
  o.goodput = positional.size() > 0 ? positional[0] : (self.parent_path().parent_path() / "goodput").string();
  o.table = positional.size() > 1 ? positional[1] : DataDir() + "/source-documents/003-b200-table.yaml";
  return true;
}

// Derives the workload, points every row at it (a scratch file) and prints how it was derived.
Result<std::string> DeriveWorkload(const Options& o, Table& t, json::object& out) {
  GOODPUT_ASSIGN_OR_RETURN(const Derived d, Derive(o, t));
  GOODPUT_ASSIGN_OR_RETURN(const std::string path, WriteWorkload(d.workload, d.prompt, d.output));
  for (Row& r : t.rows) r.workload = path;
  const Row &low = t.rows.front(), &small = t.rows[1], &top = t.rows.back();
  out["derived"] = {{"prompts_mean", d.prompts},
                    {"answers_mean", d.answers},
                    {"answers_sigma", d.spread},
                    {"prompt", d.prompt},
                    {"output", d.output},
                    {"first_token_ms_sim", d.first_token},
                    {"small_burst_sim", d.small_burst},
                    {"ceiling_sim", d.ceiling}};
  if (!o.json) {
    std::printf(
        "derived from the table (each load a burst of that many requests, %d runs):\n"
        "  prompts: mean %.0f tokens, the source's lengths (%s) scaled so a burst of %d gets its first tokens in "
        "%.2f s (%s; the source's %.2f)\n",
        kRuns, d.prompts, t.lengths.c_str(), low.concurrency, d.first_token / 1e3, ReadingOf(FirstTokenOf(low)).name,
        Published(low, FirstTokenOf(low)) / 1e3);
    std::printf("  answers: mean %.0f tokens, so a burst of %d gives %.0f tok/s (the source's ceiling, %.0f)\n",
                d.answers, top.concurrency, d.ceiling, Published(top, Figure::kThroughput));
    std::printf(
        "  answers' spread: lognormal sigma %.3g, so a burst of %d, which ends with its longest answer, gives %.0f "
        "tok/s (the source's %.0f)\n",
        d.spread, small.concurrency, d.small_burst, Published(small, Figure::kThroughput));
    std::printf("  the workload's class:\n    prompt: %s\n    output: %s\n\n", d.prompt.c_str(), d.output.c_str());
  }
  return path;
}

Status Run(const Options& o) {
  GOODPUT_ASSIGN_OR_RETURN(Table t, ReadTable(o.table));
  json::object out;
  std::string workload = fs::relative(t.rows.front().workload, fs::path(DataDir()).parent_path()).string(), scratch;
  if (o.derive) {
    GOODPUT_ASSIGN_OR_RETURN(scratch, DeriveWorkload(o, t, out));
    workload = "(the derived workload)";
  }
  auto lines = SimulateTable(o, t);
  if (!scratch.empty()) fs::remove(scratch);
  if (!lines.ok()) return lines.status();
  if (!o.json) {
    PrintTable(*lines, t, workload);
    return Status::Ok();
  }
  json::array rows;
  for (const Line& l : *lines) rows.push_back(LineJson(l));
  out["rows"] = std::move(rows);
  std::printf("%s\n", json::serialize(out).c_str());
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseOptions(argc, argv, o)) {
    std::fprintf(stderr, "usage: source_table [--json] [--derive] [GOODPUT_BINARY] [TABLE_FILE]\n");
    return 2;
  }
  const Status st = Run(o);
  if (st.ok()) return 0;
  std::fprintf(stderr, "source_table: %s\n", st.message().c_str());
  return 1;
}
