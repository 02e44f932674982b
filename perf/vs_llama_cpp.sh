#!/bin/sh
# goodput's CPU engine beside llama.cpp on the same weights: installs
# node-llama-cpp from npm (its prebuilt CPU binaries; no GPU packages) into
# BUILD/perf/llama-cpp-node once, then runs build/perf/vs_llama_cpp.
#   perf/vs_llama_cpp.sh [BUILD_DIR] [ROUNDS] [PROMPT_TOKENS]
set -eu
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
dir="$build/perf/llama-cpp-node"
version=3.22.1  # node-llama-cpp; pinned so that reruns compare the same llama.cpp
if [ ! -d "$dir/node_modules/node-llama-cpp" ]; then
  mkdir -p "$dir"
  echo "installing node-llama-cpp $version into $dir" >&2
  (cd "$dir" && npm init -y >/dev/null &&
    npm install --no-audit --no-fund --omit=optional --ignore-scripts \
      "node-llama-cpp@$version" "@node-llama-cpp/linux-x64@$version" >&2)
fi
cp "$here/llama_cpp.mjs" "$dir/"
cmake --build "$build" --target vs_llama_cpp >&2
exec "$build/perf/vs_llama_cpp" "$dir" "${2:-3}" "${3:-1024}"
