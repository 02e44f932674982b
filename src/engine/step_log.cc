#include "engine/step_log.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>

#include <fmt/format.h>

namespace goodput {
namespace {

constexpr char kHeaderV1[] = "# goodput step log v1: seconds, requests, then computed new samples per request";
constexpr char kHeader[] =
    "# goodput step log v2: start seconds, requests, then computed new samples arrival finished per request";

// Reads one step's fields after its count: three per request in version 1,
// five in version 2. False on a malformed field.
bool ReadRequests(std::istringstream& fields, size_t count, bool timed, LoggedStep& s) {
  for (size_t i = 0; i < count; ++i) {
    StepRequest r;
    int samples = 0, finished = 0;
    if (!(fields >> r.num_computed >> r.num_new >> samples) || r.num_computed < 0 || r.num_new <= 0 ||
        (samples != 0 && samples != 1)) {
      return false;
    }
    if (timed && (!(fields >> r.arrival >> finished) || r.arrival < 0 || (finished != 0 && finished != 1))) {
      return false;
    }
    r.samples = samples == 1;
    r.finished = finished == 1;
    s.requests.push_back(r);
  }
  return true;
}

bool ReadStep(const std::string& line, bool timed, LoggedStep& s) {
  std::istringstream fields(line);
  size_t count = 0;
  s.timed = timed;
  if (timed && (!(fields >> s.start) || s.start < 0)) return false;
  if (!(fields >> s.seconds >> count) || s.seconds < 0 || count >= (1u << 20)) return false;
  std::string extra;
  return ReadRequests(fields, count, timed, s) && !(fields >> extra);
}

}  // namespace

void WriteStepLogHeader(std::ostream& out) { out << kHeader << '\n'; }

// Times to the microsecond: the engine's loop (between steps, a request's
// way in) runs in tenths of a millisecond.
void WriteStepLogLine(std::ostream& out, const ObservedStep& step) {
  // Most steps finish nothing: no allocation on the engine thread between
  // steps, which is the very time the log measures.
  std::vector<RequestId> finished;
  for (const RequestEvent& e : step.events) {
    if (e.finished) finished.push_back(e.id);
  }
  const auto finishes = [&](RequestId id) { return std::find(finished.begin(), finished.end(), id) != finished.end(); };
  fmt::memory_buffer line;
  fmt::format_to(std::back_inserter(line), "{:.6f} {:.6g} {}", step.start, step.end - step.start,
                 step.plan.requests.size());
  for (const ScheduledRequest& r : step.plan.requests) {
    fmt::format_to(std::back_inserter(line), "  {} {} {} {:.6f} {}", r.num_computed, r.num_new, r.samples ? 1 : 0,
                   r.arrival_time, finishes(r.id) ? 1 : 0);
  }
  line.push_back('\n');
  out.write(line.data(), static_cast<std::streamsize>(line.size()));
}

Result<StepObserver> OpenStepLog(const std::string& path) {
  auto out = std::make_shared<std::ofstream>(path, std::ios::trunc);
  if (!*out) return Status::IoError("cannot write the step log " + path);
  WriteStepLogHeader(*out);
  return StepObserver([out](const ObservedStep& step) { WriteStepLogLine(*out, step); });
}

Result<std::vector<LoggedStep>> ReadStepLog(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read the step log " + path);
  std::string line;
  if (!std::getline(in, line) || (line != kHeader && line != kHeaderV1)) {
    return Status::InvalidArgument(path + ":1: not a goodput step log (goodput serve --step-log FILE writes one)");
  }
  const bool timed = line == kHeader;
  std::vector<LoggedStep> steps;
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    LoggedStep s;
    if (!ReadStep(line, timed, s)) {
      return Status::InvalidArgument(path + ":" + std::to_string(number) + ": not a step (" +
                                     (timed ? "start seconds count, then computed new samples arrival finished"
                                            : "seconds count, then computed new samples") +
                                     " per request)");
    }
    steps.push_back(std::move(s));
  }
  if (steps.empty()) return Status::InvalidArgument(path + ": no steps (did the server serve anything?)");
  return steps;
}

}  // namespace goodput
