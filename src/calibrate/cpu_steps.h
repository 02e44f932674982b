// goodput serve's own steps, measured: the CPU runner executes a grid of step
// shapes (decodes of 1 to 65 requests at short and long contexts, prefills of
// 16 to 1,024 tokens) through a scratch scheduler, each timed on the real
// clock and summarised by its median.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibrate/step_fit.h"
#include "core/clock.h"
#include "core/status.h"
#include "engine/kv_groups.h"
#include "engine/step.h"

namespace goodput {

struct StepGrid {
  // Both sides of where the engine's matmuls change kernel (8|9 rows with
  // AVX2, 64|65 with AVX-512: the step fit's knots there).
  std::vector<int64_t> decode_batches = {1, 2, 4, 8, 9, 16, 32, 64, 65};  // at a 64-token context
  std::vector<std::pair<int64_t, int64_t>> long_decodes = {{4, 1024}, {16, 512}, {2, 2048}};  // batch, context
  std::vector<int64_t> prefills = {16, 32, 64, 72, 128, 256, 512, 1024};
  int repeats = 3;  // steps timed per shape and round
  int rounds = 2;   // passes over the grid: a slow spell of a shared machine hits every shape, not one
};

// Runs the grid on `runner` over a pool of `num_blocks` blocks of `groups`,
// `rounds` times; each shape's step is the median over all its timed steps.
// `max_model_len` bounds the shapes (those that do not fit are left out);
// `progress` is told each shape. The runner's KV contents are overwritten.
Result<std::vector<MeasuredStep>> MeasureSteps(ModelRunner& runner, const std::vector<KvGroupSpec>& groups,
                                               int64_t num_blocks, int64_t max_model_len, const StepGrid& grid,
                                               const Clock& clock,
                                               const std::function<void(const std::string&)>& progress = {});

}  // namespace goodput
