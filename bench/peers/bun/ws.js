// Bun: the `ws` group (bench/peers/README.md) with Bun.serve's built-in
// WebSocket server. `fetch` upgrades /echo and /broadcast (answers
// GET /hello for the harness's readiness check); one set of `websocket`
// handlers serves both, told apart by the path the upgrade stored in
// ws.data. /echo sends every message back (a string stays text, a Buffer
// binary); /broadcast subscribes the connection to "room", and each
// message is published with server.publish, which reaches every
// subscriber, the sender included (ws.publish would leave the sender out).
// One process.

const PORT = parseInt(process.env.PORT || '', 10) || 8008;
const TEXT = { 'Content-Type': 'text/plain' };

const server = Bun.serve({
  port: PORT,
  hostname: '127.0.0.1',
  fetch(req, srv) {
    const path = new URL(req.url).pathname;
    if (path === '/echo' || path === '/broadcast') {
      if (srv.upgrade(req, { data: { broadcast: path === '/broadcast' } })) return undefined;
      return new Response('Upgrade Required', { status: 426, headers: TEXT });
    }
    if (path === '/hello') return new Response('Hello World!', { headers: TEXT });
    return new Response('Not Found', { status: 404, headers: TEXT });
  },
  websocket: {
    open(ws) {
      if (ws.data.broadcast) ws.subscribe('room');
    },
    message(ws, message) {
      if (ws.data.broadcast) server.publish('room', message);
      else ws.send(message);
    },
  },
});
console.log(`bun (WebSocket) listening on 127.0.0.1:${PORT} (pid ${process.pid})`);
