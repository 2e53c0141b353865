'use strict';
// The `pg` and `redis` groups of the Node peers (bench/peers/README.md),
// shared by node-http.js and uws.js. The harness sets PG_URL and REDIS_URL
// for the servers it measures in those tables; PG_DRIVER picks the
// PostgreSQL driver:
//   pg       node-postgres: a pg.Pool of POOL connections, every statement
//            named (prepared once per connection);
//   postgres postgres.js: POOL connections, tagged templates (prepared
//            statements by default; it pipelines queries on a connection).
// Redis: one node-redis client (one connection; commands issued while
// others are in flight are pipelined on it).

const POOL = 10;
const READ = 'SELECT id, name, value FROM bench_items WHERE id = $1';
const WRITE = 'INSERT INTO bench_writes (payload, ts) VALUES ($1, $2) RETURNING id';

function unixNow() {
  return Math.floor(Date.now() / 1000);
}

// `{ read(id) -> row or undefined, write(payload) -> { id } }`.
function openPg(url, driver) {
  if (driver === 'postgres') {
    const postgres = require('postgres');
    const sql = postgres(url, { max: POOL, idle_timeout: 0, max_lifetime: null });
    return {
      async read(id) {
        const rows = await sql`SELECT id, name, value FROM bench_items WHERE id = ${id}`;
        return rows[0];
      },
      async write(payload) {
        const rows = await sql`INSERT INTO bench_writes (payload, ts) VALUES (${payload}, ${unixNow()}) RETURNING id`;
        return { id: rows[0].id };
      },
    };
  }
  if (driver !== 'pg') throw new Error(`PG_DRIVER must be pg or postgres, not ${driver}`);
  const { Pool } = require('pg');
  // idleTimeoutMillis 0: keep idle connections (the harness leaves each
  // server idle for minutes between its rounds).
  const pool = new Pool({ connectionString: url, max: POOL, idleTimeoutMillis: 0 });
  return {
    async read(id) {
      const r = await pool.query({ name: 'read', text: READ, values: [id] });
      return r.rows[0];
    },
    async write(payload) {
      const r = await pool.query({ name: 'write', text: WRITE, values: [payload, unixNow()] });
      return { id: r.rows[0].id };
    },
  };
}

// `{ getIncr() -> { count, greeting } }`: one GET, then one INCR.
async function openRedis(url) {
  const { createClient } = require('redis');
  const client = createClient({ url });
  client.on('error', (e) => console.error(`redis: ${e.message}`));
  await client.connect();
  await client.set('bench:greeting', 'hello');
  return {
    async getIncr() {
      const greeting = await client.get('bench:greeting');
      const count = await client.incr('bench:counter');
      return { count, greeting };
    },
  };
}

// What PG_URL, PG_DRIVER and REDIS_URL ask for: `{ pg, redis }`, each null
// when its variable is unset.
async function openDatabases() {
  const pgUrl = process.env.PG_URL || '';
  const redisUrl = process.env.REDIS_URL || '';
  const pg = pgUrl ? openPg(pgUrl, process.env.PG_DRIVER || 'pg') : null;
  if (pg) await pg.read(1); // connect now: a wrong URL fails at start
  const redis = redisUrl ? await openRedis(redisUrl) : null;
  return { pg, redis };
}

// The `id` query parameter of a `/pg/read?id=N` URL, NaN without one.
function queryId(url) {
  let at = url.indexOf('?id=');
  if (at === -1) at = url.indexOf('&id=');
  return at === -1 ? NaN : parseInt(url.slice(at + 4), 10);
}

module.exports = { POOL, openDatabases, queryId };
