'use strict';
// uWebSockets.js v20.30.0 (npm: @trufflesuite/uws-js-unofficial, a
// third-party republish of the official binaries; see package.json): the
// `ws` group (bench/peers/README.md). /echo sends every message back with
// its type; /broadcast subscribes the connection to "room" on open, and each
// message is published with app.publish, which reaches every subscriber,
// the sender included (ws.publish would leave the sender out). uWS's
// defaults otherwise (no compression, 16 KB messages, 120 s idle timeout).
// One process.

const { port } = require('./workers.js');

const PORT = port(8007);
const uWS = require('uWebSockets.js');

const app = uWS.App();
app
  .ws('/echo', {
    message: (ws, message, isBinary) => {
      ws.send(message, isBinary);
    },
  })
  .ws('/broadcast', {
    open: (ws) => {
      ws.subscribe('room');
    },
    message: (ws, message, isBinary) => {
      app.publish('room', message, isBinary);
    },
  })
  .get('/hello', (res) => {
    res.cork(() => { res.writeHeader('Content-Type', 'text/plain').end('Hello World!'); });
  })
  .any('/*', (res) => {
    res.cork(() => { res.writeStatus('404 Not Found').end('Not Found'); });
  })
  .listen('127.0.0.1', PORT, (token) => {
    if (!token) { console.error(`uws: cannot listen on 127.0.0.1:${PORT}`); process.exit(1); }
    console.log(`uws (WebSocket) listening on 127.0.0.1:${PORT} (pid ${process.pid})`);
  });
