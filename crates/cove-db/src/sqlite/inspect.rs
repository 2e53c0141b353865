//! Looking into a database from tools (`cove db schema`, `cove db query`): the
//! tables and columns, and one statement's complete result with its column
//! names. Unlike [`Sqlite::query`] these may read the reserved `_hull_*` tables:
//! the person running a tool owns the database.

use crate::error::DbError;
use crate::inspect::{ColumnInfo, ResultSet, TableInfo};
use crate::sqlite::conn::{run, Sqlite};
use crate::sqlite::stmt::{Prepared, Stmt};
use rusqlite::Connection;

const SEVERAL: &str = "several statements; pass one statement at a time";
const BLANK: &str = "no SQL statement given";

impl Sqlite {
    /// Tables (not views, not SQLite's own `sqlite_*`), ordered by name.
    pub fn schema(&mut self) -> Result<Vec<TableInfo>, DbError> {
        self.as_cove();
        let mut names = Vec::new();
        let mut stmt = self.conn.prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' \
             AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            names.push(row.get::<_, String>(0)?);
        }
        drop(rows);
        drop(stmt);
        names
            .into_iter()
            .map(|name| {
                let columns = columns(&self.conn, &name)?;
                Ok(TableInfo { name, columns })
            })
            .collect()
    }

    /// Whether `sql` — which must be exactly one statement — may change the
    /// database (SQLite's `sqlite3_stmt_readonly`). Tools refuse such
    /// statements unless asked to write.
    pub fn statement_writes(&self, sql: &str) -> Result<bool, DbError> {
        self.as_cove();
        let stmt = prepare_one(&self.conn, sql)?;
        Ok(!stmt.readonly())
    }

    /// Runs one statement and returns all its rows. A statement that may
    /// write takes the write lock as [`Sqlite::exec`] does.
    pub fn query_all(&mut self, sql: &str) -> Result<ResultSet, DbError> {
        self.as_cove();
        let Sqlite {
            conn, hold, group, ..
        } = self;
        let stmt = prepare_one(conn, sql)?;
        let columns = (0..stmt.column_count())
            .map(|i| stmt.column_name(i).map(String::from))
            .collect::<Result<Vec<String>, _>>()?;
        let width = columns.len();
        let rows = run(conn, hold, group, &stmt, &[], |r| {
            let mut out = Vec::new();
            while r.step()? {
                out.push((0..width).map(|i| r.value(i, width).into()).collect());
            }
            Ok(out)
        })?;
        Ok(ResultSet { columns, rows })
    }
}

fn prepare_one(conn: &Connection, sql: &str) -> Result<Stmt, DbError> {
    match Stmt::prepare(conn, sql, false)? {
        Prepared::One(stmt) => Ok(stmt),
        Prepared::Blank => Err(DbError::Sql(BLANK.to_owned())),
        Prepared::Several => Err(DbError::Sql(SEVERAL.to_owned())),
    }
}

fn columns(conn: &Connection, table: &str) -> Result<Vec<ColumnInfo>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid",
    )?;
    let mut rows = stmt.query([table])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(ColumnInfo {
            name: row.get(0)?,
            decl_type: row.get(1)?,
            not_null: row.get::<_, i64>(2)? != 0,
            default: row.get(3)?,
            pk: row.get::<_, i64>(4)? != 0,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Origin, Value, WriteLock};
    use std::path::Path;

    fn memory() -> Sqlite {
        let mut db = Sqlite::open(Path::new(":memory:"), WriteLock::default()).expect("open");
        db.exec(
            "CREATE TABLE tasks (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, \
             done INTEGER DEFAULT 0, at);
             CREATE TABLE _hull_x (k);
             CREATE VIEW v AS SELECT 1;",
            &[],
            Origin::Stdlib,
        )
        .expect("schema");
        db
    }

    #[test]
    fn schema_lists_tables_by_name_without_sqlite_internals() {
        let mut db = memory();
        let tables = db.schema().expect("schema");
        let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
        // AUTOINCREMENT made sqlite_sequence; it and the view are left out.
        assert_eq!(names, ["_hull_x", "tasks"]);
        let cols = &tables[1].columns;
        assert_eq!(
            cols[0],
            ColumnInfo {
                name: "id".into(),
                decl_type: "INTEGER".into(),
                not_null: false,
                default: None,
                pk: true
            }
        );
        assert!(cols[1].not_null);
        assert_eq!(cols[2].default.as_deref(), Some("0"));
        assert_eq!(cols[3].decl_type, "");
    }

    #[test]
    fn query_all_keeps_columns_of_an_empty_result_and_every_type() {
        let mut db = memory();
        let empty = db.query_all("SELECT id, title FROM tasks").expect("query");
        assert_eq!(empty.columns, ["id", "title"]);
        assert!(empty.rows.is_empty());
        let r = db
            .query_all("SELECT 1 AS i, 1.5 AS r, 'x' AS t, x'0001' AS b, NULL AS n")
            .expect("query");
        assert_eq!(
            r.rows,
            [vec![
                Value::Integer(1),
                Value::Real(1.5),
                Value::Text(b"x".to_vec()),
                Value::Blob(vec![0, 1]),
                Value::Null
            ]]
        );
        // Tools may read the reserved tables.
        assert!(db.query_all("SELECT * FROM _hull_x").is_ok());
    }

    #[test]
    fn query_all_runs_writes_with_returning() {
        let mut db = memory();
        assert!(db
            .statement_writes("INSERT INTO tasks (title) VALUES ('a')")
            .unwrap());
        assert!(!db.statement_writes("SELECT * FROM tasks").unwrap());
        let r = db
            .query_all("INSERT INTO tasks (title) VALUES ('a') RETURNING id")
            .expect("insert");
        assert_eq!(r.rows, [vec![Value::Integer(1)]]);
        assert!(!db.in_transaction());
    }

    #[test]
    fn one_statement_at_a_time() {
        let mut db = memory();
        for sql in ["SELECT 1; SELECT 2", "SELECT 1; bogus", "  -- nothing\n"] {
            let err = db.query_all(sql).expect_err(sql);
            assert_eq!(err.code(), "db.sql", "{sql}");
        }
        let err = db
            .query_all("SELECT * FROM nope")
            .expect_err("missing table");
        assert!(err.to_string().contains("no such table: nope"), "{err}");
    }

    #[test]
    fn readonly_file_is_inspected_and_refuses_writes() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("app.db");
        {
            let mut db = Sqlite::open(&path, WriteLock::default()).expect("open");
            db.exec(
                "CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('a')",
                &[],
                Origin::App,
            )
            .expect("fill");
        }
        let mut ro = Sqlite::open_readonly(&path).expect("readonly");
        assert_eq!(ro.schema().expect("schema")[0].name, "t");
        assert_eq!(ro.query_all("SELECT x FROM t").expect("read").rows.len(), 1);
        let err = ro
            .query_all("INSERT INTO t VALUES ('b')")
            .expect_err("read-only");
        assert!(err.to_string().contains("readonly"), "{err}");

        // While a server has the file open, its latest commit sits in the WAL.
        let mut live = Sqlite::open(&path, WriteLock::default()).expect("open");
        live.exec("INSERT INTO t VALUES ('c')", &[], Origin::App)
            .expect("insert");
        let mut ro = Sqlite::open_readonly(&path).expect("readonly beside a writer");
        assert_eq!(ro.query_all("SELECT x FROM t").expect("read").rows.len(), 2);
    }
}
