'use strict';
// Raw uWebSockets.js v20.30.0 (npm: @trufflesuite/uws-js-unofficial, a
// third-party republish of the official binaries; see package.json): the
// `http` group (bench/peers/README.md), and the `pg` / `redis` groups when
// PG_URL / REDIS_URL are set (databases.js). With WORKERS > 1 every worker
// binds the port (uWS uses SO_REUSEPORT on Linux).

const { port, run } = require('./workers.js');
const { openDatabases } = require('./databases.js');

const PORT = port(8007);

async function start() {
  const uWS = require('uWebSockets.js');
  const { pg, redis } = await openDatabases();

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

  // Answers with the JSON of what `promise` resolves to (404 for
  // undefined, 500 when it fails), unless the client went away meanwhile.
  const answer = (res, promise) => {
    promise.then(
      (value) => {
        if (res.aborted) return;
        if (value !== undefined) return json(res, value);
        res.cork(() => { res.writeStatus('404 Not Found').end('Not Found'); });
      },
      (e) => {
        if (res.aborted) return;
        res.cork(() => { res.writeStatus('500 Internal Server Error').end(e.message); });
      },
    );
  };
  // An async handler must hear about an abort before it answers.
  const later = (res) => {
    res.aborted = false;
    res.onAborted(() => { res.aborted = true; });
    return res;
  };

  const app = uWS.App();
  if (pg) {
    app.get('/pg/read', (res, req) => answer(later(res), pg.read(parseInt(req.getQuery('id'), 10))));
    app.post('/pg/write', (res) => readBody(res, (body) => answer(res, pg.write(body))));
  }
  if (redis) app.get('/redis', (res) => answer(later(res), redis.getIncr()));
  app
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
