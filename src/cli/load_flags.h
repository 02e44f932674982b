// Flag helpers shared by `sim`, `bench`, `sweep` and `capacity`: load
// ladders from --concurrency / --rate, and progress lines.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "workload/workload.h"

namespace goodput {

// "1,8,32" -> {1, 8, 32}; every item must be a positive number.
Result<std::vector<double>> ParseList(const std::string& text, const char* flag);

// The loads to run: closed-loop concurrencies or open-loop rates (Poisson,
// or gamma when burstiness != 1); the workload's own arrival when neither.
Result<std::vector<ArrivalSpec>> Ladder(const std::string& concurrency, const std::string& rate, double burstiness,
                                        const Workload& w);

// A progress line on stderr when it is a terminal (pipes and logs stay
// clean); "" clears it.
void Progress(const std::string& what);

// The command line as typed (main records it; the ledger stores it).
void SetCommandLine(int argc, char** argv);
const std::string& CommandLine();

}  // namespace goodput
