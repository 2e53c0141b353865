use super::*;
use crate::{DbError, ValueRef};

#[test]
fn values_round_trip_with_their_sqlite_types() {
    let mut f = fixture();
    let params = [
        Value::Null,
        Value::Integer(-7),
        Value::Real(2.5),
        Value::Text(vec![b'h', 0xff, b'i']), // not UTF-8: stored byte for byte
        Value::Blob(vec![0, 1, 2]),
    ];
    let sql =
        "SELECT ?1, ?2, ?3, ?4, ?5, typeof(?1), typeof(?2), typeof(?3), typeof(?4), typeof(?5)";
    let got = rows(&mut f.db, sql, &params);
    let mut want = params.to_vec();
    want.extend(["null", "integer", "real", "text", "blob"].map(text));
    assert_eq!(got, vec![want]);
}

#[test]
fn row_get_borrows_and_out_of_range_is_null() {
    let mut f = fixture();
    let mut seen = 0;
    f.db.query("SELECT 'abc', x'00ff'", &[], Origin::App, |_, row| {
        assert_eq!(row.len(), 2);
        assert!(!row.is_empty());
        assert_eq!(row.get(0), ValueRef::Text(b"abc"));
        assert_eq!(row.get(1), ValueRef::Blob(&[0, 0xff]));
        assert_eq!(row.get(2), ValueRef::Null);
        seen += 1;
        Ok(())
    })
    .expect("query");
    assert_eq!(seen, 1);
}

#[test]
fn missing_params_bind_null() {
    let mut f = fixture();
    let got = rows(
        &mut f.db,
        "SELECT ?, ? IS NULL, ?3 IS NULL",
        &[Value::Integer(1)],
    );
    assert_eq!(
        got,
        vec![vec![
            Value::Integer(1),
            Value::Integer(1),
            Value::Integer(1)
        ]]
    );
}

#[test]
fn a_cached_statement_keeps_no_parameter_from_its_last_run() {
    // Parameters are bound without a copy: a binding left behind would point
    // into the previous call's freed values.
    let mut f = fixture();
    let sql = "SELECT ?1, ?2";
    let first = [text("first"), Value::Blob(vec![7; 64])];
    assert_eq!(rows(&mut f.db, sql, &first), vec![first.to_vec()]);
    drop(first);
    assert_eq!(
        rows(&mut f.db, sql, &[Value::Integer(2)]),
        vec![vec![Value::Integer(2), Value::Null]]
    );
    assert_eq!(
        rows(&mut f.db, sql, &[]),
        vec![vec![Value::Null, Value::Null]]
    );
}

#[test]
fn empty_statements_before_one_are_skipped() {
    let mut f = fixture();
    for sql in ["; SELECT 1", " ;; SELECT 1 ;", "-- c\n; SELECT 1"] {
        assert_eq!(int(&mut f.db, sql), 1, "{sql:?}");
    }
}

#[test]
fn sql_with_a_nul_byte_is_refused_not_cut_short() {
    let mut f = fixture();
    exec(&mut f.db, "CREATE TABLE t(x)");
    for sql in ["SELECT 1\0; DROP TABLE t", "\0"] {
        let err = f.db.exec(sql, &[], Origin::App).expect_err(sql);
        assert_eq!(err.to_string(), "the SQL contains a NUL byte");
    }
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM t"), 0);
}

#[test]
fn too_many_params_is_an_error_naming_the_counts() {
    let mut f = fixture();
    let err = f.db.query(
        "SELECT ?",
        &[Value::Integer(1), Value::Integer(2)],
        Origin::App,
        |_, _| Ok(()),
    );
    let err = err.expect_err("must fail");
    assert_eq!(err.code(), "db.params");
    assert_eq!(
        err.to_string(),
        "too many parameters: the statement takes 1, got 2"
    );
    let err =
        f.db.exec("SELECT 1", &[Value::Null], Origin::App)
            .expect_err("must fail");
    assert_eq!(
        err.to_string(),
        "too many parameters: the statement takes 0, got 1"
    );
}

#[test]
fn column_names_are_computed_once_per_call_and_use_aliases() {
    let mut f = fixture();
    exec(
        &mut f.db,
        "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)",
    );
    exec(&mut f.db, "INSERT INTO t(name) VALUES ('a'), ('b'), ('c')");
    let mut seen: Vec<(usize, Vec<String>)> = Vec::new();
    f.db.query(
        "SELECT id AS n, name FROM t ORDER BY id",
        &[],
        Origin::App,
        |names, _| {
            seen.push((
                names.as_ptr() as usize,
                names.iter().map(|s| s.to_string()).collect(),
            ));
            Ok(())
        },
    )
    .expect("query");
    assert_eq!(seen.len(), 3);
    assert!(seen
        .iter()
        .all(|(ptr, names)| *ptr == seen[0].0 && names == &["n", "name"]));
}

#[test]
fn cached_select_star_follows_schema_changes() {
    let mut f = fixture();
    exec(&mut f.db, "CREATE TABLE t(a); INSERT INTO t VALUES (1)");
    assert_eq!(rows(&mut f.db, "SELECT * FROM t", &[]).len(), 1);
    exec(&mut f.db, "ALTER TABLE t ADD COLUMN b DEFAULT 2");
    let mut names_seen = Vec::new();
    f.db.query("SELECT * FROM t", &[], Origin::App, |names, row| {
        names_seen = names.iter().map(|s| s.to_string()).collect();
        assert_eq!(row.len(), 2);
        Ok(())
    })
    .expect("query");
    assert_eq!(names_seen, ["a", "b"]);
}

#[test]
fn callback_error_aborts_the_query_and_is_returned() {
    let mut f = fixture();
    exec(
        &mut f.db,
        "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3)",
    );
    let mut calls = 0;
    let err = f.db.query("SELECT x FROM t", &[], Origin::App, |_, _| {
        calls += 1;
        Err(DbError::Callback("stop".into()))
    });
    assert_eq!(calls, 1);
    assert_eq!(err.err().map(|e| e.to_string()).as_deref(), Some("stop"));
    // The statement was reset: the table can be dropped (an active reader would lock it).
    exec(&mut f.db, "DROP TABLE t");
}

#[test]
fn query_runs_statements_without_result_columns_and_yields_no_rows() {
    let mut f = fixture();
    let mut calls = 0;
    for sql in ["CREATE TABLE t(x)", "INSERT INTO t VALUES (5)"] {
        f.db.query(sql, &[], Origin::App, |_, _| {
            calls += 1;
            Ok(())
        })
        .expect(sql);
    }
    assert_eq!(calls, 0);
    assert_eq!(int(&mut f.db, "SELECT x FROM t"), 5);
}

#[test]
fn insert_returning_yields_rows_through_query() {
    let mut f = fixture();
    exec(&mut f.db, "CREATE TABLE t(id INTEGER PRIMARY KEY, x)");
    let got = rows(
        &mut f.db,
        "INSERT INTO t(x) VALUES (?), (?) RETURNING id, x",
        &[text("a"), text("b")],
    );
    assert_eq!(
        got,
        vec![
            vec![Value::Integer(1), text("a")],
            vec![Value::Integer(2), text("b")]
        ]
    );
    assert_eq!(f.db.last_id(), 2);
}

#[test]
fn exec_returns_rows_changed_by_this_statement_only() {
    let mut f = fixture();
    assert_eq!(exec(&mut f.db, "CREATE TABLE t(x)"), 0);
    assert_eq!(exec(&mut f.db, "INSERT INTO t VALUES (1), (2), (3)"), 3);
    assert_eq!(exec(&mut f.db, "CREATE TABLE u(y)"), 0); // changes() would still say 3
    assert_eq!(exec(&mut f.db, "SELECT * FROM t"), 0);
    assert_eq!(exec(&mut f.db, "UPDATE t SET x = x + 1 WHERE x >= 2"), 2);
    assert_eq!(exec(&mut f.db, "UPDATE t SET x = 0 WHERE x > 100"), 0);
    exec(
        &mut f.db,
        "CREATE TRIGGER log AFTER DELETE ON t BEGIN INSERT INTO u VALUES (old.x); END",
    );
    assert_eq!(exec(&mut f.db, "DELETE FROM t WHERE x = 1"), 1); // trigger rows not counted
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM u"), 1);
}

#[test]
fn exec_steps_a_select_to_completion() {
    let mut f = fixture();
    exec(
        &mut f.db,
        "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3)",
    );
    assert_eq!(exec(&mut f.db, "SELECT x FROM t"), 0);
    // DROP TABLE fails with "database table is locked" while a statement on t is active.
    assert_eq!(exec(&mut f.db, "DROP TABLE t"), 0);
}

#[test]
fn exec_runs_several_statements_when_there_are_no_params() {
    let mut f = fixture();
    let n = exec(
        &mut f.db,
        "CREATE TABLE t(x); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2), (3);",
    );
    assert_eq!(n, 3);
    assert_eq!(int(&mut f.db, "SELECT sum(x) FROM t"), 6);
}

#[test]
fn several_statements_with_params_or_in_query_are_refused() {
    let mut f = fixture();
    exec(&mut f.db, "CREATE TABLE t(x)");
    for sql in [
        "INSERT INTO t VALUES (?); INSERT INTO t VALUES (?)",
        "CREATE TABLE u(y); INSERT INTO u VALUES (?)",
    ] {
        let err =
            f.db.exec(sql, &[Value::Integer(1)], Origin::App)
                .expect_err(sql);
        assert_eq!(err.code(), "db.params");
        assert!(
            err.to_string()
                .starts_with("several statements with parameters"),
            "{err}"
        );
    }
    let err =
        f.db.query("SELECT 1; SELECT 2", &[], Origin::App, |_, _| Ok(()))
            .expect_err("must fail");
    assert!(
        err.to_string()
            .starts_with("several statements in one db.query"),
        "{err}"
    );
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM t"), 0);
}

#[test]
fn blank_sql_does_nothing() {
    let mut f = fixture();
    assert_eq!(exec(&mut f.db, "  -- nothing here\n ; "), 0);
    assert!(rows(&mut f.db, "/* nothing */", &[]).is_empty());
}

#[test]
fn app_origin_may_not_touch_reserved_tables() {
    let mut f = fixture();
    exec(&mut f.db, "CREATE TABLE _hull_sessions(id)");
    for sql in ["CREATE TABLE _hull_x(a)", "SELECT * FROM _HULL_Sessions"] {
        let err = f.db.exec(sql, &[], Origin::App).expect_err(sql);
        assert_eq!(err.code(), "db.reserved");
        assert_eq!(
            err.to_string(),
            "access denied: _hull_* tables are reserved"
        );
        let err =
            f.db.query(sql, &[], Origin::App, |_, _| Ok(()))
                .expect_err(sql);
        assert_eq!(err.code(), "db.reserved");
    }
    exec(&mut f.db, "CREATE TABLE _hull_x(a)"); // stdlib is exempt
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM _hull_x"), 0);
    // The guard reads what a statement touches, not its text.
    let mut seen = Vec::new();
    f.db.query("SELECT '_Hull_' AS s", &[], Origin::App, |_, row| {
        seen.push(Value::from(row.get(0)));
        Ok(())
    })
    .expect("a literal is no table");
    assert_eq!(seen, [text("_Hull_")]);
}

#[test]
fn last_id_is_the_latest_rowid() {
    let mut f = fixture();
    exec(&mut f.db, "CREATE TABLE t(id INTEGER PRIMARY KEY, x)");
    f.db.exec(
        "INSERT INTO t(id, x) VALUES (41, ?)",
        &[text("a")],
        Origin::App,
    )
    .expect("insert");
    assert_eq!(f.db.last_id(), 41);
    f.db.exec("INSERT INTO t(x) VALUES (?)", &[text("b")], Origin::App)
        .expect("insert");
    assert_eq!(f.db.last_id(), 42);
}
