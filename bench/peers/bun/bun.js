// Bun: Bun.serve with its router (`routes`), the `http` group, the
// `sqlite` group with bun:sqlite when DB is set, the `pg` group with the
// built-in PostgreSQL client (Bun.SQL) when PG_URL is set and the `redis`
// group with the built-in Redis client (Bun.RedisClient) when REDIS_URL is
// set (bench/peers/README.md).
//
// WORKERS=N > 1: this process serves and spawns N-1 copies of itself; all of
// them listen with reusePort (SO_REUSEPORT), so the kernel spreads the
// connections over N processes.

const PORT = parseInt(process.env.PORT || '', 10) || 8008;
const WORKERS = Math.max(1, parseInt(process.env.WORKERS || '1', 10) || 1);
const DB = process.env.DB || '';
const PG_URL = process.env.PG_URL || '';
const REDIS_URL = process.env.REDIS_URL || '';
// PostgreSQL connections per process (Bun.SQL's default, set explicitly).
const PG_POOL = 10;
const CHILD = process.env.COVE_BUN_CHILD === '1';

const TEXT = { 'Content-Type': 'text/plain' };
const text = (body) => new Response(body, { headers: TEXT });

function unixNow() {
  return Math.floor(Date.now() / 1000);
}

// `YYYY-MM-DDTHH:MM:SSZ`, as Cove's time.datetime().
function isoNow() {
  return new Date().toISOString().slice(0, 19) + 'Z';
}

async function sqliteRoutes(file) {
  const { Database } = await import('bun:sqlite');
  const db = new Database(file, { create: true });
  // busy_timeout first: with WORKERS > 1 the processes open the file together.
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA foreign_keys = ON');
  db.exec('CREATE TABLE IF NOT EXISTS visits (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT, ts INTEGER)');
  db.exec(`CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,
    payload TEXT, ts INTEGER NOT NULL)`);
  db.exec('CREATE INDEX IF NOT EXISTS idx_events_ts ON events(ts DESC)');
  const count = db.prepare('SELECT COUNT(*) AS n FROM events');
  const seedRow = db.prepare("INSERT INTO events (kind, payload, ts) VALUES ('seed', ?, ?)");
  // IMMEDIATE: with WORKERS > 1 only the first process to get the lock seeds.
  db.transaction(() => {
    if (count.get().n >= 1000) return;
    const now = unixNow();
    for (let i = 1; i <= 1000; i++) seedRow.run(`{"n":${i}}`, now);
  }).immediate();

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
    '/': {
      GET: () => {
        insertVisit.run('/', unixNow());
        return Response.json({ message: 'Hello!', time: isoNow() });
      },
    },
    '/visits': { GET: () => Response.json(selectVisits.all()) },
    '/read': { GET: () => Response.json(selectEvents.all()) },
    '/write': {
      POST: async (req) => {
        const body = await req.text();
        return Response.json({ inserted: insertWrite.run(body, unixNow()).changes });
      },
    },
    '/write-batch': {
      POST: async (req) => Response.json({ inserted: writeBatch(await req.text()) }),
    },
    '/mixed': {
      GET: () => {
        insertMixed.run(unixNow());
        return Response.json(selectEvents.all());
      },
    },
  };
}

const NOT_FOUND = () => new Response('Not Found', { status: 404, headers: TEXT });

// The `id` query parameter of a `/pg/read?id=N` URL, NaN without one.
function queryId(url) {
  let at = url.indexOf('?id=');
  if (at === -1) at = url.indexOf('&id=');
  return at === -1 ? NaN : parseInt(url.slice(at + 4), 10);
}

// Bun.SQL: a pool of PG_POOL connections (idle ones kept open), tagged
// templates become prepared statements.
async function pgRoutes(url) {
  const sql = new Bun.SQL(url, { max: PG_POOL, idleTimeout: 0 });
  await sql`SELECT 1`; // connect now: a wrong URL fails at start
  return {
    '/pg/read': {
      GET: async (req) => {
        const rows = await sql`SELECT id, name, value FROM bench_items WHERE id = ${queryId(req.url)}`;
        return rows.length ? Response.json(rows[0]) : NOT_FOUND();
      },
    },
    '/pg/write': {
      POST: async (req) => {
        const body = await req.text();
        const rows = await sql`INSERT INTO bench_writes (payload, ts) VALUES (${body}, ${unixNow()}) RETURNING id`;
        return Response.json({ id: rows[0].id });
      },
    },
  };
}

// Bun.RedisClient: one connection (commands in flight are pipelined on it).
async function redisRoutes(url) {
  const redis = new Bun.RedisClient(url);
  await redis.set('bench:greeting', 'hello');
  return {
    '/redis': {
      GET: async () => {
        const greeting = await redis.get('bench:greeting');
        const count = await redis.incr('bench:counter');
        return Response.json({ count, greeting });
      },
    },
  };
}

const routes = {
  '/hey': { GET: () => text('hey') },
  '/hell': { GET: () => text('hell') },
  '/hello': { GET: () => text('Hello World!') },
  '/about': { GET: () => text('about') },
  '/json': { GET: () => Response.json({ message: 'Hello, World!' }) },
  '/health': { GET: () => Response.json({ status: 'ok', runtime: 'bun', uptime: process.uptime() }) },
  '/greet/:name': {
    GET: (req) => Response.json({ greeting: `Hello, ${req.params.name}!` }),
    POST: async (req) => {
      const name = req.params.name;
      return Response.json({ greeting: `Hello, ${name}!`, body: await req.text() });
    },
  },
  '/echo': { POST: async (req) => Response.json({ body: await req.text() }) },
  ...(DB ? await sqliteRoutes(DB) : {}),
  ...(PG_URL ? await pgRoutes(PG_URL) : {}),
  ...(REDIS_URL ? await redisRoutes(REDIS_URL) : {}),
};

Bun.serve({
  port: PORT,
  hostname: '127.0.0.1',
  reusePort: WORKERS > 1,
  // TLS_CERT and TLS_KEY (the tls table): HTTPS. Bun.serve has no HTTP/2.
  ...(process.env.TLS_CERT
    ? { tls: { cert: Bun.file(process.env.TLS_CERT), key: Bun.file(process.env.TLS_KEY) } }
    : {}),
  routes,
  fetch: () => new Response('Not Found', { status: 404, headers: TEXT }),
  error: (err) => new Response(`Internal Server Error: ${err.message}`, { status: 500, headers: TEXT }),
});
const dbs = [DB && `db ${DB}`, PG_URL && 'PostgreSQL via Bun.SQL', REDIS_URL && 'Redis via Bun.RedisClient']
  .filter(Boolean).join(', ');
console.log(`bun listening on 127.0.0.1:${PORT} (pid ${process.pid}${dbs ? `, ${dbs}` : ''})`);

if (CHILD) {
  // Stop when the first process is gone.
  const parent = process.ppid;
  setInterval(() => { if (process.ppid !== parent) process.exit(0); }, 1000);
} else if (WORKERS > 1) {
  let stopping = false;
  const children = [];
  for (let i = 1; i < WORKERS; i++) {
    children.push(Bun.spawn([process.execPath, import.meta.path], {
      env: { ...process.env, COVE_BUN_CHILD: '1' },
      stdio: ['ignore', 'inherit', 'inherit'],
      onExit: (child, code, signal) => {
        if (!stopping) console.error(`bun: worker ${child.pid} exited (${signal || code})`);
      },
    }));
  }
  // SIGTERM the children and exit once they are gone (reaped here, so they
  // do not linger as zombies), SIGKILL after 3 s.
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    for (const c of children) c.kill('SIGTERM');
    const timeout = new Promise((resolve) => setTimeout(resolve, 3000, 'timeout'));
    if (await Promise.race([Promise.all(children.map((c) => c.exited)), timeout]) === 'timeout') {
      for (const c of children) c.kill('SIGKILL');
    }
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
