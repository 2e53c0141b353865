//! One worker's connections to PostgreSQL: made on first use and again
//! after they were lost (a server restart), each with the statements
//! prepared on it.
//!
//! Requests of one worker share a few connections: tokio-postgres pipelines
//! the queries sent on one, so many requests in flight need no connection
//! each. A new connection is opened only while every open one has a query
//! in flight (up to [`CONNECTIONS_PER_WORKER`]), so one slow query does not
//! hold up every other request of its worker. A `db.batch` pins one
//! connection until it ends.

use std::collections::HashMap;
use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, SimpleQueryMessage, Statement};

use super::errors::db_error;
use super::sql::{self, Kind};
use super::types::{read, Param};
use crate::error::{too_many_params, DbError};
use crate::inspect::ResultSet;
use crate::value::Value;

/// Statements kept per connection; past this the cache starts again.
const STATEMENT_CACHE_CAPACITY: usize = 256;

/// How long a connection may take to be made (unless the URL says
/// `connect_timeout`): TCP connect and startup together.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Connections one worker opens at most. Beyond it, queries pipeline on the
/// least busy one.
pub(crate) const CONNECTIONS_PER_WORKER: usize = 4;

pub(crate) const SEVERAL_IN_QUERY: &str =
    "several statements in one db.query; pass one statement per call";
const SEVERAL_WITH_PARAMS: &str = "several statements with parameters in one db.exec; \
     split them into one db.exec per statement, or put them in a migration";

/// `lastval()` that answers NULL instead of failing when no sequence was used
/// yet (a failure would abort the caller's transaction). A temporary function:
/// it needs no rights beyond the session's and vanishes with it.
const LASTVAL_FN: &str = "CREATE FUNCTION pg_temp.cove_lastval() RETURNS bigint \
    LANGUAGE plpgsql AS $$ BEGIN RETURN lastval(); \
    EXCEPTION WHEN object_not_in_prerequisite_state THEN RETURN NULL; END $$";

/// A shareable handle on one connection (cheap to clone into a query's future).
#[derive(Clone)]
pub(crate) struct Link(Arc<Inner>);

struct Inner {
    config: Config,
    /// The URL without its password, for messages.
    shown: String,
    state: Mutex<State>,
    /// Woken when a connection attempt ends.
    opened: Notify,
}

/// What [`Link::take`] does.
enum Pick {
    Use(Arc<Conn>),
    Open,
    Wait,
}

#[derive(Default)]
struct State {
    conns: Vec<Arc<Conn>>,
    /// Connections being made now.
    connecting: usize,
    /// The connection a `db.batch` (or a migration run) holds: every query
    /// goes there until it ends.
    pinned: Option<Arc<Conn>>,
}

struct Conn {
    client: Client,
    /// `SELECT pg_temp.cove_lastval()`, when the session could make it.
    lastval: Option<Statement>,
    stmts: Mutex<HashMap<String, Arc<Prepared>>>,
    /// Queries in flight on it.
    busy: AtomicUsize,
}

/// A connection taken for one query: in flight until dropped (also when
/// the query's future is dropped unfinished).
struct Taken(Arc<Conn>);

impl Drop for Taken {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::Relaxed);
    }
}

impl std::ops::Deref for Taken {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        &self.0
    }
}

/// A statement ready to run, with what the lexer learnt of it.
pub(crate) enum Shape {
    One(Arc<Prepared>),
    Several,
    Blank,
}

pub(crate) struct Prepared {
    stmt: Statement,
    params: usize,
    kind: Kind,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link").field("url", &self.0.shown).finish()
    }
}

/// `url` as it may be shown: user, host, port and database, no password.
fn shown(url: &str, config: &Config) -> String {
    use tokio_postgres::config::Host;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let db = config.get_dbname().unwrap_or("");
    let scheme = url.split("://").next().unwrap_or("postgres");
    format!("{scheme}://{user}{host}:{port}/{db}")
}

impl Link {
    /// Parses `url`; connects on first use. With `schema`, the session's
    /// search_path is that schema (`cove test` isolates each suite so).
    pub(crate) fn new(url: &str, schema: Option<&str>) -> Result<Link, DbError> {
        let mut config: Config = url.parse().map_err(|e| {
            DbError::Open(format!(
                "invalid PostgreSQL URL ({e}); expected postgres://user:password@host:port/database"
            ))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("cove");
        if let Some(schema) = schema {
            config.options(format!("-c search_path={schema}"));
        }
        let shown = shown(url, &config);
        Ok(Link(Arc::new(Inner {
            config,
            shown,
            state: Mutex::new(State::default()),
            opened: Notify::new(),
        })))
    }

    /// A connection for one query: the pinned one, else an idle one, else a
    /// new one while fewer than [`CONNECTIONS_PER_WORKER`] are open or being
    /// made, else the least busy (or, while all of them are still being
    /// made, the first that is).
    async fn take(&self) -> Result<Taken, DbError> {
        let conn = loop {
            let opened = self.0.opened.notified();
            let mut opened = pin!(opened);
            opened.as_mut().enable();
            match self.pick()? {
                Pick::Use(c) => break c,
                Pick::Wait => opened.await,
                Pick::Open => break self.open().await?,
            }
        };
        conn.busy.fetch_add(1, Ordering::Relaxed);
        Ok(Taken(conn))
    }

    fn pick(&self) -> Result<Pick, DbError> {
        let mut st = self.0.state.lock();
        if let Some(p) = &st.pinned {
            if p.client.is_closed() {
                return Err(DbError::Unavailable(
                    "PostgreSQL unavailable: the connection holding the transaction was lost"
                        .to_owned(),
                ));
            }
            return Ok(Pick::Use(p.clone()));
        }
        st.conns.retain(|c| !c.client.is_closed());
        let least = st
            .conns
            .iter()
            .min_by_key(|c| c.busy.load(Ordering::Relaxed))
            .cloned();
        // A query waited for in place (the worker blocked: inside db.batch,
        // JavaScript's synchronous forms, tools) must not go behind queries
        // of requests the blocked worker cannot poll: their answers, unread,
        // stop the connection reading (tokio-postgres hands each request its
        // answer through a small channel), and the worker would wait
        // forever. So it takes an idle connection, or opens one more even
        // past the limit (a worker blocks on one query at a time, so that is
        // at most one more).
        let in_place = cove_core::waiting_in_place();
        Ok(match least {
            Some(c) if c.busy.load(Ordering::Relaxed) == 0 => Pick::Use(c),
            _ if in_place || st.conns.len() + st.connecting < CONNECTIONS_PER_WORKER => {
                st.connecting += 1;
                Pick::Open
            }
            Some(c) => Pick::Use(c),
            None => Pick::Wait,
        })
    }

    /// A new connection, made on the I/O thread. The same task adds it to
    /// the set and wakes the waiters: it must not wait for this future to
    /// be polled again, since a worker blocked on a query of its own (a
    /// batch, JavaScript's synchronous forms) would never poll it, and would
    /// wait for the connection forever.
    async fn open(&self) -> Result<Arc<Conn>, DbError> {
        let inner = Arc::clone(&self.0);
        cove_core::io::runtime()
            .spawn(async move {
                let made = connect(inner.config.clone(), inner.shown.clone())
                    .await
                    .map(Arc::new);
                let mut st = inner.state.lock();
                st.connecting -= 1;
                if let Ok(c) = &made {
                    st.conns.push(c.clone());
                }
                drop(st);
                inner.opened.notify_waiters();
                made
            })
            .await
            .map_err(|e| DbError::Unavailable(format!("PostgreSQL connect task failed: {e}")))?
    }

    /// Connects now (at start, so that a wrong URL fails there).
    pub(crate) async fn check(&self) -> Result<(), DbError> {
        self.take().await.map(drop)
    }

    /// Holds one connection for every query until [`Link::unpin`]; false if
    /// one was held already.
    pub(crate) async fn pin(&self) -> Result<bool, DbError> {
        if self.0.state.lock().pinned.is_some() {
            return Ok(false);
        }
        let taken = self.take().await?;
        self.0.state.lock().pinned = Some(taken.0.clone());
        Ok(true)
    }

    pub(crate) fn unpin(&self) {
        self.0.state.lock().pinned = None;
    }

    /// The prepared form of `sql` on `conn`, from its cache or prepared now.
    async fn prepare(&self, conn: &Conn, sql: &str) -> Result<Shape, DbError> {
        if let Some(p) = conn.stmts.lock().get(sql) {
            return Ok(Shape::One(p.clone()));
        }
        let text = sql::rewrite(sql).map_err(DbError::Params)?;
        if text.several {
            return Ok(Shape::Several);
        }
        if crate::sql_text::is_blank(&text.sql) {
            return Ok(Shape::Blank);
        }
        let stmt = conn.client.prepare(&text.sql).await.map_err(db_error)?;
        let prepared = Arc::new(Prepared {
            stmt,
            params: text.params,
            kind: text.kind,
        });
        let mut stmts = conn.stmts.lock();
        if stmts.len() >= STATEMENT_CACHE_CAPACITY {
            stmts.clear();
        }
        stmts.insert(sql.to_owned(), prepared.clone());
        Ok(Shape::One(prepared))
    }

    /// All rows of one statement.
    pub(crate) async fn query(self, sql: String, params: Vec<Value>) -> Result<ResultSet, DbError> {
        let conn = self.take().await?;
        for attempt in 0..2 {
            let p = match self.prepare(&conn, &sql).await? {
                Shape::One(p) => p,
                Shape::Several => return Err(DbError::Sql(SEVERAL_IN_QUERY.to_owned())),
                Shape::Blank => return no_params(&params).map(|()| ResultSet::default()),
            };
            let args = bind(&p, &params)?;
            let refs = refs(&args);
            match conn.client.query(&p.stmt, &refs).await {
                Ok(rows) => return result_set(&p, &rows),
                Err(e) if attempt == 0 && stale_plan(&e) => {
                    conn.stmts.lock().remove(&sql);
                }
                Err(e) => return Err(db_error(e)),
            }
        }
        Err(DbError::Sql("the statement kept changing shape".to_owned()))
    }

    /// Runs one statement (or several, without parameters): the rows it changed,
    /// and after an INSERT the id it took from a sequence.
    pub(crate) async fn exec(
        self,
        sql: String,
        params: Vec<Value>,
    ) -> Result<(u64, Option<i64>), DbError> {
        let conn = self.take().await?;
        for attempt in 0..2 {
            let p = match self.prepare(&conn, &sql).await? {
                Shape::One(p) => p,
                Shape::Several if params.is_empty() => return simple(&conn.client, &sql).await,
                Shape::Several => return Err(DbError::Params(SEVERAL_WITH_PARAMS.to_owned())),
                Shape::Blank => return no_params(&params).map(|()| (0, None)),
            };
            let args = bind(&p, &params)?;
            let refs = refs(&args);
            let ran = match (&p.kind, &conn.lastval) {
                // Sent back to back on the connection, so no other request's
                // INSERT comes between (the connection is this worker's).
                (Kind::Insert, Some(lastval)) => {
                    let (n, id) = in_order(
                        conn.client.execute(&p.stmt, &refs),
                        conn.client.query_one(lastval, &[]),
                    )
                    .await;
                    n.map(|n| (n, id.ok().and_then(|r| r.get::<_, Option<i64>>(0))))
                }
                _ => conn.client.execute(&p.stmt, &refs).await.map(|n| (n, None)),
            };
            match ran {
                Ok((_, id)) if p.kind == Kind::Select => return Ok((0, id)),
                Ok(done) => return Ok(done),
                Err(e) if attempt == 0 && stale_plan(&e) => {
                    conn.stmts.lock().remove(&sql);
                }
                Err(e) => return Err(db_error(e)),
            }
        }
        Err(DbError::Sql("the statement kept changing shape".to_owned()))
    }

    /// Runs `sql` (no parameters, any number of statements) with the simple protocol.
    pub(crate) async fn simple(self, sql: String) -> Result<(u64, Option<i64>), DbError> {
        let conn = self.take().await?;
        simple(&conn.client, &sql).await
    }
}

async fn connect(config: Config, shown: String) -> Result<Conn, DbError> {
    // connect_timeout bounds the TCP connect only; a server that accepts
    // and never answers the startup message is bounded here.
    let limit = config
        .get_connect_timeout()
        .copied()
        .unwrap_or(CONNECT_TIMEOUT);
    let attempt = tokio::time::timeout(limit, config.connect(NoTls)).await;
    let (client, connection) = match attempt {
        Ok(made) => made.map_err(|e| {
            DbError::Unavailable(format!(
                "cannot connect to PostgreSQL at {shown}: {}",
                reason(&e)
            ))
        })?,
        Err(_) => {
            return Err(DbError::Unavailable(format!(
                "cannot connect to PostgreSQL at {shown}: no answer within {} s",
                limit.as_secs()
            )))
        }
    };
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            let why = reason(&e);
            cove_core::log::warn(&format!("PostgreSQL connection to {shown} lost: {why}"));
        }
    });
    let lastval = match client.batch_execute(LASTVAL_FN).await {
        Ok(()) => client.prepare("SELECT pg_temp.cove_lastval()").await.ok(),
        Err(_) => None,
    };
    Ok(Conn {
        client,
        lastval,
        stmts: Mutex::default(),
        busy: AtomicUsize::new(0),
    })
}

/// The innermost cause, which says what went wrong (`Connection refused`,
/// `password authentication failed for user "app"`).
fn reason(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return db.message().to_string();
    }
    let mut source: &dyn std::error::Error = e;
    while let Some(inner) = source.source() {
        source = inner;
    }
    source.to_string()
}

fn stale_plan(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&tokio_postgres::error::SqlState::FEATURE_NOT_SUPPORTED)
        && e.as_db_error()
            .is_some_and(|d| d.message().contains("cached plan"))
}

fn no_params(params: &[Value]) -> Result<(), DbError> {
    if params.is_empty() {
        Ok(())
    } else {
        Err(DbError::Params(too_many_params(0, params.len())))
    }
}

/// The statement's parameters: as SQLite does, missing ones are NULL.
fn bind<'a>(p: &Prepared, params: &'a [Value]) -> Result<Vec<Param<'a>>, DbError> {
    if params.len() > p.params {
        return Err(DbError::Params(too_many_params(p.params, params.len())));
    }
    const NULL: &Value = &Value::Null;
    Ok((0..p.params)
        .map(|i| Param(params.get(i).unwrap_or(NULL)))
        .collect())
}

fn refs<'a>(args: &'a [Param<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    args.iter().map(|a| a as &(dyn ToSql + Sync)).collect()
}

fn result_set(p: &Prepared, rows: &[tokio_postgres::Row]) -> Result<ResultSet, DbError> {
    let columns: Vec<String> = p
        .stmt
        .columns()
        .iter()
        .map(|c| c.name().to_owned())
        .collect();
    let rows = rows
        .iter()
        .map(|row| (0..columns.len()).map(|i| read(row, i)).collect())
        .collect::<Result<Vec<Vec<Value>>, DbError>>()?;
    Ok(ResultSet { columns, rows })
}

async fn simple(client: &Client, sql: &str) -> Result<(u64, Option<i64>), DbError> {
    let messages = client.simple_query(sql).await.map_err(db_error)?;
    let changed = messages
        .iter()
        .map(|m| match m {
            SimpleQueryMessage::CommandComplete(n) => n.to_owned(),
            _ => 0,
        })
        .sum();
    Ok((changed, None))
}

/// Both futures' outputs, `a` always polled first: its request is on the
/// connection before `b`'s.
async fn in_order<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut ra, mut rb) = (None, None);
    poll_fn(|cx| {
        if ra.is_none() {
            if let Poll::Ready(v) = a.as_mut().poll(cx) {
                ra = Some(v);
            }
        }
        if rb.is_none() {
            if let Poll::Ready(v) = b.as_mut().poll(cx) {
                rb = Some(v);
            }
        }
        match (ra.take(), rb.take()) {
            (Some(x), Some(y)) => Poll::Ready((x, y)),
            (x, y) => {
                ra = x;
                rb = y;
                Poll::Pending
            }
        }
    })
    .await
}
