// Streams one completion and prints the longest gap between token-carrying
// SSE events in milliseconds (the request's worst inter-token latency), the
// number of events, and the time to the first of them (TTFT, ms).
// Usage: node stream_gaps.mjs BASE_URL JSON_BODY
const [base, body] = process.argv.slice(2);
const sent = performance.now();
let first = null;
const res = await fetch(`${base}/v1/completions`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body,
});
if (!res.ok) {
  console.error(`HTTP ${res.status}: ${await res.text()}`);
  process.exit(1);
}
const decoder = new TextDecoder();
let buffer = '';
let last = null;
let maxGap = 0;
let events = 0;
for await (const chunk of res.body) {
  buffer += decoder.decode(chunk, { stream: true });
  let end;
  while ((end = buffer.indexOf('\n\n')) >= 0) {
    const event = buffer.slice(0, end);
    buffer = buffer.slice(end + 2);
    if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
    const now = performance.now();
    if (last !== null) maxGap = Math.max(maxGap, now - last);
    if (first === null) first = now - sent;
    last = now;
    events += 1;
  }
}
console.log(`${maxGap.toFixed(1)} ${events} ${(first ?? 0).toFixed(1)}`);
