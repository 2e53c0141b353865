//! `db.query`'s row objects (raw/rows.rs: raw atoms, `JS_SetProperty`, one
//! `JS_NewArrayFrom`, the columns' key list kept as a shape) against the
//! same rows built by plain script code from the values the query was
//! given, over generated column names (repeated, unicode, array-index
//! look-alikes, `__proto__`, `toJSON`) and values of every SQLite type;
//! then serialized (`res.json`'s serializer, from the kept shape) against
//! `JSON.stringify`.

use std::fmt::Write;

use proptest::prelude::*;

use super::support::{eval, ours, runner, stringify, TestApp};
use super::values::num;

#[derive(Clone, Debug)]
enum Cell {
    Null,
    Int(i64),
    /// Never NaN: SQLite stores a NaN parameter as NULL.
    Real(f64),
    Text(String),
    /// Text that is not UTF-8 (made by a cast in SQL).
    BadText(Vec<u8>),
    Blob(Vec<u8>),
}

#[derive(Clone, Debug)]
struct Rows {
    names: Vec<String>,
    rows: Vec<Vec<Cell>>,
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z_]{1,6}",
        2 => prop::sample::select(vec![
            "id", "id", "name", "", " ", "0", "1", "01", "-1", "4294967295", "a\"b", "é", "日本",
            "😀", "count(*)", "__proto__", "toJSON", "length", "constructor",
        ])
        .prop_map(String::from),
    ]
}

fn cell() -> impl Strategy<Value = Cell> {
    prop_oneof![
        2 => Just(Cell::Null),
        3 => prop_oneof![
            -1000i64..1000,
            any::<i64>(),
            Just(i64::MIN),
            Just(i64::MAX),
            Just((1 << 53) + 1),
        ]
        .prop_map(Cell::Int),
        3 => num().prop_filter("NaN binds NULL", |f| !f.is_nan()).prop_map(Cell::Real),
        4 => "[a-zA-Z0-9 <>&\"'\\\\é日😀\\t\\n\\u{0}\\u{1f}\\u{2028}]{0,12}".prop_map(Cell::Text),
        1 => prop::collection::vec(any::<u8>(), 0..12).prop_map(Cell::BadText),
        1 => prop::collection::vec(any::<u8>(), 0..24).prop_map(Cell::Blob),
    ]
}

/// Up to 6 rows of up to 6 columns, now and then 17 or more (past the
/// longest key list kept as a shape).
fn rows() -> impl Strategy<Value = Rows> {
    let names = prop_oneof![
        8 => prop::collection::vec(name(), 1..7),
        1 => prop::collection::vec(name(), 17..21),
    ];
    names.prop_flat_map(|names| {
        let n = names.len();
        let rows = prop::collection::vec(prop::collection::vec(cell(), n..=n), 0..7);
        (Just(names), rows).prop_map(|(names, rows)| Rows { names, rows })
    })
}

fn js_string(s: &str) -> String {
    serde_json::to_string(s).expect("a JSON string is a JS string")
}

fn hex(b: &[u8]) -> String {
    b.iter().fold(String::new(), |mut s, x| {
        let _ = write!(s, "{x:02X}");
        s
    })
}

/// JS source setting `SQL`, `PARAMS`, `NAMES` and `VALS` (each row's
/// values as the script expects to read them back).
fn js_case(r: &Rows) -> String {
    let mut sql = String::new();
    let mut params = Vec::new();
    let mut vals = Vec::new();
    let rows = match r.rows.is_empty() {
        // No rows, but the columns still have names.
        true => vec![vec![Cell::Null; r.names.len()]],
        false => r.rows.clone(),
    };
    for (i, row) in rows.iter().enumerate() {
        sql.push_str(if i == 0 {
            "SELECT "
        } else {
            " UNION ALL SELECT "
        });
        let mut row_vals = Vec::new();
        for (c, cell) in row.iter().enumerate() {
            if c > 0 {
                sql.push_str(", ");
            }
            let expected = match cell {
                Cell::Null => {
                    sql.push_str("NULL");
                    "null".to_string()
                }
                // A literal: any i64, read back as the nearest double, as
                // the JS literal of its digits reads.
                Cell::Int(n) if *n == i64::MIN => {
                    sql.push_str("(-9223372036854775807 - 1)");
                    "-9223372036854775808".into()
                }
                Cell::Int(n) => {
                    let _ = write!(sql, "{n}");
                    format!("({n})")
                }
                // A parameter; integral numbers up to 2^53 bind as
                // INTEGER (docs/compat.md), so -0 comes back 0.
                Cell::Real(f) => {
                    sql.push('?');
                    let js = match f.is_infinite() {
                        true => if *f > 0.0 { "Infinity" } else { "-Infinity" }.to_string(),
                        false => format!("({f:?})"),
                    };
                    params.push(js.clone());
                    format!("(Number.isInteger({js}) && Math.abs({js}) <= 2 ** 53 - 1 ? {js} + 0 : {js})")
                }
                Cell::Text(t) => {
                    sql.push('?');
                    params.push(js_string(t));
                    js_string(t)
                }
                Cell::BadText(b) => {
                    let _ = write!(sql, "CAST(X'{}' AS TEXT)", hex(b));
                    js_string(&String::from_utf8_lossy(b))
                }
                Cell::Blob(b) => {
                    let _ = write!(sql, "X'{}'", hex(b));
                    let bytes: Vec<String> = b.iter().map(u8::to_string).collect();
                    format!("new Uint8Array([{}]).buffer", bytes.join(", "))
                }
            };
            row_vals.push(expected);
            if i == 0 {
                let _ = write!(sql, " AS \"{}\"", r.names[c].replace('"', "\"\""));
            }
        }
        vals.push(format!("[{}]", row_vals.join(", ")));
    }
    if r.rows.is_empty() {
        sql.push_str(" WHERE 0");
        vals.clear();
    }
    let names: Vec<String> = r.names.iter().map(|n| js_string(n)).collect();
    format!(
        "globalThis.SQL = {};\nglobalThis.PARAMS = [{}];\nglobalThis.NAMES = [{}];\nglobalThis.VALS = [{}];\n",
        js_string(&sql),
        params.join(", "),
        names.join(", "),
        vals.join(", ")
    )
}

const APP: &str = r#"
import { app } from "hull:app";
import { db } from "hull:db";
globalThis.db = db;
app.get("/", (req, res) => res.text(""));
"#;

/// `[rows, want, same]`: the query's rows, the script's, and whether they
/// are equal: the same prototypes, keys in the same order, values the
/// same (`Object.is`; ArrayBuffers byte for byte).
const CHECK: &str = r#"(() => {
  // A real ArrayBuffer (a row whose `__proto__` column holds a blob has
  // one for its prototype, and is no ArrayBuffer).
  const byteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get;
  const isBuffer = (x) => { try { byteLength.call(x); return true; } catch (e) { return false; } };
  const same = (a, b) => {
    if (isBuffer(a) || isBuffer(b)) {
      if (!(isBuffer(a) && isBuffer(b)) || a.byteLength !== b.byteLength) return false;
      const x = new Uint8Array(a), y = new Uint8Array(b);
      return x.every((v, i) => v === y[i]);
    }
    if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return Object.is(a, b);
    // The same prototype (or equal blobs, set through a `__proto__` column).
    const pa = Object.getPrototypeOf(a), pb = Object.getPrototypeOf(b);
    if (pa !== pb && !(isBuffer(pa) && same(pa, pb))) return false;
    const ka = Object.keys(a), kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && same(a[k], b[k]));
  };
  const rows = db.query(SQL, PARAMS);
  const want = VALS.map((vals) => {
    const o = {};
    NAMES.forEach((name, c) => { o[name] = vals[c]; });
    return o;
  });
  return [rows, want, same(rows, want)];
})()"#;

#[test]
fn query_rows_match_rows_built_by_script() {
    let app = TestApp::load(APP);
    runner(256)
        .run(&rows(), |r| {
            let setup = js_case(&r);
            app.with(|ctx| {
                eval(ctx, &setup);
                // Twice: the second query finds its columns' shape kept.
                for _ in 0..2 {
                    let got: rquickjs::Array = eval(ctx, CHECK).into_array().expect("an array");
                    let (rows, want, same): (rquickjs::Value, rquickjs::Value, bool) = (
                        got.get(0).unwrap(),
                        got.get(1).unwrap(),
                        got.get(2).unwrap(),
                    );
                    prop_assert!(same, "rows differ from the script's\n{}", setup);
                    let text = stringify(ctx, rows.clone());
                    prop_assert_eq!(&text, &stringify(ctx, want), "{}", setup);
                    // A toJSON column or a blob (an ArrayBuffer) sends the
                    // rows to JSON.stringify.
                    let declines = r.names.iter().any(|n| n == "toJSON")
                        || r.rows.iter().flatten().any(|c| matches!(c, Cell::Blob(_)));
                    match ours(ctx, &rows) {
                        Some(ours) => prop_assert_eq!(Ok(Some(ours)), text, "{}", setup),
                        None => prop_assert!(declines, "handed over\n{}", setup),
                    }
                }
                Ok(())
            })
        })
        .unwrap();
}

/// Found by the serializer's property test (issue 38): columns that
/// repeat a name (`SELECT a.id, b.id`) had their key list kept as it was,
/// so the shape of `{id, name}` was known with three members, and every
/// such object (the rows, or any other sent with `res.json`) was written
/// with a third read past its two property slots.
#[test]
fn r38_repeated_column_names_keep_the_rows_shape() {
    let app = TestApp::load(APP);
    app.with(|ctx| {
        let sql = "SELECT 1 AS id, 2 AS id, 3 AS name UNION ALL SELECT 4, 5, 6";
        let rows = eval(ctx, &format!("db.query('{sql}')"));
        let want = r#"[{"id":2,"name":3},{"id":5,"name":6}]"#;
        assert_eq!(ours(ctx, &rows).as_deref(), Some(want));
        for _ in 0..3 {
            let v = eval(ctx, "({id: 7, name: 'x'})");
            assert_eq!(ours(ctx, &v).as_deref(), Some(r#"{"id":7,"name":"x"}"#));
        }
    });
}

/// A text column whose value repeats from row to row shares one string
/// (raw/rows.rs `text`): the rows still read, change and serialize as their own
/// values, over runs of equal, different, empty, non-ASCII and not-UTF-8
/// text, and text after a number in the same column.
#[test]
fn repeated_text_reads_as_its_values() {
    let app = TestApp::load(APP);
    app.with(|ctx| {
        let sql = "SELECT * FROM (VALUES ('/', 'a'), ('/', 'a'), ('/b', 'é'), ('/b', 'é'), \
                   ('', ''), ('', ''), (1, '/'), ('1', '/'), \
                   ('/', CAST(x'ff' AS TEXT)), ('/', CAST(x'ff' AS TEXT)), ('/', 'a'))";
        let want = r#"[{"column1":"/","column2":"a"},{"column1":"/","column2":"a"},{"column1":"/b","column2":"é"},{"column1":"/b","column2":"é"},{"column1":"","column2":""},{"column1":"","column2":""},{"column1":1,"column2":"/"},{"column1":"1","column2":"/"},{"column1":"/","column2":"�"},{"column1":"/","column2":"�"},{"column1":"/","column2":"a"}]"#;
        for _ in 0..2 {
            let rows = eval(ctx, &format!("db.query(\"{sql}\")"));
            assert_eq!(ours(ctx, &rows).as_deref(), Some(want));
            assert_eq!(stringify(ctx, rows).ok().flatten().as_deref(), Some(want));
        }
        let changed = eval(
            ctx,
            &format!(
                "(() => {{ const r = db.query(\"{sql}\"); r[0].column1 += 'x'; \
                 return [r[0].column1, r[1].column1, r[1].column1 === r[10].column1]; }})()"
            ),
        );
        assert_eq!(
            stringify(ctx, changed).ok().flatten().as_deref(),
            Some(r#"["/x","/",true]"#)
        );
    });
}
