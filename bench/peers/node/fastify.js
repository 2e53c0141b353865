'use strict';
// fastify: the `http` group (bench/peers/README.md). Request bodies are taken
// as strings whatever their Content-Type (the routes echo the raw body).

const { port, run } = require('./workers.js');

const PORT = port(8003);

function start() {
  const app = require('fastify')({ logger: false });
  const raw = (req, body, done) => done(null, body);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, raw);

  app.get('/hey', (req, reply) => { reply.type('text/plain').send('hey'); });
  app.get('/hell', (req, reply) => { reply.type('text/plain').send('hell'); });
  app.get('/hello', (req, reply) => { reply.type('text/plain').send('Hello World!'); });
  app.get('/about', (req, reply) => { reply.type('text/plain').send('about'); });
  app.get('/json', (req, reply) => { reply.send({ message: 'Hello, World!' }); });
  app.get('/health', (req, reply) => {
    reply.send({ status: 'ok', runtime: 'node', uptime: process.uptime() });
  });
  app.get('/greet/:name', (req, reply) => {
    reply.send({ greeting: `Hello, ${req.params.name}!` });
  });
  app.post('/echo', (req, reply) => { reply.send({ body: req.body ?? '' }); });
  app.post('/greet/:name', (req, reply) => {
    reply.send({ greeting: `Hello, ${req.params.name}!`, body: req.body ?? '' });
  });

  app.listen({ port: PORT, host: '127.0.0.1' }).then(
    () => console.log(`fastify listening on 127.0.0.1:${PORT} (pid ${process.pid})`),
    (err) => { console.error(`fastify: ${err.message}`); process.exit(1); },
  );
}

run('fastify', start);
