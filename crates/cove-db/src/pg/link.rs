//! One worker's connection to PostgreSQL: made on first use and again after
//! it was lost (a server restart), with the statements prepared on it.
//!
//! Requests of one worker share the connection: tokio-postgres pipelines
//! their queries, so many requests in flight need no connection each.

use std::collections::HashMap;
use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use parking_lot::Mutex;
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
}

#[derive(Default)]
struct State {
    conn: Option<Arc<Conn>>,
    stmts: HashMap<String, Arc<Prepared>>,
}

struct Conn {
    client: Client,
    /// `SELECT pg_temp.cove_lastval()`, when the session could make it.
    lastval: Option<Statement>,
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
            config.connect_timeout(Duration::from_secs(5));
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
        })))
    }

    /// The live connection, connecting (again) if there is none.
    async fn conn(&self) -> Result<Arc<Conn>, DbError> {
        if let Some(c) = &self.0.state.lock().conn {
            if !c.client.is_closed() {
                return Ok(c.clone());
            }
        }
        let config = self.0.config.clone();
        let shown = self.0.shown.clone();
        let made = cove_core::io::runtime()
            .spawn(connect(config, shown))
            .await
            .map_err(|e| DbError::Unavailable(format!("PostgreSQL connect task failed: {e}")))??;
        let made = Arc::new(made);
        let mut st = self.0.state.lock();
        st.stmts.clear();
        st.conn = Some(made.clone());
        Ok(made)
    }

    /// Connects now (at start, so that a wrong URL fails there).
    pub(crate) async fn check(&self) -> Result<(), DbError> {
        self.conn().await.map(|_| ())
    }

    /// The prepared form of `sql`, from the cache or prepared now.
    async fn prepare(&self, conn: &Conn, sql: &str) -> Result<Shape, DbError> {
        if let Some(p) = self.0.state.lock().stmts.get(sql) {
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
        let mut st = self.0.state.lock();
        if st.stmts.len() >= STATEMENT_CACHE_CAPACITY {
            st.stmts.clear();
        }
        st.stmts.insert(sql.to_owned(), prepared.clone());
        Ok(Shape::One(prepared))
    }

    /// A statement cached before another process changed the schema fails once
    /// ("cached plan must not change result type"); it is prepared again.
    fn forget(&self, sql: &str) {
        self.0.state.lock().stmts.remove(sql);
    }

    /// All rows of one statement.
    pub(crate) async fn query(self, sql: String, params: Vec<Value>) -> Result<ResultSet, DbError> {
        let conn = self.conn().await?;
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
                Err(e) if attempt == 0 && stale_plan(&e) => self.forget(&sql),
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
        let conn = self.conn().await?;
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
                Err(e) if attempt == 0 && stale_plan(&e) => self.forget(&sql),
                Err(e) => return Err(db_error(e)),
            }
        }
        Err(DbError::Sql("the statement kept changing shape".to_owned()))
    }

    /// Runs `sql` (no parameters, any number of statements) with the simple protocol.
    pub(crate) async fn simple(self, sql: String) -> Result<(u64, Option<i64>), DbError> {
        let conn = self.conn().await?;
        simple(&conn.client, &sql).await
    }
}

async fn connect(config: Config, shown: String) -> Result<Conn, DbError> {
    let (client, connection) = config.connect(NoTls).await.map_err(|e| {
        DbError::Unavailable(format!(
            "cannot connect to PostgreSQL at {shown}: {}",
            reason(&e)
        ))
    })?;
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
    Ok(Conn { client, lastval })
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
