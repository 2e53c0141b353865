'use strict';
// Shared by the Node peers: PORT, and WORKERS=N worker processes.
//
// WORKERS unset or 1: the calling process serves alone (no cluster).
// WORKERS=N > 1: this process becomes a node:cluster primary that only forks
// N workers and stops them on SIGTERM/SIGINT; each worker runs `start()`.
// `prepare()` (optional) runs once before any serving process starts: in the
// single process, or in the primary before it forks.
// node:http / node:net servers share the port through the primary (cluster's
// round-robin); uWebSockets.js listens with SO_REUSEPORT by itself on Linux,
// so its workers each bind the port and the kernel spreads connections.

const cluster = require('node:cluster');

function port(fallback) {
  const p = parseInt(process.env.PORT || '', 10);
  return p > 0 ? p : fallback;
}

function workers() {
  const n = parseInt(process.env.WORKERS || '1', 10);
  return n > 0 ? n : 1;
}

function run(name, start, prepare) {
  const n = workers();
  if (!cluster.isPrimary) {
    start();
    return;
  }
  if (prepare) prepare();
  if (n <= 1) {
    start();
    return;
  }
  // Stop: SIGTERM the workers and exit once they are gone (reaped here, so
  // they do not linger as zombies), SIGKILL after 3 s.
  let stopping = false;
  const stop = (code) => {
    if (stopping) return;
    stopping = true;
    const alive = () => Object.values(cluster.workers).filter((w) => w && !w.isDead());
    for (const w of alive()) w.process.kill('SIGTERM');
    const started = Date.now();
    setInterval(() => {
      const left = alive();
      if (left.length === 0) process.exit(code);
      if (Date.now() - started > 3000) {
        for (const w of left) w.process.kill('SIGKILL');
        process.exit(code);
      }
    }, 10);
  };
  cluster.on('exit', (w, code, signal) => {
    if (stopping) return;
    console.error(`${name}: worker ${w.process.pid} exited (${signal || code}), stopping`);
    stop(1);
  });
  process.on('SIGTERM', () => stop(0));
  process.on('SIGINT', () => stop(0));
  for (let i = 0; i < n; i++) cluster.fork();
}

module.exports = { port, workers, run };
