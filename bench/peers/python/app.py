"""FastAPI peer for Cove's benchmark (bench/peers/README.md).

The `http` group, and the `sqlite` group when DB is set, served by uvicorn
(uvloop + httptools; see ./run). Routes return dicts, which FastAPI
serializes per request (JSONResponse); the text routes use
PlainTextResponse.

SQLite: the stdlib sqlite3 module, one connection per worker process
(check_same_thread=False, autocommit mode with explicit BEGIN IMMEDIATE for
transactions), opened in the lifespan handler. The database routes are
`async def` and call sqlite3 directly on the event loop: each call is short,
and with a single connection this keeps every statement and transaction on
one thread (a sync `def` route would run in the threadpool, where one shared
connection needs a lock around each transaction). sqlite3 caches prepared
statements per connection by SQL text (cached_statements), so each query
below is prepared once.
"""

import os
import sqlite3
import time
from contextlib import asynccontextmanager
from datetime import datetime, timezone

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import PlainTextResponse
from starlette.exceptions import HTTPException

START = time.monotonic()
DB = os.environ.get("DB", "")

SCHEMA = """
CREATE TABLE IF NOT EXISTS visits (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT, ts INTEGER);
CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,
  payload TEXT, ts INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS idx_events_ts ON events(ts DESC);
"""

INSERT_VISIT = "INSERT INTO visits (path, ts) VALUES (?, ?)"
SELECT_VISITS = "SELECT id, path, ts FROM visits ORDER BY id DESC LIMIT 20"
SELECT_EVENTS = "SELECT id, kind, payload, ts FROM events ORDER BY ts DESC LIMIT 20"
INSERT_WRITE = "INSERT INTO events (kind, payload, ts) VALUES ('write', ?, ?)"
INSERT_MIXED = "INSERT INTO events (kind, payload, ts) VALUES ('mixed', '{}', ?)"
INSERT_SEED = "INSERT INTO events (kind, payload, ts) VALUES ('seed', ?, ?)"

db: sqlite3.Connection | None = None


def open_db(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=5000")
    conn.executescript(SCHEMA)
    # IMMEDIATE: with several workers only the first one to get the lock seeds.
    conn.execute("BEGIN IMMEDIATE")
    try:
        (count,) = conn.execute("SELECT COUNT(*) FROM events").fetchone()
        if count < 1000:
            now = int(time.time())
            conn.executemany(INSERT_SEED, [(f'{{"n":{i}}}', now) for i in range(1, 1001)])
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return conn


@asynccontextmanager
async def lifespan(app: FastAPI):
    global db
    if DB:
        db = open_db(DB)
    yield
    if db is not None:
        db.close()
        db = None


app = FastAPI(lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)


@app.exception_handler(HTTPException)
async def not_found_for_other_methods(request: Request, exc: HTTPException):
    """Anything that is not a route is a 404, also a known path with another
    method (Starlette would answer 405)."""
    if exc.status_code == 405:
        exc = HTTPException(status_code=404)
    return await http_exception_handler(request, exc)


# The toy routing benchmark: separate routes, in this order.
@app.get("/hey", response_class=PlainTextResponse)
async def hey():
    return "hey"


@app.get("/hell", response_class=PlainTextResponse)
async def hell():
    return "hell"


@app.get("/hello", response_class=PlainTextResponse)
async def hello():
    return "Hello World!"


@app.get("/about", response_class=PlainTextResponse)
async def about():
    return "about"


@app.get("/json")
async def json_():
    return {"message": "Hello, World!"}


@app.get("/health")
async def health():
    return {"status": "ok", "runtime": "python", "uptime": time.monotonic() - START}


@app.get("/greet/{name}")
async def greet(name: str):
    return {"greeting": f"Hello, {name}!"}


async def body_text(request: Request) -> str:
    return (await request.body()).decode("utf-8", errors="replace")


@app.post("/echo")
async def echo(request: Request):
    return {"body": await body_text(request)}


@app.post("/greet/{name}")
async def greet_post(name: str, request: Request):
    return {"greeting": f"Hello, {name}!", "body": await body_text(request)}


def now() -> int:
    return int(time.time())


def events() -> list[dict]:
    return [
        {"id": r[0], "kind": r[1], "payload": r[2], "ts": r[3]}
        for r in db.execute(SELECT_EVENTS)
    ]


if DB:

    @app.get("/")
    async def index():
        db.execute(INSERT_VISIT, ("/", now()))
        return {
            "message": "Hello!",
            "time": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }

    @app.get("/visits")
    async def visits():
        return [{"id": r[0], "path": r[1], "ts": r[2]} for r in db.execute(SELECT_VISITS)]

    @app.get("/read")
    async def read():
        return events()

    @app.post("/write")
    async def write(request: Request):
        body = await body_text(request)
        cur = db.execute(INSERT_WRITE, (body, now()))
        return {"inserted": cur.rowcount}

    @app.post("/write-batch")
    async def write_batch(request: Request):
        body = await body_text(request)
        inserted = 0
        db.execute("BEGIN IMMEDIATE")
        try:
            for _ in range(10):
                inserted += db.execute(INSERT_WRITE, (body, now())).rowcount
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return {"inserted": inserted}

    @app.get("/mixed")
    async def mixed():
        db.execute(INSERT_MIXED, (now(),))
        return events()
