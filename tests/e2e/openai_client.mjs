// The official `openai` npm client against goodput serve: completions and
// chat, streaming and not. Exits non-zero on the first failed check.
import OpenAI from "openai";
import assert from "node:assert/strict";

const client = new OpenAI({ baseURL: process.argv[2], apiKey: "test-key" });
const model = "goodput-tiny";

const completion = await client.completions.create({ model, prompt: "Hello", max_tokens: 5, ignore_eos: true });
assert.equal(completion.usage.completion_tokens, 5);
assert.equal(completion.choices[0].finish_reason, "length");

const chat = await client.chat.completions.create({
  model, messages: [{ role: "user", content: "hi" }], max_tokens: 4, ignore_eos: true,
});
assert.equal(chat.choices[0].message.role, "assistant");
assert.equal(chat.usage.completion_tokens, 4);

const stream = await client.chat.completions.create({
  model, messages: [{ role: "user", content: "hi" }], max_tokens: 6, ignore_eos: true, stream: true,
  stream_options: { include_usage: true },
});
let chunks = 0, usage = null, finish = null;
for await (const chunk of stream) {
  chunks++;
  if (chunk.usage) usage = chunk.usage;
  if (chunk.choices.length && chunk.choices[0].finish_reason) finish = chunk.choices[0].finish_reason;
}
assert.ok(chunks >= 2, `got ${chunks} chunks`);
assert.equal(usage.completion_tokens, 6);
assert.equal(finish, "length");

const textStream = await client.completions.create({ model, prompt: [1, 72, 105], max_tokens: 3, ignore_eos: true, stream: true });
let pieces = 0;
for await (const chunk of textStream) pieces += chunk.choices.length;
assert.ok(pieces >= 1);

await assert.rejects(client.completions.create({ model: "nope", prompt: "x" }), (e) => e.status === 404);
await assert.rejects(client.completions.create({ model, prompt: "x", max_tokens: -1 }), (e) => e.status === 400);
console.log("openai client: all checks passed");
