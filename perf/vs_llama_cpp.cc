// goodput's CPU engine beside llama.cpp (node-llama-cpp's prebuilt CPU
// binaries) on the same float32 weights: goodput-small's dummy weights
// (goodput serve's default seed), exported as GGUF. Prints prefill and
// batch-1 decode tokens/s side by side, round after round (this machine is
// shared: the two engines alternate, and the ratio is of the medians), and
// whether both engines' greedy answers to the same prompt agree (the check
// that the export carries the same model).
//
//   perf/vs_llama_cpp.sh          (installs node-llama-cpp, then runs this)
//   build/perf/vs_llama_cpp NODE_DIR [ROUNDS] [PROMPT_TOKENS]
//
// NODE_DIR holds node_modules/node-llama-cpp and llama_cpp.mjs.
#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/host.h"
#include "cpu/kernels.h"
#include "cpu_engine.h"
#include "gguf_writer.h"
#include "model/catalog.h"

using namespace goodput;

namespace {

constexpr int kDecodeTokens = 128;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Side {
  std::vector<double> prefill_seconds;  // one per prefill
  double decode_seconds = 0;            // median time per generated token after the first
  std::vector<int32_t> tokens;          // greedy answer
  std::string about;                    // what ran
};

Side RunGoodput(const ModelSpec& m, const cpu::ModelWeights& w, int prompt, int rounds, RealClock& clock) {
  Side s;
  // One engine (it copies the 416 MB of weights): each prefill but the last
  // is aborted, freeing its blocks (the engine caches no prefixes).
  bench::CpuEngine e = bench::MakeCpuEngine(m, w, 4096);
  int64_t tokens = 0;
  for (int r = 0; r < rounds; ++r) {
    s.tokens.clear();
    bench::AddRequests(e, 1, prompt, kDecodeTokens);
    s.prefill_seconds.push_back(bench::TimedStep(e, clock, &tokens, nullptr, &s.tokens));
    if (r + 1 < rounds) e.sched->Abort(0);
  }
  std::vector<double> steps;
  while (static_cast<int>(s.tokens.size()) < kDecodeTokens) {
    steps.push_back(bench::TimedStep(e, clock, &tokens, nullptr, &s.tokens));
  }
  s.decode_seconds = Median(steps);
  s.about = cpu::MatMulKernels();
  return s;
}

Result<std::string> Capture(const std::string& cmd) {
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return Status::IoError("cannot run: " + cmd);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  if (pclose(pipe) != 0) return Status::IoError(fmt::format("failed: {}\n{}", cmd, out));
  return out;
}

Result<Side> RunLlamaCpp(const std::string& node_dir, const std::string& gguf, int prompt, int rounds) {
  boost::json::array ids;
  for (int32_t t : bench::PromptTokens(0, prompt)) ids.push_back(t);
  const std::string job_path = node_dir + "/job.json";
  std::ofstream(job_path) << boost::json::serialize(boost::json::object{
      {"model", gguf}, {"prompt", ids}, {"prefill_rounds", rounds}, {"decode_tokens", kDecodeTokens}, {"threads", 2}});
  Result<std::string> out = Capture(fmt::format("node '{}/llama_cpp.mjs' '{}' 2>&1", node_dir, job_path));
  if (!out.ok()) return out.status();
  const std::string& text = out.value();
  const boost::json::object o =
      boost::json::parse(text.substr(text.rfind('{', text.rfind("\"prefill_seconds\"")))).as_object();
  Side s;
  for (const auto& v : o.at("prefill_seconds").as_array()) s.prefill_seconds.push_back(v.to_number<double>());
  std::vector<double> t, gaps;
  for (const auto& v : o.at("token_seconds").as_array()) t.push_back(v.to_number<double>());
  for (size_t i = 1; i < t.size(); ++i) gaps.push_back(t[i] - t[i - 1]);
  s.decode_seconds = Median(gaps);
  for (const auto& v : o.at("tokens").as_array()) s.tokens.push_back(static_cast<int32_t>(v.to_number<int64_t>()));
  const auto str = [&](const char* key) { return boost::json::value_to<std::string>(o.at(key)); };
  s.about = fmt::format("llama.cpp release {} ({} binaries of node-llama-cpp {}), {} threads; {}", str("llama_cpp"),
                        str("build"), str("node_llama_cpp"), o.at("threads").to_number<int64_t>(), str("system_info"));
  return s;
}

size_t Agreeing(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: vs_llama_cpp NODE_DIR [ROUNDS] [PROMPT_TOKENS]\n");
    return 2;
  }
  const std::string node_dir = argv[1];
  const int rounds = argc > 2 ? std::stoi(argv[2]) : 3, prompt = argc > 3 ? std::stoi(argv[3]) : 1024;
  const ModelSpec m = *LoadModel("goodput-small");
  const cpu::ModelWeights w = cpu::DummyWeights(m, 0);  // goodput serve's default --seed
  const std::string gguf = node_dir + "/goodput-small-f32.gguf";
  if (Status s = bench::WriteLlamaGguf(m, w, gguf); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  std::printf("goodput-small (%.0f MB of fp32 weights) on %s; %d-token prompt, %d tokens generated greedily\n",
              w.Bytes() / 1e6, HostCpuName().c_str(), prompt, kDecodeTokens);
  std::printf("%5s %22s %22s %22s %22s\n", "round", "goodput prefill tok/s", "llama.cpp prefill",
              "goodput decode tok/s", "llama.cpp decode");
  RealClock clock;
  std::vector<double> ours_prefill, theirs_prefill, ours_decode, theirs_decode;
  Side ours, theirs;
  for (int r = 0; r < rounds; ++r) {
    ours = RunGoodput(m, w, prompt, 3, clock);
    Result<Side> llama = RunLlamaCpp(node_dir, gguf, prompt, 3);
    if (!llama.ok()) {
      std::fprintf(stderr, "llama.cpp: %s\n", llama.status().message().c_str());
      return 1;
    }
    theirs = llama.value();
    ours_prefill.push_back(prompt / Median(ours.prefill_seconds));
    theirs_prefill.push_back(prompt / Median(theirs.prefill_seconds));
    ours_decode.push_back(1 / ours.decode_seconds);
    theirs_decode.push_back(1 / theirs.decode_seconds);
    std::printf("%5d %22.0f %22.0f %22.1f %22.1f\n", r + 1, ours_prefill.back(), theirs_prefill.back(),
                ours_decode.back(), theirs_decode.back());
    std::fflush(stdout);
  }
  std::printf("%5s %22.0f %22.0f %22.1f %22.1f\n", "median", Median(ours_prefill), Median(theirs_prefill),
              Median(ours_decode), Median(theirs_decode));
  std::printf("goodput / llama.cpp: prefill %.2fx (target >= 1), decode %.2fx\n",
              Median(ours_prefill) / Median(theirs_prefill), Median(ours_decode) / Median(theirs_decode));
  std::printf("greedy answers: the first %zu of %d tokens agree\n", Agreeing(ours.tokens, theirs.tokens),
              kDecodeTokens);
  std::printf("goodput: %s\nllama.cpp: %s\n", ours.about.c_str(), theirs.about.c_str());
  return 0;
}
