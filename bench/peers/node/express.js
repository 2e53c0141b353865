'use strict';
// express 5: the `http` group (bench/peers/README.md). POST bodies are read
// as text whatever their Content-Type (the routes echo the raw body).

const { port, run } = require('./workers.js');

const PORT = port(8004);

function start() {
  const express = require('express');
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  const rawText = express.text({ type: () => true, limit: '16mb' });

  app.get('/hey', (req, res) => { res.type('text/plain').send('hey'); });
  app.get('/hell', (req, res) => { res.type('text/plain').send('hell'); });
  app.get('/hello', (req, res) => { res.type('text/plain').send('Hello World!'); });
  app.get('/about', (req, res) => { res.type('text/plain').send('about'); });
  app.get('/json', (req, res) => { res.json({ message: 'Hello, World!' }); });
  app.get('/health', (req, res) => {
    res.json({ status: 'ok', runtime: 'node', uptime: process.uptime() });
  });
  app.get('/greet/:name', (req, res) => {
    res.json({ greeting: `Hello, ${req.params.name}!` });
  });
  app.post('/echo', rawText, (req, res) => {
    res.json({ body: typeof req.body === 'string' ? req.body : '' });
  });
  app.post('/greet/:name', rawText, (req, res) => {
    res.json({ greeting: `Hello, ${req.params.name}!`, body: typeof req.body === 'string' ? req.body : '' });
  });

  const server = app.listen(PORT, '127.0.0.1', (err) => {
    if (err) { console.error(`express: ${err.message}`); process.exit(1); }
    console.log(`express listening on 127.0.0.1:${PORT} (pid ${process.pid})`);
  });
  server.keepAliveTimeout = 75000;
}

run('express', start);
