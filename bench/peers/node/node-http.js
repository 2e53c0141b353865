'use strict';
// Node.js built-in node:http: the `http` group, and the `sqlite` group with
// better-sqlite3 when DB is set (bench/peers/README.md). node:http has no
// router: routes are matched in order on the path, /greet/:name by prefix.
// With TLS_CERT and TLS_KEY (the tls and h2 tables) the same handler serves
// HTTPS through node:https, or with HTTP2=1 HTTP/2 through node:http2's
// secure server and its compatibility API (h2 only, no HTTP/1.1 fallback).

const http = require('node:http');
const { port, run } = require('./workers.js');
const { greetName } = require('./paths.js');
const { openDatabases, queryId } = require('./databases.js');

const PORT = port(8001);
const DB = process.env.DB || '';

function send(res, status, type, body) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

const text = (res, body) => send(res, 200, 'text/plain', body);
const json = (res, value) => send(res, 200, 'application/json', JSON.stringify(value));
const notFound = (res) => send(res, 404, 'text/plain', 'Not Found');

function readBody(req, done) {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => { body += chunk; });
  req.on('end', () => done(body));
}

// Answers with the JSON of what `promise` resolves to (404 for undefined,
// 500 with the message when it fails).
function answer(res, promise) {
  promise.then(
    (value) => (value === undefined ? notFound(res) : json(res, value)),
    (e) => send(res, 500, 'text/plain', `Internal Server Error: ${e.message}`),
  );
}

// Opens the database with the README's settings; creates the tables and
// seeds `events` when needed.
function openDb(file) {
  const Database = require('better-sqlite3');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.exec(`
    CREATE TABLE IF NOT EXISTS visits (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT, ts INTEGER);
    CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,
      payload TEXT, ts INTEGER NOT NULL);
    CREATE INDEX IF NOT EXISTS idx_events_ts ON events(ts DESC);
  `);
  const count = db.prepare('SELECT COUNT(*) AS n FROM events');
  const seedRow = db.prepare("INSERT INTO events (kind, payload, ts) VALUES ('seed', ?, ?)");
  // IMMEDIATE: one connection at a time counts and seeds.
  db.transaction(() => {
    if (count.get().n >= 1000) return;
    const now = unixNow();
    for (let i = 1; i <= 1000; i++) seedRow.run(`{"n":${i}}`, now);
  }).immediate();
  return db;
}

// The sqlite group's queries, as prepared statements.
function queries(db) {
  const insertVisit = db.prepare('INSERT INTO visits (path, ts) VALUES (?, ?)');
  const selectVisits = db.prepare('SELECT id, path, ts FROM visits ORDER BY id DESC LIMIT 20');
  const selectEvents = db.prepare('SELECT id, kind, payload, ts FROM events ORDER BY ts DESC LIMIT 20');
  const insertWrite = db.prepare("INSERT INTO events (kind, payload, ts) VALUES ('write', ?, ?)");
  const insertMixed = db.prepare("INSERT INTO events (kind, payload, ts) VALUES ('mixed', '{}', ?)");
  const writeBatch = db.transaction((body) => {
    let n = 0;
    for (let i = 0; i < 10; i++) n += insertWrite.run(body, unixNow()).changes;
    return n;
  });
  return {
    visit(path) { insertVisit.run(path, unixNow()); },
    visits() { return selectVisits.all(); },
    read() { return selectEvents.all(); },
    write(body) { return insertWrite.run(body, unixNow()).changes; },
    writeBatch,
    mixed() { insertMixed.run(unixNow()); return selectEvents.all(); },
  };
}

function unixNow() {
  return Math.floor(Date.now() / 1000);
}

// node:http, or node:https / node:http2 with TLS_CERT and TLS_KEY.
function createServer(handler) {
  const cert = process.env.TLS_CERT;
  if (!cert) return http.createServer(handler);
  const fs = require('node:fs');
  const tls = { cert: fs.readFileSync(cert), key: fs.readFileSync(process.env.TLS_KEY) };
  if (process.env.HTTP2 === '1') return require('node:http2').createSecureServer(tls, handler);
  return require('node:https').createServer(tls, handler);
}

// `YYYY-MM-DDTHH:MM:SSZ`, as Cove's time.datetime().
function isoNow() {
  return new Date().toISOString().slice(0, 19) + 'Z';
}

async function start() {
  const db = DB ? queries(openDb(DB)) : null;
  // The pg and redis groups, when PG_URL / REDIS_URL are set (databases.js).
  const { pg, redis } = await openDatabases();

  const server = createServer((req, res) => {
    const url = req.url;
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const method = req.method;
    if (method === 'GET') {
      if (path === '/hey') return text(res, 'hey');
      if (path === '/hell') return text(res, 'hell');
      if (path === '/hello') return text(res, 'Hello World!');
      if (path === '/about') return text(res, 'about');
      if (path === '/json') return json(res, { message: 'Hello, World!' });
      if (path === '/health') {
        return json(res, { status: 'ok', runtime: 'node', uptime: process.uptime() });
      }
      const name = greetName(path);
      if (name !== null) return json(res, { greeting: `Hello, ${name}!` });
      if (db) {
        if (path === '/') {
          db.visit('/');
          return json(res, { message: 'Hello!', time: isoNow() });
        }
        if (path === '/visits') return json(res, db.visits());
        if (path === '/read') return json(res, db.read());
        if (path === '/mixed') return json(res, db.mixed());
      }
      if (pg && path === '/pg/read') return answer(res, pg.read(queryId(url)));
      if (redis && path === '/redis') return answer(res, redis.getIncr());
    } else if (method === 'POST') {
      if (path === '/echo') return readBody(req, (body) => json(res, { body }));
      const name = greetName(path);
      if (name !== null) {
        return readBody(req, (body) => json(res, { greeting: `Hello, ${name}!`, body }));
      }
      if (db) {
        if (path === '/write') return readBody(req, (body) => json(res, { inserted: db.write(body) }));
        if (path === '/write-batch') {
          return readBody(req, (body) => json(res, { inserted: db.writeBatch(body) }));
        }
      }
      if (pg && path === '/pg/write') return readBody(req, (body) => answer(res, pg.write(body)));
    }
    notFound(res);
  });
  server.keepAliveTimeout = 75000;
  server.listen(PORT, '127.0.0.1', () => {
    const dbs = [db && `db ${DB}`, pg && `PostgreSQL via ${process.env.PG_DRIVER || 'pg'}`, redis && 'Redis']
      .filter(Boolean).join(', ');
    console.log(`node-http listening on 127.0.0.1:${PORT} (pid ${process.pid}${dbs ? `, ${dbs}` : ''})`);
  });
}

// With WORKERS > 1 the primary sets the database up (WAL, tables, seed)
// before forking: workers switching a new file to WAL together get SQLITE_BUSY.
run('node-http', start, () => { if (DB) openDb(DB).close(); });
