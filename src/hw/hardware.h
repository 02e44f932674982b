// The hardware catalog (data/hardware/gpus.json): memory, bandwidth and dense
// peak FLOP/s per accelerator.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace goodput {

struct HardwareSpec {
  std::string name;      // catalog key, e.g. "h100-sxm"
  std::string display;   // "NVIDIA H100 SXM 80GB"
  std::string arch;      // "sm80", "sm90", "gfx942", ...: picks vLLM's kernels; empty when not known
  std::vector<std::string> aliases;
  int64_t memory_bytes = 0;                  // nominal capacity
  std::optional<double> usable_memory_gib;   // total as CUDA/PyTorch reports it, where known
  double memory_bandwidth = 0;               // bytes/s
  std::optional<double> bf16_flops;          // dense, FLOP/s
  std::optional<double> fp8_flops;
  std::optional<double> fp4_flops;
  std::string source;

  // Cost-model factors (see hw/cost_model.h); the entry may set them.
  double compute_efficiency = 0.6;     // achieved / peak dense FLOP/s in matmuls
  // Where a weight format runs at its own efficiency on this card (a format
  // without native tensor cores is dequantized inside the kernel: mxfp4 on
  // Hopper), by precision name; others use compute_efficiency.
  std::map<std::string, double> compute_efficiency_by_precision;
  // Attention (activations x KV: 16-bit whatever the weights' format) against
  // the 16-bit peak, by the model's weight precision, where the engine runs
  // that model family with its own attention kernel (gpt-oss's sinks on
  // Ampere); others use compute_efficiency.
  std::map<std::string, double> attention_efficiency_by_precision;
  // The routed experts' grouped GEMM (the engine's fused-MoE kernel) against
  // the format's peak, by weight precision, where a kernel timing shows it far
  // from the dense matmuls' (vLLM's Triton FP8 MoE on Hopper); others run the
  // experts at the dense matmuls' efficiency.
  std::map<std::string, double> expert_efficiency_by_precision;
  double bandwidth_efficiency = 0.85;  // achieved / peak memory bandwidth
  double step_overhead_s = 0.0005;     // fixed cost of one engine step
  // The link between tensor-parallel GPUs (NVLink, Infinity Fabric, PCIe):
  // bytes/s per direction per GPU, and the latency of one all-reduce.
  double link_bandwidth = 0;
  double link_latency_s = 0;
  // A GPU kernel's time beyond its work (hw/kernel_count.h): the entry's, else
  // the catalog's default (gpus.json "defaults"); 0 for the CPU engine.
  double kernel_latency_s = 0;
  // How far a phase's compute and memory time overlap in the cost model's
  // roofline (1: the longer alone; 0: their sum): the entry's, else the
  // catalog's default.
  double overlap = 1.0;
  bool cpu = false;  // the CPU engine, as a calibration describes it (vLLM's CPU defaults apply)

  // The memory vLLM sees as "total": the reported figure where known, else the
  // nominal capacity.
  int64_t TotalMemoryBytes() const;
  bool total_is_nominal() const { return !usable_memory_gib.has_value(); }
  // The matmul efficiency for a weight precision ("bf16", "mxfp4", ...).
  double ComputeEfficiencyFor(const std::string& precision) const;
  // The attention efficiency (against the 16-bit peak) for a model whose
  // weights are in `precision`.
  double AttentionEfficiencyFor(const std::string& precision) const;
  // The routed experts' efficiency for weights in `precision`; 0 where the
  // entry gives none (the experts then run as the dense matmuls).
  double ExpertEfficiencyFor(const std::string& precision) const;
};

// Whether `arch` names a GPU architecture as HardwareSpec::arch holds it:
// "sm" and a 2-3 digit compute capability (sm80, sm90, sm100), or "gfx" and
// an AMD target (gfx942).
bool IsGpuArch(const std::string& arch);

// The compute capability of an NVIDIA `arch` ("sm90" -> 90, "sm100" -> 100);
// 0 for anything else (AMD targets, empty, malformed).
int SmVersion(const std::string& arch);

// All catalog entries, in file order. Errors name the file and entry.
Result<std::vector<HardwareSpec>> LoadHardwareCatalog();

// The catalog's defaults (gpus.json "defaults": kernel_latency_s, required;
// overlap, 1 when absent), for a card given by its figures rather than by name.
struct CatalogDefaults {
  double kernel_latency_s = 0;
  double overlap = 1.0;
};
Result<CatalogDefaults> LoadCatalogDefaults();

// Finds a GPU by name or alias (case-insensitive). Unknown names list the
// known ones.
Result<HardwareSpec> FindGpu(const std::string& name);

}  // namespace goodput
