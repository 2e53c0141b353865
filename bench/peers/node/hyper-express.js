'use strict';
// hyper-express 6.8.2 on uWebSockets.js v20.30.0 (npm alias of
// @trufflesuite/uws-js-unofficial, see package.json): the `http` group
// (bench/peers/README.md). With WORKERS > 1 every worker binds the port
// (uWS uses SO_REUSEPORT on Linux).

const { port, run } = require('./workers.js');

const PORT = port(8006);

function start() {
  const HyperExpress = require('hyper-express');
  const app = new HyperExpress.Server();
  // POST routes: hyper-express 6.8.2 stalls on a body chunk larger than its
  // stream's highWaterMark (16 KB by default; uWS hands over up to 512 KB at
  // once), and caps bodies at 250 kB. Neither matters for the benchmark's
  // small bodies; raised so that larger bodies work too.
  const post = { max_body_length: 16 << 20, streaming: { readable: { highWaterMark: 1 << 20 } } };

  app.get('/hey', (req, res) => { res.type('text/plain').send('hey'); });
  app.get('/hell', (req, res) => { res.type('text/plain').send('hell'); });
  app.get('/hello', (req, res) => { res.type('text/plain').send('Hello World!'); });
  app.get('/about', (req, res) => { res.type('text/plain').send('about'); });
  app.get('/json', (req, res) => { res.json({ message: 'Hello, World!' }); });
  app.get('/health', (req, res) => {
    res.json({ status: 'ok', runtime: 'node', uptime: process.uptime() });
  });
  app.get('/greet/:name', (req, res) => {
    res.json({ greeting: `Hello, ${req.path_parameters.name}!` });
  });
  app.post('/echo', post, async (req, res) => {
    res.json({ body: await req.text() });
  });
  app.post('/greet/:name', post, async (req, res) => {
    const name = req.path_parameters.name;
    res.json({ greeting: `Hello, ${name}!`, body: await req.text() });
  });

  // Without a not-found handler hyper-express closes the connection.
  app.set_not_found_handler((req, res) => { res.status(404).type('text/plain').send('Not Found'); });

  app.listen(PORT, '127.0.0.1').then(
    () => console.log(`hyper-express listening on 127.0.0.1:${PORT} (pid ${process.pid})`),
    (err) => { console.error(`hyper-express: ${err && err.message || err}`); process.exit(1); },
  );
}

run('hyper-express', start);
