#include "cli/ledger_command.h"

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/units.h"
#include "ledger/ledger.h"
#include "ledger/merge.h"
#include "ledger/quote.h"
#include "report/html_report.h"
#include "measure/point_json.h"
#include "measure/point_report.h"

namespace goodput {
namespace {

struct LedgerArgs {
  std::string path = "goodput.db";
  int64_t run = 0;
  bool json = false;
  std::string out;  // report: the HTML file (default goodput-report-RUN.html)
  std::string command = "goodput ledger";  // what errors begin with: the command the user ran
};

std::unique_ptr<Ledger> OpenExisting(const LedgerArgs& a) {
  if (a.path != ":memory:" && !std::filesystem::exists(a.path)) {
    throw CLI::RuntimeError(a.command + ": no ledger at " + a.path + " (runs of bench, sweep and capacity create it)",
                            2);
  }
  auto l = Ledger::Open(a.path);
  if (!l.ok()) throw CLI::RuntimeError(a.command + ": " + l.status().message(), 2);
  return std::move(*l);
}

template <typename T>
T OrFail(Result<T> r, const std::string& command = "goodput ledger") {
  if (!r.ok()) throw CLI::RuntimeError(command + ": " + r.status().message(), 2);
  return std::move(*r);
}

std::string Cut(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

void List(const LedgerArgs& a) {
  const auto runs = OrFail(OpenExisting(a)->ListRuns());
  if (a.json) {
    boost::json::array out;
    for (const auto& r : runs) {
      out.push_back(boost::json::object{{"run", r.id},          {"started_at", r.started_at}, {"status", r.status},
                                        {"points", r.points},   {"command", r.info.command},  {"target", r.info.target},
                                        {"workload", r.info.workload_name}});
    }
    std::cout << boost::json::serialize(out) << "\n";
    return;
  }
  std::cout << fmt::format("{:>4}  {:<19}  {:<11}{:>7}  {:<10}  {}\n", "run", "started (UTC)", "status", "points",
                           "workload", "command");
  for (const auto& r : runs) {
    std::cout << fmt::format("{:>4}  {:<19}  {:<11}{:>7}  {:<10}  {}\n", r.id, r.started_at, r.status, r.points,
                             Cut(r.info.workload_name, 10), Cut(r.info.command, 90));
  }
}

void Show(const LedgerArgs& a) {
  auto ledger = OpenExisting(a);
  const StoredRun run = OrFail(ledger->GetRun(a.run));
  const auto points = OrFail(ledger->GetPoints(a.run));
  if (a.json) {
    boost::json::array pts;
    for (const auto& p : points) {
      boost::json::value v = PointToJson(p.summary);  // restored from the stored summary, else its columns
      v.as_object()["setting"] = p.setting;
      if (!p.summary_error.empty()) v.as_object()["summary_error"] = p.summary_error;
      pts.push_back(std::move(v));
    }
    std::cout << boost::json::serialize(boost::json::object{{"run", run.id},
                                                            {"status", run.status},
                                                            {"command", run.info.command},
                                                            {"target", run.info.target},
                                                            {"hardware", run.info.hardware},
                                                            {"points", pts}})
              << "\n";
    return;
  }
  std::cout << fmt::format(
      "run {} ({}; started {} UTC{})\ncommand:  {}\ntarget:   {}\nhardware: {}\nhost:     {}\nworkload: {}\nSLO:      "
      "{}\nversion:  goodput {}\nrequests kept: {}\n\n",
      run.id, run.status, run.started_at, run.finished_at.empty() ? "" : ", finished " + run.finished_at,
      run.info.command, run.info.target, run.info.hardware, run.info.host, run.info.workload_name,
      run.info.slo.empty() ? "none" : run.info.slo, run.info.version, OrFail(ledger->CountRequests(a.run)));
  std::string setting = "\x01";
  std::vector<PointResult> group;
  const auto flush = [&] {
    if (group.empty()) return;
    if (!setting.empty()) std::cout << "=== " << setting << " ===\n";
    std::cout << FormatPointTable(group) << "\n";
    group.clear();
  };
  for (const auto& p : points) {
    if (p.setting != setting) {
      flush();
      setting = p.setting;
    }
    group.push_back(p.summary);
  }
  flush();
}

// A point's rule outcomes as JSON: every rule, passed or not.
boost::json::array ChecksJson(const Quotability& q) {
  boost::json::array checks;
  for (const RuleCheck& c : q.checks) {
    checks.push_back(boost::json::object{{"rule", c.rule}, {"passed", c.passed}, {"detail", c.detail}});
  }
  return checks;
}

// "passed: sustainable, repetitions, ...; failed: spread" for a point's line under the table.
std::string ChecksLine(const Quotability& q) {
  std::vector<std::string> passed, failed;
  for (const RuleCheck& c : q.checks) (c.passed ? passed : failed).push_back(c.rule);
  return fmt::format("    passed: {}{}", passed.empty() ? "none" : fmt::format("{}", fmt::join(passed, ", ")),
                     failed.empty() ? "" : fmt::format("; failed: {}", fmt::join(failed, ", ")));
}

void Quote(const LedgerArgs& a) {
  auto ledger = OpenExisting(a);
  const StoredRun run = OrFail(ledger->GetRun(a.run));
  const auto points = OrFail(ledger->GetPoints(a.run));
  const QuoteRules rules;
  if (a.json) {
    boost::json::array out;
    for (const auto& p : points) {
      const Quotability q = JudgePoint(p.summary, p.requests_per_run, rules);
      boost::json::array reasons;
      for (const auto& r : q.reasons) reasons.push_back(boost::json::value(r));
      out.push_back(boost::json::object{{"setting", p.setting},
                                        {"load", p.summary.label},
                                        {"quotable", q.quotable},
                                        {"reasons", reasons},
                                        {"checks", ChecksJson(q)}});
    }
    std::cout << boost::json::serialize(boost::json::object{{"run", run.id}, {"points", out}}) << "\n";
    return;
  }
  std::cout << fmt::format("run {} ({}): {}\n", run.id, run.status, run.info.command);
  if (run.status != "complete") std::cout << "note: the run did not complete; its points stand on their own\n";
  std::cout << "rules (goodput ledger rules, docs/measuring.md):";
  for (const QuoteRule& r : QuoteRuleTable(rules)) std::cout << fmt::format("\n  {}: {}", r.name, r.threshold);
  std::cout << "\n\n";
  std::cout << fmt::format("{:<20}{:>8}{:>12}{:>10}{:>11}{:>11}  {}\n", "setting", "load", "tok/s", "goodput",
                           "TTFT p99", "TPOT p99", "verdict");
  int quotable = 0;
  for (const auto& p : points) {
    const Quotability q = JudgePoint(p.summary, p.requests_per_run, rules);
    quotable += q.quotable;
    const PointResult& s = p.summary;
    std::cout << fmt::format("{:<20}{:>8}{:>12.0f}{:>10.2f}{:>11}{:>11}  {}\n{}\n", p.setting.empty() ? "-" : p.setting,
                             s.label, s.throughput, s.goodput, FormatDuration(s.ttft.p99), FormatDuration(s.tpot.p99),
                             q.Text(), ChecksLine(q));
  }
  std::cout << fmt::format("\n{} of {} points may be quoted\n", quotable, points.size());
}

void Report(const LedgerArgs& a) {
  auto ledger = OpenExisting(a);
  const StoredRun run = OrFail(ledger->GetRun(a.run), a.command);
  const std::string path = a.out.empty() ? fmt::format("goodput-report-{}.html", a.run) : a.out;
  if (Status st = report::WriteHtmlReport(*ledger, a.run, path); !st.ok()) {
    throw CLI::RuntimeError(a.command + ": " + st.message(), 2);
  }
  std::cout << fmt::format("report: {} ({} points of run {})\n", std::filesystem::absolute(path).string(), run.points,
                           run.id);
}

void Studies(const LedgerArgs& a) {
  const auto studies = OrFail(OpenExisting(a)->ListStudies());
  if (a.json) {
    boost::json::array out;
    for (const auto& s : studies) {
      out.push_back(boost::json::object{{"study", s.id}, {"started_at", s.started_at}, {"status", s.status},
                                        {"kind", s.kind}, {"runs", s.runs.size()}, {"command", s.command}});
    }
    std::cout << boost::json::serialize(out) << "\n";
    return;
  }
  std::cout << fmt::format("{:>5}  {:<19}  {:<11}  {:<6}{:>5}  {}\n", "study", "started (UTC)", "status", "kind",
                           "runs", "command");
  for (const auto& s : studies) {
    std::cout << fmt::format("{:>5}  {:<19}  {:<11}  {:<6}{:>5}  {}\n", s.id, s.started_at, s.status, s.kind,
                             s.runs.size(), Cut(s.command, 90));
  }
}

// A stored tune study's answer, from its summary: the recommendation, the
// settings measured on the target beside the simulator's figures.
std::string StudyAnswer(const boost::json::value& summary) {
  std::string out;
  const auto text = [](const boost::json::value* v) {
    return v && v->is_string() ? std::string(v->as_string()) : v && !v->is_null() ? boost::json::serialize(*v) : "-";
  };
  const auto capacity = [&](const boost::json::value& m, const char* side) {
    const boost::json::value* s = m.as_object().if_contains(side);
    return s && s->is_object() ? text(s->as_object().if_contains("capacity")) : std::string("-");
  };
  if (const auto* measured = summary.as_object().if_contains("measured"); measured && measured->is_array()) {
    if (!measured->as_array().empty()) out += fmt::format("  {:<60}{:>11}{:>10}\n", "setting", "predicted", "measured");
    for (const auto& m : measured->as_array()) {
      const bool baseline = m.as_object().contains("baseline") && m.at("baseline").as_bool();
      out += fmt::format("  {:<60}{:>11}{:>10}\n", baseline ? "baseline (as configured)" : text(&m.at("setting")),
                         capacity(m, "simulated"), capacity(m, "measured"));
    }
  }
  const auto* r = summary.as_object().if_contains("recommendation");
  if (!r || !r->is_object()) return out + "recommendation: none\n";
  out += fmt::format("recommendation: {}\n", text(r->as_object().if_contains("setting")));
  if (const auto* args = r->as_object().if_contains("engine_args"); args && args->is_array()) {
    std::string flags;
    for (const auto& f : args->as_array()) flags += (flags.empty() ? "" : " ") + text(&f);
    out += "  engine flags: " + flags + "\n";
  }
  if (const auto* why = r->as_object().if_contains("reasons"); why && why->is_array()) {
    for (const auto& line : why->as_array()) out += "  " + text(&line) + "\n";
  }
  return out;
}

void Study(const LedgerArgs& a) {
  const StoredStudy s = OrFail(OpenExisting(a)->GetStudy(a.run));
  boost::system::error_code ec;
  const boost::json::value summary = s.summary.empty() ? boost::json::value() : boost::json::parse(s.summary, ec);
  boost::json::array runs;
  for (const StudyRun& r : s.runs) runs.push_back(boost::json::object{{"run", r.run}, {"role", r.role}});
  if (a.json) {
    std::cout << boost::json::serialize(boost::json::object{{"study", s.id}, {"status", s.status}, {"kind", s.kind},
                                                            {"command", s.command}, {"runs", runs},
                                                            {"summary", ec ? boost::json::value() : summary}})
              << "\n";
    return;
  }
  std::cout << fmt::format("study {} ({}, {}): {}\n", s.id, s.kind, s.status, s.command);
  for (const StudyRun& r : s.runs) {
    std::cout << fmt::format("  run {} ({}): goodput ledger show {}{}\n", r.run, r.role, r.run,
                             a.path == "goodput.db" ? "" : " --ledger " + a.path);
  }
  if (ec || !summary.is_object()) {
    std::cout << (s.summary.empty() ? "no answer stored (the study did not finish)\n"
                                    : "its stored answer cannot be read: " + ec.message() + "\n");
    return;
  }
  std::cout << StudyAnswer(summary);
}

struct MergeArgs {
  std::string into = "goodput.db";
  std::vector<std::string> shards;  // FILE or FILE:RUN
  bool json = false;
};

// A shard's ledger opened, and its run: "FILE:RUN", or "FILE" for its latest.
struct OpenedShard {
  std::unique_ptr<Ledger> ledger;
  std::string path;
  int64_t run = 0;
};

OpenedShard OpenShard(const std::string& source) {
  OpenedShard s{nullptr, source, 0};
  if (const size_t colon = source.rfind(':'); colon != std::string::npos && colon + 1 < source.size() &&
                                              source.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    s.path = source.substr(0, colon);
    s.run = std::strtoll(source.c_str() + colon + 1, nullptr, 10);  // saturates: too long a number names no run
    if (s.run <= 0 || s.run == LLONG_MAX) {
      throw CLI::RuntimeError("goodput ledger merge: '" + source + "' names no run (FILE:RUN, RUN from 1)", 2);
    }
  }
  LedgerArgs a;
  a.path = s.path;
  s.ledger = OpenExisting(a);
  if (s.run == 0) {
    const auto runs = OrFail(s.ledger->ListRuns());
    if (runs.empty()) throw CLI::RuntimeError("goodput ledger merge: " + s.path + " has no run", 2);
    s.run = runs.back().id;
  }
  return s;
}

void Merge(const MergeArgs& a) {
  std::vector<OpenedShard> open;
  std::vector<ShardRun> shards;
  std::string from;
  for (const std::string& source : a.shards) {
    open.push_back(OpenShard(source));
    shards.push_back({open.back().ledger.get(), open.back().run});
    from += fmt::format("{}{}:{}", from.empty() ? "" : " ", open.back().path, open.back().run);
  }
  auto into = Ledger::Open(a.into);
  if (!into.ok()) throw CLI::RuntimeError("goodput ledger merge: " + into.status().message(), 2);
  const int64_t run = OrFail(MergeShards(shards, **into, "goodput ledger merge --into " + a.into + " " + from));
  const auto points = OrFail((*into)->GetPoints(run));
  if (a.json) {
    boost::json::array pts;
    for (const auto& p : points) pts.push_back(PointToJson(p.summary));
    std::cout << boost::json::serialize(boost::json::object{{"run", run}, {"points", pts}}) << "\n";
    return;
  }
  std::vector<PointResult> summaries;
  for (const auto& p : points) summaries.push_back(p.summary);
  std::cout << FormatPointTable(summaries) << "\n"
            << fmt::format("ledger: run {} in {} ({} shards merged: {})\n", run, a.into, shards.size(), from);
}

}  // namespace

void AddReportCommand(CLI::App& app) {
  auto args = std::make_shared<LedgerArgs>();
  args->command = "goodput report";
  CLI::App* c = app.add_subcommand("report", "Write one self-contained HTML report (table and charts) of a ledger run");
  c->add_option("run", args->run, "Run number (goodput ledger list)")->required();
  c->add_option("--ledger", args->path, "The SQLite ledger")->capture_default_str();
  c->add_option("--out,-o", args->out, "The HTML file (default goodput-report-RUN.html)");
  c->callback([args] { Report(*args); });
}

void AddLedgerCommand(CLI::App& app) {
  auto args = std::make_shared<LedgerArgs>();
  CLI::App* ledger =
      app.add_subcommand("ledger", "The record of every bench/sweep/capacity run, and what may be quoted");
  ledger->require_subcommand(1);
  const auto common = [&](CLI::App* c) {
    c->add_option("--ledger", args->path, "The SQLite ledger")->capture_default_str();
    c->add_flag("--json", args->json, "Print JSON");
  };
  CLI::App* list = ledger->add_subcommand("list", "Every run: when, status, points, command");
  common(list);
  list->callback([args] { List(*args); });
  CLI::App* show = ledger->add_subcommand("show", "One run: what ran where, and its points");
  common(show);
  show->add_option("run", args->run, "Run number (goodput ledger list)")->required();
  show->callback([args] { Show(*args); });
  CLI::App* quote = ledger->add_subcommand("quote", "Which of a run's points may be quoted, and why not");
  common(quote);
  quote->add_option("run", args->run, "Run number (goodput ledger list)")->required();
  quote->callback([args] { Quote(*args); });
  CLI::App* rules = ledger->add_subcommand("rules", "The rules a point must pass to be quoted, as one table");
  rules->callback([] { std::cout << QuoteRuleMarkdown(); });
  auto merge_args = std::make_shared<MergeArgs>();
  CLI::App* merge = ledger->add_subcommand(
      "merge",
      "One load generated by several clients (bench --shard I/N): their runs merged into one, judged as one "
      "client's run would be");
  merge->add_option("shards", merge_args->shards, "Each shard's ledger, FILE or FILE:RUN (default: its latest run)")
      ->required();
  merge->add_option("--into", merge_args->into, "The ledger the merged run is written to")->capture_default_str();
  merge->add_flag("--json", merge_args->json, "Print JSON");
  merge->callback([merge_args] { Merge(*merge_args); });
  CLI::App* studies = ledger->add_subcommand("studies", "Every study (goodput tune): when, status, runs, command");
  common(studies);
  studies->callback([args] { Studies(*args); });
  CLI::App* study = ledger->add_subcommand("study", "One study: its runs and its answer");
  common(study);
  study->add_option("study", args->run, "Study number (goodput ledger studies)")->required();
  study->callback([args] { Study(*args); });
}

}  // namespace goodput
