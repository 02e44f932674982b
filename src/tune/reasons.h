// Why a recommended setting has each of its values: for every flag, the
// setting against the best other value of that flag with the rest held (the
// search's evaluations that differ from it in that flag alone), and what
// held that neighbour back at the first load it failed (preemptions as the
// KV pool filled; the SLO target it missed).
#pragma once

#include <string>
#include <vector>

#include "tune/search.h"

namespace goodput {

// What limited a capacity search at the first load that did not hold: "at
// 257 clients: 12 preemptions (the KV pool filled); ttft p99 1.32 s (target
// 1 s)". "" when every load held.
std::string LimitOf(const SettingResult& r);

// One line per flag of `chosen` (a setting of `space`), from `search`'s
// evaluations: "max-num-seqs=512 over 256: capacity 361 vs 256 clients (256:
// at 257 clients: ttft p99 1.32 s (target 1 s))".
std::vector<std::string> Reasons(const SearchResult& search, const SearchSpace& space, const Setting& chosen);

}  // namespace goodput
