#include "cli/ledger_command.h"

#include <filesystem>
#include <iostream>
#include <memory>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/units.h"
#include "ledger/ledger.h"
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
};

std::unique_ptr<Ledger> OpenExisting(const LedgerArgs& a) {
  if (a.path != ":memory:" && !std::filesystem::exists(a.path)) {
    throw CLI::RuntimeError("goodput ledger: no ledger at " + a.path + " (runs of bench, sweep and capacity create it)", 2);
  }
  auto l = Ledger::Open(a.path);
  if (!l.ok()) throw CLI::RuntimeError("goodput ledger: " + l.status().message(), 2);
  return std::move(*l);
}

template <typename T>
T OrFail(Result<T> r) {
  if (!r.ok()) throw CLI::RuntimeError("goodput ledger: " + r.status().message(), 2);
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
      out.push_back(boost::json::object{{"setting", p.setting}, {"load", p.summary.label},
                                        {"quotable", q.quotable}, {"reasons", reasons}});
    }
    std::cout << boost::json::serialize(boost::json::object{{"run", run.id}, {"points", out}}) << "\n";
    return;
  }
  std::cout << fmt::format("run {} ({}): {}\n", run.id, run.status, run.info.command);
  if (run.status != "complete") std::cout << "note: the run did not complete; its points stand on their own\n";
  std::cout << fmt::format("rules: >= {} repetitions, throughput spread <= {:.0f}%, failures <= {:.0f}%, send lag p99 <= "
                           "{}, at concurrency <= {} spread <= {:.0f}%\n\n",
                           rules.min_repeats, 100 * rules.max_spread, 100 * rules.max_error_rate,
                           FormatDuration(rules.max_send_lag_s), rules.low_concurrency,
                           100 * rules.low_concurrency_max_spread);
  std::cout << fmt::format("{:<20}{:>8}{:>12}{:>10}{:>11}{:>11}  {}\n", "setting", "load", "tok/s", "goodput",
                           "TTFT p99", "TPOT p99", "verdict");
  int quotable = 0;
  for (const auto& p : points) {
    const Quotability q = JudgePoint(p.summary, p.requests_per_run, rules);
    quotable += q.quotable;
    const PointResult& s = p.summary;
    std::cout << fmt::format("{:<20}{:>8}{:>12.0f}{:>10.2f}{:>11}{:>11}  {}\n", p.setting.empty() ? "-" : p.setting,
                             s.label, s.throughput, s.goodput, FormatDuration(s.ttft.p99), FormatDuration(s.tpot.p99),
                             q.Text());
  }
  std::cout << fmt::format("\n{} of {} points may be quoted\n", quotable, points.size());
}

void Report(const LedgerArgs& a) {
  auto ledger = OpenExisting(a);
  const StoredRun run = OrFail(ledger->GetRun(a.run));
  const std::string path = a.out.empty() ? fmt::format("goodput-report-{}.html", a.run) : a.out;
  if (Status st = report::WriteHtmlReport(*ledger, a.run, path); !st.ok()) {
    throw CLI::RuntimeError("goodput report: " + st.message(), 2);
  }
  std::cout << fmt::format("report: {} ({} points of run {})\n", std::filesystem::absolute(path).string(), run.points,
                           run.id);
}

}  // namespace

void AddReportCommand(CLI::App& app) {
  auto args = std::make_shared<LedgerArgs>();
  CLI::App* c = app.add_subcommand("report", "Write one self-contained HTML report (table and charts) of a ledger run");
  c->add_option("run", args->run, "Run number (goodput ledger list)")->required();
  c->add_option("--ledger", args->path, "The SQLite ledger")->capture_default_str();
  c->add_option("--out,-o", args->out, "The HTML file (default goodput-report-RUN.html)");
  c->callback([args] { Report(*args); });
}

void AddLedgerCommand(CLI::App& app) {
  auto args = std::make_shared<LedgerArgs>();
  CLI::App* ledger = app.add_subcommand("ledger", "The record of every bench/sweep/capacity run, and what may be quoted");
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
}

}  // namespace goodput
