// llama.cpp's side of perf/vs_llama_cpp, through node-llama-cpp (its CPU
// build, the prebuilt binaries that npm installs). Reads a JSON job from the
// file named by argv[2]:
//   {"model": "x.gguf", "prompt": [ids], "prefill_rounds": 3, "decode_tokens": 128, "threads": 2}
// and prints one JSON line: each prefill's seconds, each generated token's
// time after the prompt was sent, the greedy tokens, and which CPU backend
// llama.cpp loaded.
import {readFileSync} from "node:fs";
import {performance} from "node:perf_hooks";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const nodeLlamaCpp = JSON.parse(
    readFileSync(new URL("./node_modules/node-llama-cpp/package.json", import.meta.url), "utf8")).version;
const job = JSON.parse(readFileSync(process.argv[2], "utf8"));
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath: job.model, gpuLayers: 0});
const context = await model.createContext({
  contextSize: job.prompt.length + job.decode_tokens + 16,
  batchSize: job.prompt.length,
  threads: job.threads,
  sequences: 1,
});
const sequence = context.getSequence();

const prefillSeconds = [];
for (let round = 0; round < job.prefill_rounds; ++round) {
  await sequence.clearHistory();
  const t0 = performance.now();
  await sequence.evaluateWithoutGeneratingNewTokens(job.prompt);
  prefillSeconds.push((performance.now() - t0) / 1e3);
}

await sequence.clearHistory();
const tokens = [], tokenSeconds = [];
const t0 = performance.now();
for await (const token of sequence.evaluate(job.prompt, {temperature: 0})) {
  tokenSeconds.push((performance.now() - t0) / 1e3);
  tokens.push(token);
  if (tokens.length >= job.decode_tokens) break;
}

console.log(JSON.stringify({
  prefill_seconds: prefillSeconds,
  token_seconds: tokenSeconds,
  tokens,
  threads: context.currentThreads ?? job.threads,
  llama_cpp: llama.llamaCppRelease.release,
  node_llama_cpp: nodeLlamaCpp,
  build: llama.buildType,
  system_info: llama.systemInfo,
}));
await context.dispose();
await model.dispose();
await llama.dispose();
