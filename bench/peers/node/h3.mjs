// h3 v2 (serve() = srvx's node:http adapter): the `http` group
// (bench/peers/README.md). Handlers return strings (text/plain) and objects
// (JSON), h3's idiomatic responses.

import { H3, serve, getRouterParam } from 'h3';
import workers from './workers.js';

const PORT = workers.port(8005);

function start() {
  const app = new H3()
    .get('/hey', () => 'hey')
    .get('/hell', () => 'hell')
    .get('/hello', () => 'Hello World!')
    .get('/about', () => 'about')
    .get('/json', () => ({ message: 'Hello, World!' }))
    .get('/health', () => ({ status: 'ok', runtime: 'node', uptime: process.uptime() }))
    .get('/greet/:name', (event) => ({ greeting: `Hello, ${getRouterParam(event, 'name')}!` }))
    .post('/echo', async (event) => ({ body: await event.req.text() }))
    .post('/greet/:name', async (event) => ({
      greeting: `Hello, ${getRouterParam(event, 'name')}!`,
      body: await event.req.text(),
    }));
  // exclusive: false lets cluster workers share the primary's socket (srvx
  // asks for an exclusive one unless reusePort is set); no graceful-shutdown
  // handlers, so SIGTERM stops the server at once.
  const server = serve(app, {
    port: PORT,
    hostname: '127.0.0.1',
    silent: true,
    gracefulShutdown: false,
    node: { exclusive: false },
  });
  server.ready().then(
    () => console.log(`h3 listening on 127.0.0.1:${PORT} (pid ${process.pid})`),
    (err) => { console.error(`h3: ${err.message}`); process.exit(1); },
  );
}

workers.run('h3', start);
