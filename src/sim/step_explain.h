// One engine step as the cost model prices it, part by part (goodput sim
// --explain-step): which of the weights, the KV cache, the matmuls, the
// links, the kernels' fixed latencies or the host bounds a batch of the
// user's choosing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "core/status.h"
#include "hw/cost_model.h"

namespace goodput {

// `requests` requests, each computing `new_tokens` tokens after `context`
// tokens already in its KV cache; a decode computes one token (and the
// step's draft tokens with speculative decoding).
struct StepGroup {
  int64_t requests = 0;
  int64_t context = 0;
  int64_t new_tokens = 1;
  bool decode = true;
};

// Parses a batch: groups separated by commas, each "N@CONTEXT" (N decodes at
// CONTEXT tokens of context) or "N@CONTEXT+NEW" (N requests computing NEW
// tokens after CONTEXT: "1@0+4096" is a 4,096-token prompt). Counts take
// ParseTokenCount's suffixes ("64@32k"). Errors name the group: N from 1 to
// 2^20 (and as many in all), CONTEXT from 0 and CONTEXT + NEW up to 2^28 tokens.
Result<std::vector<StepGroup>> ParseStepBatch(std::string_view text);

struct StepExplanation {
  std::vector<StepGroup> groups;
  int32_t drafts = 0;  // draft tokens each decode carries
  CostModel::Step step;
  CostModel::StepCost cost;
  CostFactors factors;    // the model's, which priced it
  int data_parallel = 1;  // replicas sharing the step's requests
};

// Prices one step of `groups` on `model`; decodes carry `drafts` draft tokens
// each (num_speculative_tokens), prompts none and sample at their end.
StepExplanation ExplainStep(const CostModel& model, std::vector<StepGroup> groups, int32_t drafts);

// The explanation as a table for people (the parts in milliseconds and what
// bounds the step) and as JSON (the parts in seconds).
std::string FormatStepExplanation(const StepExplanation& e);
boost::json::object StepExplanationToJson(const StepExplanation& e);

}  // namespace goodput
