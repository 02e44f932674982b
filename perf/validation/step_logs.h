// Where goodput serve's step logs go in a comparison of the simulator with
// it: one file per engine process (every replica of every repetition of
// every load of every case, in each round of passes).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace goodput {

struct ComparisonCase;

class StepLogs {
 public:
  // Paths for `rounds` rounds of `cases` (round 0 is fitted, round 1 is the
  // rerun): in `dir` and kept, or in the temporary directory and removed
  // with this object (`dir` empty).
  StepLogs(const std::vector<ComparisonCase>& cases, const std::string& dir, int rounds);
  ~StepLogs();
  StepLogs(const StepLogs&) = delete;
  StepLogs& operator=(const StepLogs&) = delete;

  // Each replica's log of repetition `r` (1, 2, ...) of load `i` of case `k`, in `round`.
  const std::vector<std::string>& Of(size_t k, size_t i, int r, int round) const { return paths_[round][k][i][r - 1]; }
  // Every log of load `i` of case `k` (round 0).
  std::vector<std::string> Of(size_t k, size_t i) const;
  // Every log of round 0 but load `i` of case `k`'s (SIZE_MAX: every log).
  std::vector<std::string> AllBut(size_t k, size_t i) const;

 private:
  bool keep_;
  // By round, case, load, repetition, replica.
  std::vector<std::vector<std::vector<std::vector<std::vector<std::string>>>>> paths_;
};

}  // namespace goodput
