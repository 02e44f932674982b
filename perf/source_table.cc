// The source document's table beside goodput sim's: every row of a table file
// (data/source-documents/003-b200-table.yaml, in the validation set's format
// plus the source's request lengths and its drafter) run through `goodput
// sim` with the drafter and without it, and each figure's error printed.
// With --derive, the workload the rows run is derived from the table first:
// the answers' mean from the lowest load by Little's law, the prompts' scale
// from the highest load's throughput (the ceiling) by bisection, in the shape
// of the source's own request lengths.
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
    GOODPUT_ASSIGN_OR_RETURN(l.with, SimulateRow(o.goodput, r, t.drafter, false));
    GOODPUT_ASSIGN_OR_RETURN(l.without, SimulateRow(o.goodput, r, "", false));
    lines.push_back(std::move(l));
  }
  return lines;
}

// Little's law on one row: c clients each wait TTFT for the first token, then
// read O tokens at s tokens/s, so X = c O / (TTFT + O / s) and
// O = X TTFT / (c - X / s).
Result<double> AnswersMean(const Row& r) {
  const double x = Published(r, Figure::kThroughput), s = Published(r, Figure::kPerRequest);
  const double ttft = Published(r, Figure::kTtftP50) / 1e3;
  if (!(r.concurrency > x / s) || !(ttft > 0))
    return Status::InvalidArgument(r.where + ": Little's law needs throughput < concurrency x per-request speed");
  return x * ttft / (r.concurrency - x / s);
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
  std::string prompt, output;       // the workload's lines
  double ceiling = 0;               // the simulated throughput at the highest load under them
};

// The answers' spread is the shipped workload's (the source gives none): its output must be lognormal:MEAN,SIGMA.
Result<std::string> AnswersSpec(const std::string& spec, const std::string& path, double mean) {
  if (spec.rfind("lognormal:", 0) != 0 || spec.find(',') == std::string::npos)
    return Status::InvalidArgument(path + ": --derive needs the output as lognormal:MEAN,SIGMA");
  return fmt::format("lognormal:{:.0f}{}", mean, spec.substr(spec.find(',')));
}

// The prompts' mean that makes the highest load's simulated throughput the
// source's, by bisection on a log scale (throughput falls as prompts grow).
Result<Derived> Derive(const Options& o, Table& t) {
  Derived d;
  GOODPUT_ASSIGN_OR_RETURN(d.answers, AnswersMean(t.rows.front()));
  const Row& top = t.rows.back();
  GOODPUT_ASSIGN_OR_RETURN(d.workload, LoadTemplate(top.workload));
  GOODPUT_ASSIGN_OR_RETURN(d.output, AnswersSpec(d.workload.output, top.workload, d.answers));
  const double target = Published(top, Figure::kThroughput);
  double lo = 256, hi = 500'000;
  for (int i = 0; i < 24 && hi / lo > 1.002; ++i) {
    const double mid = std::sqrt(lo * hi);
    Row r = top;
    GOODPUT_ASSIGN_OR_RETURN(r.workload, WriteWorkload(d.workload, ScaledLengths(t.lengths, mid), d.output));
    GOODPUT_ASSIGN_OR_RETURN(const json::value sim, SimulateRow(o.goodput, r, t.drafter, false));
    fs::remove(r.workload);
    const double x = Simulated(sim, Figure::kThroughput);
    std::fprintf(stderr, "source_table: prompts of mean %.0f tokens: %.0f tok/s at concurrency %d\n", mid, x,
                 top.concurrency);
    (x > target ? lo : hi) = mid;
    d.ceiling = x;
  }
  d.prompts = std::sqrt(lo * hi);
  d.prompt = ScaledLengths(t.lengths, d.prompts);
  return d;
}

double Error(double simulated, double published) { return simulated / published - 1; }

// "+5.3%", with "*" when the figure was used to derive the workload.
std::string Cell(const Row& r, Figure f, double simulated) {
  return fmt::format("{:+.0f}%{}", 100 * Error(simulated, Published(r, f)), Fitted(r, f) ? "*" : " ");
}

void PrintTable(const std::vector<Line>& lines, const Table& t, const std::string& workload) {
  const Row& r0 = *lines.front().row;
  std::printf("$ goodput sim --model %s --gpu %s --weights %s --workload %s -c C %s\n\n", r0.model.c_str(),
              r0.gpu.c_str(), r0.weights.c_str(), workload.c_str(), t.drafter.c_str());
  std::printf("%11s  %-21s  %-20s  %-12s  %-21s  %s\n", "", "throughput (tok/s)", "per-request (tok/s)", "decoding",
              "first token (s)", "no drafter");
  std::printf("%11s  %6s %6s %7s  %6s %5s %7s  %5s %6s  %6s %6s %7s  %6s %6s\n", "concurrency", "source", "sim",
              "error", "source", "sim", "error", "src", "sim", "source", "sim", "error", "tok/s", "per-r.");
  for (const Line& l : lines) {
    const Row& r = *l.row;
    const double x = Simulated(l.with, Figure::kThroughput), s = Simulated(l.with, Figure::kPerRequest);
    const double px = Published(r, Figure::kThroughput), ps = Published(r, Figure::kPerRequest);
    const double ttft = Simulated(l.with, Figure::kTtftP50);
    std::printf("%11d  %6.0f %6.0f %7s  %6.0f %5.0f %7s  %5.0f %6.0f  %6.2f %6.2f %7s  %6.0f %6.0f\n", r.concurrency,
                px, x, Cell(r, Figure::kThroughput, x).c_str(), ps, s, Cell(r, Figure::kPerRequest, s).c_str(), px / ps,
                x / s, Published(r, Figure::kTtftP50) / 1e3, ttft / 1e3, Cell(r, Figure::kTtftP50, ttft).c_str(),
                Simulated(l.without, Figure::kThroughput), Simulated(l.without, Figure::kPerRequest));
  }
  std::printf(
      "* a figure the workload was derived from; the rest are held out\n"
      "decoding: requests decoding at once (throughput / per-request); the other clients wait for a first "
      "token\n");
  for (Figure f : {Figure::kThroughput, Figure::kPerRequest}) {
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
  for (Figure f : {Figure::kThroughput, Figure::kPerRequest, Figure::kTtftP50}) {
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
  const Row& low = t.rows.front();
  // Every row implies its own answers' mean by the same law; one workload gives them all only if they agree.
  json::array by_row;
  std::string by_row_text;
  for (const Row& r : t.rows) {
    const Result<double> answers = AnswersMean(r);
    by_row.push_back({{"concurrency", r.concurrency},
                      {"answers_mean", answers.ok() ? json::value(*answers) : json::value(nullptr)}});
    by_row_text += fmt::format("{}{} at {}", by_row_text.empty() ? "" : ", ",
                               answers.ok() ? fmt::format("{:.0f}", *answers) : std::string("none"), r.concurrency);
  }
  out["derived"] = {{"answers_mean", d.answers}, {"answers_by_row", std::move(by_row)},
                    {"prompts_mean", d.prompts}, {"prompt", d.prompt},
                    {"output", d.output},        {"ceiling_sim", d.ceiling}};
  if (!o.json) {
    std::printf(
        "derived from the table:\n  answers: mean %.0f tokens (Little's law on concurrency %d: %.0f tok/s x "
        "%.2f s / (%d - %.0f / %.0f))\n",
        d.answers, low.concurrency, Published(low, Figure::kThroughput), Published(low, Figure::kTtftP50) / 1e3,
        low.concurrency, Published(low, Figure::kThroughput), Published(low, Figure::kPerRequest));
    std::printf("  the same law on every row: %s clients\n", by_row_text.c_str());
    std::printf("  prompts: mean %.0f tokens, the source's lengths (%s) scaled so concurrency %d gives %.0f tok/s\n",
                d.prompts, t.lengths.c_str(), t.rows.back().concurrency, Published(t.rows.back(), Figure::kThroughput));
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
