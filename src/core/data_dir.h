// Where goodput's data files (model configs, hardware entries, workloads) live.
#pragma once

#include <string>

namespace goodput {

// The data directory: $GOODPUT_DATA_DIR when set, else "data" beside the
// executable's parent directory (a build tree inside the checkout), else the
// source tree's data/ recorded at build time.
std::string DataDir();

}  // namespace goodput
