// `goodput ledger list | show RUN | quote RUN`: what was measured, and which
// of its figures may be quoted (decided by the rules in ledger/quote.h).
#pragma once

#include <CLI/CLI.hpp>

namespace goodput {

void AddLedgerCommand(CLI::App& app);
// `goodput report RUN`: the run as one HTML file.
void AddReportCommand(CLI::App& app);

}  // namespace goodput
