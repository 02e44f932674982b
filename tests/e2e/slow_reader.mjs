// A client that sends a streaming request and then stops reading for
// PAUSE_MS. Prints the bytes it finally received and whether the stream
// ended with [DONE] (a server that drops stalled readers cuts it short).
// Usage: node slow_reader.mjs PORT JSON_BODY PAUSE_MS (GOODPUT_PATH: the
// endpoint, default /v1/completions)
import net from 'node:net';

const [port, body, pauseMs] = process.argv.slice(2);
const path = process.env.GOODPUT_PATH ?? '/v1/completions';
const socket = net.connect({ host: '127.0.0.1', port: Number(port) }, () => {
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
});
const chunks = [];
socket.on('data', (d) => chunks.push(d));
socket.once('data', () => {
  socket.pause();  // stop reading: the kernel buffers fill and the server's writes stall
  setTimeout(() => socket.resume(), Number(pauseMs));
});
const finish = () => {
  const text = Buffer.concat(chunks).toString('latin1');
  console.log(`${text.length} ${text.includes('data: [DONE]') ? 'done' : 'cut'}`);
  process.exit(0);
};
socket.on('end', finish);
socket.on('error', finish);
socket.on('close', finish);
