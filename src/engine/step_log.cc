#include "engine/step_log.h"

#include <fstream>
#include <memory>
#include <sstream>

namespace goodput {
namespace {

constexpr char kHeader[] = "# goodput step log v1: seconds, requests, then computed new samples per request";

}  // namespace

void WriteStepLogHeader(std::ostream& out) { out << kHeader << '\n'; }

void WriteStepLogLine(std::ostream& out, const StepPlan& plan, double seconds) {
  out << seconds << ' ' << plan.requests.size();
  for (const ScheduledRequest& r : plan.requests) {
    out << "  " << r.num_computed << ' ' << r.num_new << ' ' << (r.samples ? 1 : 0);
  }
  out << '\n';
}

Result<StepObserver> OpenStepLog(const std::string& path) {
  auto out = std::make_shared<std::ofstream>(path, std::ios::trunc);
  if (!*out) return Status::IoError("cannot write the step log " + path);
  WriteStepLogHeader(*out);
  return StepObserver([out](const StepPlan& plan, double seconds) { WriteStepLogLine(*out, plan, seconds); });
}

Result<std::vector<LoggedStep>> ReadStepLog(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read the step log " + path);
  std::string line;
  if (!std::getline(in, line) || line != kHeader) {
    return Status::InvalidArgument(path + ":1: not a goodput step log (goodput serve --step-log FILE writes one)");
  }
  std::vector<LoggedStep> steps;
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    LoggedStep s;
    size_t count = 0;
    bool ok = static_cast<bool>(fields >> s.seconds >> count) && s.seconds >= 0 && count < (1u << 20);
    for (size_t i = 0; ok && i < count; ++i) {
      StepRequest r;
      int samples = 0;
      ok = static_cast<bool>(fields >> r.num_computed >> r.num_new >> samples) && r.num_computed >= 0 &&
           r.num_new > 0 && (samples == 0 || samples == 1);
      r.samples = samples == 1;
      s.requests.push_back(r);
    }
    std::string extra;
    if (!ok || fields >> extra) {
      return Status::InvalidArgument(path + ":" + std::to_string(number) + ": not a step (seconds, count, then " +
                                     "computed new samples per request)");
    }
    steps.push_back(std::move(s));
  }
  if (steps.empty()) return Status::InvalidArgument(path + ": no steps (did the server serve anything?)");
  return steps;
}

}  // namespace goodput
