'use strict';
// Raw uWebSockets.js v20.30.0 (npm: @trufflesuite/uws-js-unofficial, a
// third-party republish of the official binaries; see package.json): the
// `http` group (bench/peers/README.md). With WORKERS > 1 every worker binds
// the port (uWS uses SO_REUSEPORT on Linux).

const { port, run } = require('./workers.js');

const PORT = port(8007);

function start() {
  const uWS = require('uWebSockets.js');

  const text = (body) => (res) => {
    res.cork(() => { res.writeHeader('Content-Type', 'text/plain').end(body); });
  };
  const json = (res, value) => {
    const body = JSON.stringify(value);
    res.cork(() => { res.writeHeader('Content-Type', 'application/json').end(body); });
  };
  // The request body as a string; uWS hands out chunks that are only valid
  // during the callback, so they are copied.
  const readBody = (res, done) => {
    let chunks = [];
    res.aborted = false;
    res.onAborted(() => { res.aborted = true; });
    res.onData((ab, isLast) => {
      chunks.push(Buffer.from(ab.slice(0)));
      if (!isLast) return;
      const body = chunks.length === 1 ? chunks[0].toString() : Buffer.concat(chunks).toString();
      chunks = null;
      if (!res.aborted) done(body);
    });
  };

  uWS.App()
    .get('/hey', text('hey'))
    .get('/hell', text('hell'))
    .get('/hello', text('Hello World!'))
    .get('/about', text('about'))
    .get('/json', (res) => json(res, { message: 'Hello, World!' }))
    .get('/health', (res) => json(res, { status: 'ok', runtime: 'node', uptime: process.uptime() }))
    .get('/greet/:name', (res, req) => json(res, { greeting: `Hello, ${req.getParameter(0)}!` }))
    .post('/echo', (res) => readBody(res, (body) => json(res, { body })))
    .post('/greet/:name', (res, req) => {
      const name = req.getParameter(0);
      readBody(res, (body) => json(res, { greeting: `Hello, ${name}!`, body }));
    })
    .any('/*', (res) => {
      res.cork(() => { res.writeStatus('404 Not Found').writeHeader('Content-Type', 'text/plain').end('Not Found'); });
    })
    .listen('127.0.0.1', PORT, (token) => {
      if (!token) { console.error(`uws: cannot listen on 127.0.0.1:${PORT}`); process.exit(1); }
      console.log(`uws listening on 127.0.0.1:${PORT} (pid ${process.pid})`);
    });
}

run('uws', start);
