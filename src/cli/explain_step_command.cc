#include "cli/explain_step_command.h"

#include <iostream>

#include <boost/json.hpp>

#include "sim/sim_target.h"
#include "sim/step_explain.h"

namespace goodput {

Status ExplainStepCommand(const std::string& batch, const Result<SimDeployment>& deployment, bool json) {
  GOODPUT_RETURN_IF_ERROR(deployment.status());
  GOODPUT_ASSIGN_OR_RETURN(std::vector<StepGroup> groups, ParseStepBatch(batch));
  const SimSetup& setup = deployment->setup;
  const StepExplanation e = ExplainStep(*setup.cost, std::move(groups), setup.options.scheduler.num_speculative_tokens);
  const std::string target = DescribeSimTarget(setup, deployment->hardware.name, "");
  if (json) {
    boost::json::object out = StepExplanationToJson(e);
    out["target"] = target;
    std::cout << boost::json::serialize(out) << "\n";
  } else {
    std::cout << target << "\n" << FormatStepExplanation(e);
  }
  return Status::Ok();
}

}  // namespace goodput
