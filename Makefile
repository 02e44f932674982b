# The two commands of the README: `make demo` and `make test`.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)

.PHONY: all setup build test demo demo-gpu clean

all: build

setup:
	./scripts/bootstrap

build: setup
	@test -f $(BUILD_DIR)/build.ninja || cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# The main job: the highest load goodput serve (the ~100M-parameter CPU model)
# takes while the chat workload's SLO holds, measured over real HTTP: the
# concurrency ladder walked up to the first load whose verdict is not "holds"
# (each load run until its 95% interval decides, at most 3 times), with the
# recommended max_num_seqs. Under 5 minutes on a 2-core machine.
demo: build
	$(abspath $(BUILD_DIR))/goodput capacity --target embedded --model goodput-small \
	  --workload data/workloads/chat-cpu.yaml --concurrency 4,8,16,32 --repeat 1 \
	  --serve-args "--kv-cache-memory 512MiB"

# The planner and the simulator on the source document's model, card and drafter
# (the simulation is its table's: docs/sim.md, "The source document's table").
demo-gpu: build
	$(abspath $(BUILD_DIR))/goodput plan --model qwen3.5-27b --gpu b200 --weights int4 \
	  --max-model-len 1M --length-dist "0-200k:0.7,200k-500k:0.3" \
	  --compare kv-cache-dtype=fp8
	$(abspath $(BUILD_DIR))/goodput sim --model qwen3.5-27b --gpu b200 --weights nvfp4 \
	  --workload data/workloads/source-003.yaml --num-speculative-tokens 8 \
	  --mean-acceptance-length 3.4 --concurrency 1,8,32,128,256 --repeat 5

clean:
	rm -rf $(BUILD_DIR)
