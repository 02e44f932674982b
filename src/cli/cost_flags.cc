#include "cli/cost_flags.h"

namespace goodput {

void AddCostFlags(CLI::App& c, CostArgs& a) {
  c.add_option("--compute-efficiency", a.compute_efficiency,
               "Override the GPU entry's matmul efficiency (the routed experts keep the entry's MoE-kernel rate where "
               "it has one)");
  c.add_option("--expert-efficiency", a.expert_efficiency,
               "Override the routed experts' matmul efficiency, of the weight format's peak (the engine's MoE kernel; "
               "0: as the other matmuls; default: the GPU entry's for the format, data/hardware/gpus.json)");
  c.add_option("--bandwidth-efficiency", a.bandwidth_efficiency, "Override the GPU entry's bandwidth efficiency");
  c.add_option("--step-overhead", a.step_overhead, "Override the per-step overhead (seconds; default: --engine's)");
  c.add_option("--per-request-cost", a.per_request_cost,
               "Override the host-side cost per scheduled request per step (seconds; the engine's scheduler, "
               "sampling and output handling; default: --engine's)");
  c.add_option("--frontend-latency", a.frontend_latency,
               "The engine's front end (vLLM's API server): seconds from a request's arrival to the scheduler, "
               "every request alongside the others (default: --engine's, or the calibration's)");
  c.add_option("--kernel-latency", a.kernel_latency,
               "Override a GPU kernel's time beyond its work (seconds, per kernel of the forward pass; default: the "
               "card's, data/hardware/gpus.json)");
  c.add_option("--allreduce-latency", a.allreduce_latency,
               "Override a collective's fixed time beyond its bytes (seconds, per tensor-parallel all-reduce, two a "
               "layer, and per data-parallel MoE collective; default: the card's link latency, "
               "data/hardware/gpus.json). An engine that fuses the "
               "all-reduce with the next norm runs that norm inside it: give the fused kernel's time less a "
               "kernel latency");
  c.add_option("--eager-prompt-kernel", a.eager_kernel,
               "Override the host's time to launch a kernel in a step that computes a prompt, where the engine runs "
               "those steps without CUDA graphs (seconds; the step's GPU time is then at least its kernels times "
               "this; 0: prompts replay graphs as decodes do; default: --engine's)");
  c.add_option("--cuda-graph-max-batch,--cuda-graph-max-bs", a.graph_max_batch,
               "The most requests a decode step runs under a CUDA graph (per data-parallel replica); a larger one "
               "launches its kernels from the host as an eager prompt step does (--eager-prompt-kernel). SGLang's "
               "--cuda-graph-max-bs; 0: every decode step replays a graph; default: --engine's for the card's memory "
               "and the GPUs (docs/sim.md)")
      ->check(CLI::NonNegativeNumber);
  c.add_option("--overlap", a.overlap,
               "Override how far a phase's compute and memory time overlap (1: the longer alone; 0: their sum; "
               "default: the card's)");
  c.add_flag("--async-scheduling,!--no-async-scheduling", a.async_scheduling,
             "Override whether the engine prepares the next step while the GPU runs this one, so a step takes the "
             "longer of its host and GPU work instead of their sum (vLLM's --async-scheduling; SGLang's and "
             "TensorRT-LLM's overlap schedulers; default: --engine's)");
}

CostOverrides OverridesOf(const CostArgs& a) {
  CostOverrides o;
  o.compute_efficiency = a.compute_efficiency, o.expert_efficiency = a.expert_efficiency;
  o.bandwidth_efficiency = a.bandwidth_efficiency;
  o.overlap = a.overlap, o.kernel_latency_s = a.kernel_latency;
  o.step_overhead_s = a.step_overhead, o.per_sequence_s = a.per_request_cost;
  o.frontend_latency_s = a.frontend_latency, o.eager_kernel_s = a.eager_kernel;
  o.link_latency_s = a.allreduce_latency, o.graph_max_batch = a.graph_max_batch;
  if (a.async_scheduling != 0) o.async_scheduling = a.async_scheduling > 0;
  return o;
}

}  // namespace goodput
