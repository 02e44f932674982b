// The engine settings `goodput tune` searches: each dimension an engine flag
// and the values to try, written as
//   "max-num-seqs=8..512, max-num-batched-tokens=512..16384,
//    gpu-memory-utilization=0.80..0.95, kv-cache-dtype=auto|fp8,
//    num-speculative-tokens=0|2|4"
// A range of whole numbers takes its ends and the powers of two between
// them (8..512: 8, 16, ..., 512); a range of byte sizes doubles from its
// lower end (256MiB..2GiB: 256MiB, 512MiB, 1GiB, 2GiB); a range of decimals
// takes four evenly spaced values (0.80..0.95: 0.8, 0.85, 0.9, 0.95); `|`
// lists the values as they are to be passed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/measurement.h"

namespace goodput {

struct Dimension {
  std::string flag;                 // without the leading dashes
  std::vector<std::string> values;  // as passed to the engine; a range's ascending
  bool ordered = false;             // a range (neighbouring values are close), not a list
};

struct SearchSpace {
  std::vector<Dimension> dimensions;

  // The number of settings in the full grid (saturating at 1e12).
  int64_t GridSize() const;
  // The setting made of each dimension's value at `indices` (one per dimension).
  Setting At(const std::vector<size_t>& indices) const;
  // "max-num-seqs (7 values: 8..512), kv-cache-dtype (auto|fp8)".
  std::string Describe() const;
};

// Limits that keep a typo from asking for a search nobody meant.
constexpr size_t kMaxDimensions = 12;
constexpr size_t kMaxValuesPerDimension = 64;
constexpr size_t kMaxSpaceText = 4096;

// Parses the syntax above. Errors name the dimension and what is wrong: no
// '=', an empty flag or value, a flag given twice, a range whose ends are not
// both whole numbers, sizes or decimals, a reversed or non-positive range,
// too many dimensions or values, text over kMaxSpaceText.
Result<SearchSpace> ParseSearchSpace(const std::string& text);

}  // namespace goodput
