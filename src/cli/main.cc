// goodput: one thin main with subcommands.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/bench_command.h"
#include "cli/calibrate_command.h"
#include "cli/compare_outputs_command.h"
#include "cli/ledger_command.h"
#include "cli/measurement_flags.h"
#include "cli/plan_command.h"
#include "cli/serve_command.h"
#include "cli/sim_command.h"
#include "cli/tune_command.h"
#include "cli/workload_command.h"

int main(int argc, char** argv) {
  CLI::App app{"goodput: how much load one machine takes while every request class meets its latency SLO"};
  app.set_version_flag("--version", GOODPUT_VERSION);
  app.require_subcommand(1);
  goodput::AddPlanCommand(app);
  goodput::AddSimCommand(app);
  goodput::AddServeCommand(app);
  goodput::AddBenchCommands(app);
  goodput::AddTuneCommand(app);
  goodput::AddCompareOutputsCommand(app);
  goodput::AddWorkloadCommand(app);
  goodput::AddCalibrateCommand(app);
  goodput::AddLedgerCommand(app);
  goodput::AddReportCommand(app);
  goodput::SetCommandLine(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    if (e.what() && *e.what()) std::cerr << e.what() << "\n";
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}
