#include "cpu_engine.h"

#include <utility>

namespace goodput::bench {

CpuEngine MakeCpuEngine(const ModelSpec& m, const cpu::ModelWeights& w, int64_t blocks) {
  CpuEngine e;
  e.m = m;
  e.layout = cpu::MakeCpuKvLayout(m, 16);
  e.kv = std::make_unique<KvCacheManager>(e.layout.groups, blocks);
  SchedulerConfig sc;
  sc.max_num_batched_tokens = 4096;
  sc.max_num_seqs = 256;
  sc.max_model_len = m.max_position_embeddings;
  e.sched = std::make_unique<Scheduler>(sc, e.kv.get(), nullptr);
  e.runner = std::move(cpu::CpuModelRunner::Create(m, w, e.layout, cpu::KvFormat::kFp32, blocks, 16).value());
  return e;
}

std::vector<int32_t> PromptTokens(int i, int prompt) {
  std::vector<int32_t> ids;
  for (int t = 0; t < prompt; ++t) ids.push_back(3 + (t * 31 + i) % 250);
  return ids;
}

void AddRequests(CpuEngine& e, int n, int prompt, int max_tokens) {
  for (int i = 0; i < n; ++i) {
    Request r;
    r.id = i;
    r.num_prompt_tokens = prompt;
    r.token_ids = PromptTokens(i, prompt);
    r.sampling.max_tokens = max_tokens;
    r.sampling.ignore_eos = true;
    e.sched->Add(r);
  }
}

double TimedStep(CpuEngine& e, RealClock& clock, int64_t* tokens, StepPlan* plan, std::vector<int32_t>* sampled) {
  const StepPlan& p = e.sched->Schedule();
  const double t0 = clock.Now();
  StepResult r = e.runner->Execute(p);
  const double secs = clock.Now() - t0;
  *tokens = p.num_batched_tokens;
  if (plan) *plan = p;
  if (sampled) {
    for (const SampledTokens& s : r.sampled) sampled->insert(sampled->end(), s.token_ids.begin(), s.token_ids.end());
  }
  e.sched->Update(p, r);
  return secs;
}

}  // namespace goodput::bench
