// goodput serve's own steps, measured: the CPU runner executes a grid of step
// shapes (decodes of 1 to 65 requests at short and long contexts, prefills of
// 16 to 1,024 tokens) through a scratch scheduler, each timed on the real
// clock and summarised by its median.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "engine/kv_groups.h"
#include "engine/request.h"
#include "engine/step.h"
#include "cpu/step_fit.h"

namespace goodput::cpu {

// A request for timing steps: `prompt` token ids of its own (valid in every
// vocabulary) and `max_tokens` outputs past any EOS.
Request StepTimingRequest(RequestId id, int64_t prompt, int64_t max_tokens);

struct StepGrid {
  int64_t decode_context = 64;  // the prompt of each request of decode_batches
  // Both sides of where the engine's matmuls change kernel (8|9 rows with
  // AVX2, 64|65 with AVX-512: the step fit's knots there).
  std::vector<int64_t> decode_batches = {1, 2, 4, 8, 9, 16, 32, 64, 65};
  std::vector<std::pair<int64_t, int64_t>> long_decodes = {{4, 1024}, {16, 512}, {2, 2048}};  // batch, context
  std::vector<int64_t> prefills = {16, 32, 64, 72, 128, 256, 512, 1024};
  int repeats = 3;  // steps timed per shape and round
  int rounds = 2;   // passes over the grid: a slow spell of a shared machine hits every shape, not one
};

// The grid goodput serve measures at start-up for the slo policy's prior: a
// few seconds on goodput-small (decodes at a 4-token context up to 32
// requests and both sides of the matmul kernel switch, two long decodes,
// prefills of 16, 64 and 256 tokens, one round), more shapes than
// StartupKnots() gives the fit parameters. The decodes do not stop at the
// engine's max_num_seqs: a smaller cap would leave the fit too few shapes.
StepGrid StartupStepGrid();
// The efficiency curves' knots for a start-up grid: the ends and both sides
// of the row count where this CPU's matmuls change kernel (SmallMatMulHandles).
StepFitKnots StartupKnots();

// Runs the grid on `runner` over a pool of `num_blocks` blocks of `groups`,
// `rounds` times; each shape's step is the median over all its timed steps.
// `max_model_len` bounds the shapes (those that do not fit are left out);
// `progress` is told each shape. The runner's KV contents are overwritten.
Result<std::vector<MeasuredStep>> MeasureSteps(ModelRunner& runner, const std::vector<KvGroupSpec>& groups,
                                               int64_t num_blocks, int64_t max_model_len, const StepGrid& grid,
                                               const Clock& clock,
                                               const std::function<void(const std::string&)>& progress = {});

}  // namespace goodput::cpu
