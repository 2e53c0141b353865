// Bun: Bun.serve with its router (`routes`), the `http` group, and the
// `sqlite` group with bun:sqlite when DB is set (bench/peers/README.md).
//
// WORKERS=N > 1: this process serves and spawns N-1 copies of itself; all of
// them listen with reusePort (SO_REUSEPORT), so the kernel spreads the
// connections over N processes.

const PORT = parseInt(process.env.PORT || '', 10) || 8008;
const WORKERS = Math.max(1, parseInt(process.env.WORKERS || '1', 10) || 1);
const DB = process.env.DB || '';
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
};

Bun.serve({
  port: PORT,
  hostname: '127.0.0.1',
  reusePort: WORKERS > 1,
  routes,
  fetch: () => new Response('Not Found', { status: 404, headers: TEXT }),
  error: (err) => new Response(`Internal Server Error: ${err.message}`, { status: 500, headers: TEXT }),
});
console.log(`bun listening on 127.0.0.1:${PORT} (pid ${process.pid}${DB ? `, db ${DB}` : ''})`);

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
