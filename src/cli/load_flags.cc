#include "cli/load_flags.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

namespace goodput {

Result<std::vector<double>> ParseList(const std::string& text, const char* flag) {
  std::vector<double> out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') continue;
    const std::string item = text.substr(start, i - start);
    start = i + 1;
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !(v > 0)) {
      return Status::InvalidArgument(fmt::format("{}: '{}' is not a positive number", flag, item));
    }
    out.push_back(v);
  }
  return out;
}

Result<std::vector<ArrivalSpec>> Ladder(const std::string& concurrency, const std::string& rate, double burstiness,
                                        const Workload& w) {
  if (!concurrency.empty() && !rate.empty()) return Status::InvalidArgument("give --concurrency or --rate, not both");
  std::vector<ArrivalSpec> out;
  if (!concurrency.empty()) {
    GOODPUT_ASSIGN_OR_RETURN(std::vector<double> cs, ParseList(concurrency, "--concurrency"));
    for (double c : cs) out.push_back(ArrivalSpec{ArrivalKind::kClosedLoop, static_cast<int>(c), 1, 1});
  } else if (!rate.empty()) {
    GOODPUT_ASSIGN_OR_RETURN(std::vector<double> rs, ParseList(rate, "--rate"));
    if (!(burstiness > 0)) return Status::InvalidArgument("--burstiness must be positive");
    const ArrivalKind kind = burstiness == 1 ? ArrivalKind::kPoisson : ArrivalKind::kGamma;
    for (double r : rs) out.push_back(ArrivalSpec{kind, 1, r, burstiness});
  } else {
    out.push_back(w.arrival);
  }
  return out;
}

void Progress(const std::string& what) {
  static const bool tty = isatty(STDERR_FILENO);
  if (tty) std::cerr << "\r\033[K" << what << std::flush;
}

namespace {
std::string& StoredCommandLine() {
  static std::string line;
  return line;
}
}  // namespace

void SetCommandLine(int argc, char** argv) {
  std::string& line = StoredCommandLine();
  line = "goodput";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool quote = arg.empty() || arg.find_first_of(" \t'\"$") != std::string::npos;
    line += " " + (quote ? "'" + arg + "'" : arg);
  }
}

const std::string& CommandLine() { return StoredCommandLine(); }

}  // namespace goodput
