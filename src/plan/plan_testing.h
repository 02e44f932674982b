// Test helpers shared by the planner's tests.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "hw/hardware.h"
#include "plan/planner.h"

namespace goodput {

// Plan options for one catalog card: its name, architecture and memory as
// `goodput plan --gpu NAME` would set them, everything else at the defaults.
inline PlanOptions OnGpu(const std::string& gpu) {
  auto g = FindGpu(gpu);
  EXPECT_TRUE(g.ok()) << gpu;
  PlanOptions o;
  if (!g.ok()) return o;
  o.gpu = g->name;
  o.gpu_arch = g->arch;
  o.total_memory = g->TotalMemoryBytes();
  o.total_is_nominal = g->total_is_nominal();
  return o;
}

}  // namespace goodput
