// Opens STREAMS streaming completions at once against goodput serve at URL,
// then, STORM_MS after the first, drops the first DROP of them abruptly (the
// socket destroyed, whether the request is running or still queued): a
// disconnect storm. Prints one JSON line: how many of the kept streams ended
// with [DONE] and all their tokens, how many failed (and the first reason),
// how many were dropped (and of them, how many had already finished), and
// the wall time.
// Usage: node stream_storm.mjs URL STREAMS DROP STORM_MS MAX_TOKENS
import http from 'node:http';

const [url, streams, drop, stormMs, maxTokens] = process.argv.slice(2);
const n = Number(streams);
const body = JSON.stringify({
  model: 'goodput-tiny', prompt: 'hello', max_tokens: Number(maxTokens), ignore_eos: true, stream: true,
  stream_options: { include_usage: true },
});
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
const dropCount = Number(drop);
const result = { streams: n, completed: 0, failed: 0, dropped: 0, finished_before_drop: 0, first_failure: '' };
const requests = [];

function fail(reason) {
  result.failed += 1;
  if (!result.first_failure) result.first_failure = reason;
}

function stream(i) {
  return new Promise((resolve) => {
    const req = http.request(`${url}/v1/completions`, {
      method: 'POST', agent, headers: { 'content-type': 'application/json' },
    });
    requests[i] = req;
    let text = '';
    req.on('response', (res) => {
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => {
        const tokens = (text.match(/"completion_tokens":(\d+)/) || [])[1];
        const whole = res.statusCode === 200 && text.includes('data: [DONE]') && tokens === maxTokens;
        if (i < dropCount) result.finished_before_drop += whole ? 1 : 0;
        else if (whole) result.completed += 1;
        else fail(`status ${res.statusCode}, ${tokens ?? 'no'} tokens: ${text.slice(-120)}`);
        resolve();
      });
      res.on('error', () => resolve());
    });
    req.on('error', (e) => {
      if (i >= dropCount) fail(String(e));
      resolve();
    });
    req.end(body);
  });
}

const start = Date.now();
const all = [];
for (let i = 0; i < n; ++i) all.push(stream(i));
setTimeout(() => {
  for (let i = 0; i < dropCount; ++i) {
    result.dropped += 1;
    requests[i].destroy();
  }
}, Number(stormMs));
await Promise.all(all);
result.seconds = (Date.now() - start) / 1000;
console.log(JSON.stringify(result));
