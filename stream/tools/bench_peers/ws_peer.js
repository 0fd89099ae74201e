// A peer for `arena-stream bench fanout` / `bench all`: the Node `ws` library doing
// exactly what the bare websockets server does (`bare_main` in stream/tools/fanout_bench/peers.py):
//
//   /watch...  a viewer: sent {"type":"hello","seq":N} at once, then every frame;
//   any other  a device: "auth" -> "welcome" and a clock-sync "ping" (its "pong" is
//              ignored); "send" -> seq + 1, one prebuilt frame
//              (bare_frame(seq, FRAME_BYTES)) to every open viewer, then the "ack";
//              "ping" -> "pong".
//
// The service's loop-stall probe (stream/live/ops/stall.py) in JavaScript: a timer every 10 ms
// that notes how late it fired (lateness = when it ran - when it was due); a plain
// `GET /lag` on the same port answers the lateness since the previous read and empties it:
// {"p99_ms": .., "max_ms": .., "samples": n} (null for no samples), as the bare server does.
// It listens with the service's accept backlog (4096).
//
// Usage: node ws_peer.js PORT FRAME_BYTES WS_MODULE_DIR
// (WS_MODULE_DIR: the `ws` package installed by the benchmark, outside the repo.)
'use strict';

const [port, frameBytes, wsDir] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]];
if (!port || !wsDir) {
  console.error('usage: node ws_peer.js PORT FRAME_BYTES WS_MODULE_DIR');
  process.exit(2);
}
const http = require('http');
const { performance } = require('perf_hooks');
const { WebSocketServer, WebSocket } = require(wsDir);

const GAME = 'bench-fanout';
const viewers = new Set();
let seq = 0;

function bareFrame(n, size) {
  const head = `{"type":"delta","game":"bench","seq":${n},"pad":"`;
  return Buffer.from(head + 'x'.repeat(Math.max(0, size - head.length - 2)) + '"}');
}

// The stall probe: stream/live/ops/stall.py's PERIOD and KEEP, and LagWindow.take's p99 (nearest rank).
const PERIOD_MS = 10;
const KEEP = 60000;
let lateness = [];  // ms, since the previous read
let largest = 0;

function probe() {
  const due = performance.now() + PERIOD_MS;
  setTimeout(() => {
    const late = Math.max(0, performance.now() - due);
    if (lateness.length >= KEEP) lateness.splice(0, KEEP / 2);
    lateness.push(late);
    largest = Math.max(largest, late);
    probe();
  }, PERIOD_MS);
}

function takeLag() {
  const samples = lateness.sort((a, b) => a - b);
  const top = largest;
  lateness = [];
  largest = 0;
  const n = samples.length;
  if (n === 0) return { p99_ms: null, max_ms: null, samples: 0 };
  const p99 = samples[Math.min(n - 1, Math.max(0, Math.ceil(0.99 * n) - 1))];
  return { p99_ms: p99, max_ms: top, samples: n };
}

// Plain HTTP: GET /lag; anything else that is not a WebSocket upgrade is refused.
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/lag') {
    const body = JSON.stringify(takeLag());
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body),
      Connection: 'close' });
    res.end(body);
    return;
  }
  res.writeHead(426, { 'Content-Type': 'text/plain', Connection: 'close' });
  res.end('Upgrade Required\n');
});

const wss = new WebSocketServer({
  server, perMessageDeflate: false, maxPayload: 1 << 20, clientTracking: false,
});

wss.on('connection', (ws, req) => {
  ws.on('error', () => {});
  if ((req.url || '').startsWith('/watch')) {
    viewers.add(ws);
    ws.on('close', () => viewers.delete(ws));
    ws.send(JSON.stringify({ type: 'hello', seq }));
    return;
  }
  ws.on('message', (raw) => {
    let msg;
    try {
      msg = JSON.parse(raw);
    } catch {
      return;
    }
    if (msg === null || typeof msg !== 'object') return;
    if (msg.type === 'auth') {
      ws.send(JSON.stringify({
        type: 'welcome', device: 'node-ws', role: 'admin', official: '', game: null, arena: null,
        server_time: Date.now(), epoch: 'node-ws',
      }));
      // The first clock-sync ping follows the welcome, as the service sends it: a device
      // waits for it before it sends anything.
      ws.send(JSON.stringify({ type: 'ping', server_time: Date.now() }));
    } else if (msg.type === 'send') {
      const event = msg.event;
      const eid = event !== null && typeof event === 'object' && 'id' in event ? event.id : null;
      seq += 1;
      const frame = bareFrame(seq, frameBytes);  // built once, sent to every viewer
      for (const v of viewers) {
        if (v.readyState === WebSocket.OPEN) v.send(frame, { binary: false });
      }
      ws.send(JSON.stringify({
        type: 'ack', id: eid, log_id: eid, game: GAME, seq, at: Date.now(), duplicate: false,
        notices: [],
      }));
    } else if (msg.type === 'ping') {
      ws.send(JSON.stringify({ type: 'pong', server_time: Date.now(), device_time: msg.device_time }));
    }
  });
});

wss.on('error', (err) => {
  console.error(err);
  process.exit(1);
});
server.on('error', (err) => {
  console.error(err);
  process.exit(1);
});
server.listen({ host: '127.0.0.1', port, backlog: 4096 }, () => {
  probe();
  console.log('ready');
});
process.on('SIGTERM', () => process.exit(0));
