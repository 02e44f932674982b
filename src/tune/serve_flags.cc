#include "tune/serve_flags.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "core/units.h"

namespace goodput {

namespace {

bool IsGoodputOnly(const std::string& flag) {
  static const std::set<std::string> kGoodputOnly = {"max-offline-seqs",  "slo-tpot",         "slo-headroom",
                                                     "acceptance-rate",   "draft-acceptance", "mean-acceptance-length",
                                                     "routing-imbalance", "num-draft-layers", "safety-buffer"};
  return kGoodputOnly.count(flag) > 0;
}

void Add(ServeFlags& out, const std::string& flag, const std::string& value) {
  out.args.insert(out.args.end(), {"--" + flag, value});
  out.yaml.push_back(flag + ": " + value);
}

// SGLang's own settings, which vLLM has no spelling for, and why: a note instead of a flag.
const std::map<std::string, std::string>& SglangOnly() {
  static const std::map<std::string, std::string> kWhy = {
      {"mem-fraction-static",
       "SGLang's share for the weights and the KV pool; vLLM's --gpu-memory-utilization also holds the activation "
       "peak: not mapped"},
      {"scheduler-recv-interval", "SGLang's; vLLM takes arrivals in at every step: not mapped"},
      {"cuda-graph-max-batch",
       "SGLang's --cuda-graph-max-bs; vLLM sets its largest captured batch in its CUDA-graph sizes: not mapped"}};
  return kWhy;
}

ServeFlags ForVllm(const Setting& s) {
  ServeFlags out{ServeCommand("vllm"), {}, {}, {}};
  for (const Setting::Flag& f : s.flags) {
    if (IsGoodputOnly(f.name)) {
      out.notes.push_back(fmt::format("{}={} is goodput's own setting; vLLM has no such flag", f.name, f.value));
    } else if (f.name == "kv-cache-memory") {
      auto bytes = ParseBytes(f.value);
      if (bytes.ok())
        Add(out, "kv-cache-memory-bytes", std::to_string(*bytes));
      else
        out.notes.push_back(fmt::format("kv-cache-memory={}: not a size", f.value));
    } else if (f.name == "num-speculative-tokens") {
      const std::string config = fmt::format(R"({{"num_speculative_tokens": {}}})", f.value);
      out.args.insert(out.args.end(), {"--speculative-config", "'" + config + "'"});
      out.yaml.push_back("speculative-config: '" + config + "'");
      out.notes.push_back("speculative-config also names your drafter (its method and model)");
    } else if (f.name == "weights") {
      if (f.value == "fp8")
        Add(out, "quantization", "fp8");
      else
        out.notes.push_back(
            fmt::format("weights={}: serve a checkpoint quantized to {} (not a flag)", f.value, f.value));
    } else if (f.name == "scheduling-policy" && f.value == "slo") {
      out.notes.push_back("scheduling-policy=slo is goodput serve's own (vLLM has fcfs and priority)");
    } else if (const auto why = SglangOnly().find(f.name); why != SglangOnly().end()) {
      out.notes.push_back(fmt::format("{}={}: {}", f.name, f.value, why->second));
    } else {
      Add(out, f.name, f.value);
    }
  }
  return out;
}

// SGLang's names for the flags whose meaning is the same (python/sglang/srt/
// server_args.py): its running-request cap, the token budget it chunks
// prompts to (the sglang engine entry's budget), context length, page size.
const std::map<std::string, std::string>& SglangNames() {
  static const std::map<std::string, std::string> kNames = {{"max-num-seqs", "max-running-requests"},
                                                            {"max-num-batched-tokens", "chunked-prefill-size"},
                                                            {"max-model-len", "context-length"},
                                                            {"block-size", "page-size"},
                                                            {"mem-fraction-static", "mem-fraction-static"},
                                                            {"scheduler-recv-interval", "scheduler-recv-interval"},
                                                            {"cuda-graph-max-batch", "cuda-graph-max-bs"},
                                                            {"tp", "tp-size"},
                                                            {"tensor-parallel-size", "tp-size"}};
  return kNames;
}

// Why a flag of goodput's (vLLM's) has no SGLang spelling here, by name.
const std::map<std::string, std::string>& SglangGaps() {
  static const std::map<std::string, std::string> kWhy = {
      {"gpu-memory-utilization",
       "SGLang's --mem-fraction-static is the share of memory for the weights and the KV pool, not vLLM's share "
       "for the whole process: not mapped"},
      {"kv-cache-memory", "SGLang sizes its KV pool in tokens (--max-total-tokens): not mapped"},
      {"num-speculative-tokens",
       "SGLang drafts with --speculative-algorithm and --speculative-num-steps / --speculative-num-draft-tokens: "
       "not mapped"},
      {"weights", "serve a checkpoint quantized so (not a flag)"},
      {"scheduling-policy", "goodput serve's own policy (SGLang's --schedule-policy has fcfs, priority, lpm, ...)"},
      {"kv-cache-dtype", "SGLang's --kv-cache-dtype takes auto, fp8_e4m3 or fp8_e5m2"}};
  return kWhy;
}

// A flag SGLang has no spelling for here, as a note instead of a wrong flag.
std::string SglangGap(const Setting::Flag& f) {
  if (IsGoodputOnly(f.name))
    return fmt::format("{}={} is goodput's own setting; SGLang has no such flag", f.name, f.value);
  const auto why = SglangGaps().find(f.name);
  return fmt::format("{}={}: {}", f.name, f.value,
                     why != SglangGaps().end() ? why->second : "no SGLang spelling known to goodput: not mapped");
}

ServeFlags ForSglang(const Setting& s) {
  ServeFlags out{ServeCommand("sglang"), {}, {}, {}};
  for (const Setting::Flag& f : s.flags) {
    const auto renamed = SglangNames().find(f.name);
    if (renamed != SglangNames().end())
      Add(out, renamed->second, f.value);
    else if (f.name == "weights" && f.value == "fp8")
      Add(out, "quantization", "fp8");
    else if (f.name == "scheduling-policy" && (f.value == "fcfs" || f.value == "priority"))
      Add(out, "schedule-policy", f.value);
    else if (f.name == "kv-cache-dtype" && (f.value == "auto" || f.value.rfind("fp8", 0) == 0))
      Add(out, "kv-cache-dtype", f.value == "fp8" ? "fp8_e4m3" : f.value);  // vLLM's fp8 is e4m3
    else
      out.notes.push_back(SglangGap(f));
  }
  return out;
}

// TensorRT-LLM's spelling (trtllm-serve's options) is not mapped.
bool Unmapped(const std::string& engine) { return engine == "trtllm" || engine == "trtllm-cpp"; }

}  // namespace

std::string ServeCommand(const std::string& engine) {
  if (engine == "sglang") return "python -m sglang.launch_server";
  return Unmapped(engine) ? "" : "vllm serve";
}

ServeFlags ServeFlagsFor(const Setting& s, const std::string& engine) {
  if (engine == "sglang") return ForSglang(s);
  if (Unmapped(engine)) {
    ServeFlags out;
    if (!s.empty())
      out.notes.push_back(
          "TensorRT-LLM's spelling of these flags is not mapped: set its max_batch_size, "
          "max_num_tokens and KV cache options to the engine flags' values by hand");
    return out;
  }
  return ForVllm(s);
}

std::string EngineOfSimArgs(const std::vector<std::string>& args) {
  std::string engine = "vllm";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--engine" && i + 1 < args.size())
      engine = args[i + 1];
    else if (args[i].rfind("--engine=", 0) == 0)
      engine = args[i].substr(9);
  }
  return engine;
}

}  // namespace goodput
