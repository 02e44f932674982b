// The public validation set: GPU serving figures someone published, one
// YAML file per source under data/validation/ (docs/calibration.md, "The
// public validation set", describes the file). Each row is a deployment
// (model, card, parallelism, formats, engine flags), a workload, a load and
// the figures the source printed; it becomes one `goodput sim` command line,
// and the simulated figures' errors are summarised per figure kind and per
// group (card, engine, source, weights, tensor parallelism).
#pragma once

#include <array>
#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace goodput::validation {

// A figure a source prints, as `vllm bench serve` and its kin name them.
enum class Figure { kThroughput, kTtftP50, kTtftMean, kTpotP50, kTpotMean, kItlP50, kPerRequest, kPerRequestMean };

// The figure's key in a row's `published:` mapping ("throughput" in output
// tokens/s, "ttft_p50_ms", ..., "per_request_tok_s": one user's tokens/s, 1 / TPOT p50;
// "per_request_mean_tok_s": 1 / mean TPOT, where a source derived its speed from a mean).
const char* FigureKey(Figure f);

// What the medians group it under: "throughput", "ttft", "tpot", "itl" or "per-request".
const char* FigureKind(Figure f);

// One published figure of a row.
struct Published {
  Figure figure = Figure::kThroughput;
  double value = 0;    // tokens/s, or milliseconds
  std::string fitted;  // the catalog factor fitted to it; empty: held out
};

// The engines a source may name (engine_kind): each runs its entry of
// data/hardware/engines.json.
inline constexpr std::array<std::string_view, 5> kEngineKinds = {"vllm", "vllm-v0", "sglang", "trtllm", "trtllm-cpp"};

// One published measurement: what ran and what it printed.
struct Row {
  std::string where;        // "FILE:LINE", for messages
  std::string source;       // the file's source title
  std::string url;          // the file's source address
  std::string engine_kind;  // vllm | vllm-v0 | sglang | trtllm | trtllm-cpp
  std::string model;
  std::string gpu;
  int tp = 1;
  std::string weights;         // empty: the checkpoint's
  std::string kv_cache_dtype;  // empty: the model's
  std::string args;            // further goodput sim flags, as one string (with the engine's limits, see below)
  std::string limits;          // "trtllm-bench": the batch limits trtllm-bench picks are added to args
  std::string workload;        // a workload file; empty when prompt/output are given
  std::string prompt;          // a length spec ("fixed:1024", "lognormal:215,1")
  std::string output;
  int64_t requests = 0;  // 0: the workload's own count
  int concurrency = 0;   // closed loop with this many clients
  double rate = 0;       // open loop at this many requests/s; neither: all at once
  int repeat = 1;        // runs, the figures their medians (no file sets it: perf/source_table does)
  std::vector<std::string> tags;
  std::string note;
  std::vector<Published> figures;
};

// trtllm-bench's batch limits when none are given (TensorRT-LLM's
// tensorrt_llm/bench/build/tuning.py, calc_engine_setting and
// finetune_setting): the requests of `isl` + `osl` tokens whose KV fits in
// `fraction` of the memory the weights leave (every GPU's `gpu_memory_gib`
// as NVML reports it, weights at the format's bytes per parameter), capped
// at 4,096 and rounded up (to 32 below 256, 128 below 1,024, else 256; at
// least 64); the token budget that many requests x (1 + isl / osl), capped
// at 32,768 and rounded up (to 256 below 4,096, at least 2,048; 512 below
// 8,192; else 1,024).
struct BatchLimits {
  int64_t max_batch_size = 0;
  int64_t max_num_tokens = 0;
};
BatchLimits TrtllmBenchLimits(double gpu_memory_gib, int gpus, double weight_gib, double kv_bytes_per_token,
                              int64_t isl, int64_t osl, double fraction = 0.95);

// Reads one source file. A workload named without a directory is looked up
// in `workloads_dir`. Errors name the file and line: a missing or unknown
// key, a figure that is not a positive number, both or neither of a workload
// and prompt/output lengths, both a concurrency and a rate.
Result<std::vector<Row>> ReadSourceFile(const std::string& path, const std::string& workloads_dir);

// Reads every *.yaml file of `dir`, in name order; an empty directory is an error.
Result<std::vector<Row>> ReadValidationSet(const std::string& dir, const std::string& workloads_dir);

// The workload file the row runs: its own workload (or one built from its
// prompt and output lengths) with every request arriving at once when the
// row gives no concurrency or rate (a source's "request rate inf").
Result<std::string> WorkloadYaml(const Row& row);

// goodput sim's arguments for the row (after the binary's name), already
// shell-quoted, running `workload_path` the row's runs (once unless set) with --json, under
// the engine kind's entry of the engines catalog (host costs and scheduling).
std::string SimArgs(const Row& row, const std::string& workload_path);

// Runs the `goodput` binary's simulator on the row (its workload written to a
// scratch file of this process, removed after) with `extra_args` after the
// row's own flags, the command line echoed to stderr when `echo`: goodput
// sim's --json output, or an error naming the row and the command.
Result<boost::json::value> SimulateRow(const std::string& goodput, const Row& row, const std::string& extra_args,
                                       bool echo);

// The figure in goodput sim's --json output (its first setting's first load),
// in the published unit (tokens/s, or milliseconds).
Result<double> SimulatedFigure(const boost::json::value& sim_json, Figure f);

// One figure compared.
struct Outcome {
  const Row* row = nullptr;
  Published published;
  double simulated = 0;
  double Error() const { return simulated / published.value - 1; }  // > 0: the simulator's figure is higher
};

// The errors of one group of figures.
struct GroupSummary {
  std::string group;  // "tpot", or "tpot / card h100"
  int count = 0;
  double median_abs_error = 0;
  double share_above = 0;  // share of figures the simulator put above the published one
};

// Medians by figure kind, then by kind within each card, engine, source,
// weight format and tensor-parallel group. `held_out_only` leaves out the
// figures a catalog factor was fitted to.
std::vector<GroupSummary> Summarise(const std::vector<Outcome>& outcomes, bool held_out_only);

// How much of the held-out figures' error of one kind sits between groups
// rather than within them: the median absolute error left once each group's
// median error (in log terms) is taken out of its figures. An oracle, not a
// model: no simulator knows a deployment's own bias beforehand.
struct WithinGroups {
  std::string by;  // "source", or "deployment": source, model, card, tensor parallelism and weights
  int groups = 0;
  int count = 0;
  double median_abs_error = 0;
};
// For the held-out figures of `kind` ("throughput", "tpot", ...): by source, then by deployment;
// empty without such figures.
std::vector<WithinGroups> ErrorWithinGroups(const std::vector<Outcome>& outcomes, const std::string& kind);

}  // namespace goodput::validation
