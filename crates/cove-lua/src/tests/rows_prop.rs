//! `db.query` results (raw/rows.rs): packed into a userdata, written to JSON
//! straight from it, or turned into row tables on first look. Each is
//! compared with the same rows built by plain script code from the values
//! the query was given, over generated column names (repeated, unicode,
//! quotes, numeric-like) and values of every SQLite type.

use std::fmt::Write;

use proptest::prelude::*;

use super::canonical::canonical;
use super::support::{runner, TestApp};
use super::values::{bytes, float, int, lua_float, lua_int, lua_string};

#[derive(Clone, Debug)]
enum Cell {
    Null,
    Int(i64),
    /// Never NaN: SQLite stores a NaN parameter as NULL.
    Real(f64),
    Text(Vec<u8>),
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
            "id", "id", "name", "", " ", "1", "0", "-1", "a\"b", "é", "日本", "😀", "a b",
            "count(*)", "x\\y", "\t", "key longer than forty bytes, as a long Lua string",
        ])
        .prop_map(String::from),
    ]
}

fn cell(faults: bool) -> impl Strategy<Value = Cell> {
    prop_oneof![
        2 => Just(Cell::Null),
        3 => int().prop_map(Cell::Int),
        3 => float(faults).prop_map(Cell::Real).prop_filter("NaN binds NULL", |c| {
            !matches!(c, Cell::Real(f) if f.is_nan())
        }),
        4 => bytes().prop_map(Cell::Text),
        1 => prop::collection::vec(any::<u8>(), 0..40).prop_map(Cell::Blob),
    ]
}

/// Up to 6 rows (2 or more are kept packed) of up to 6 columns, now and
/// then more than 16 (past the writer's inline buffers).
fn rows() -> impl Strategy<Value = Rows> {
    let names = prop_oneof![
        8 => prop::collection::vec(name(), 1..7),
        1 => prop::collection::vec(name(), 17..21),
    ];
    (names, prop::bool::weighted(0.1)).prop_flat_map(|(names, faults)| {
        let n = names.len();
        let rows = prop::collection::vec(prop::collection::vec(cell(faults), n..=n), 0..7);
        (Just(names), rows).prop_map(|(names, rows)| Rows { names, rows })
    })
}

/// Lua source setting `SQL`, `PARAMS`, `NAMES`, `NCOLS` and `VALS` (the
/// values row by row, nil for NULL) for `r`.
fn lua_case(r: &Rows) -> String {
    let mut sql = String::new();
    let mut params = Vec::new();
    let mut vals = String::from("{");
    let rows = if r.rows.is_empty() {
        // No rows, but the columns still have names.
        vec![vec![Cell::Null; r.names.len()]]
    } else {
        r.rows.clone()
    };
    for (i, row) in rows.iter().enumerate() {
        sql.push_str(if i == 0 {
            "SELECT "
        } else {
            " UNION ALL SELECT "
        });
        vals.push('{');
        for (c, cell) in row.iter().enumerate() {
            if c > 0 {
                sql.push_str(", ");
                vals.push_str(", ");
            }
            // Numbers and text go as parameters (bound exactly); NULL
            // and blobs as literals.
            let value = match cell {
                Cell::Null => {
                    sql.push_str("NULL");
                    "nil".to_string()
                }
                Cell::Blob(b) => {
                    sql.push_str("X'");
                    for byte in b {
                        let _ = write!(sql, "{byte:02X}");
                    }
                    sql.push('\'');
                    lua_string(b)
                }
                Cell::Int(n) => {
                    sql.push('?');
                    lua_int(*n)
                }
                Cell::Real(f) => {
                    sql.push('?');
                    lua_float(*f)
                }
                Cell::Text(t) => {
                    sql.push('?');
                    lua_string(t)
                }
            };
            if !matches!(cell, Cell::Null | Cell::Blob(_)) {
                params.push(value.clone());
            }
            vals.push_str(&value);
            if i == 0 {
                let _ = write!(sql, " AS \"{}\"", r.names[c].replace('"', "\"\""));
            }
        }
        vals.push_str("}, ");
    }
    vals.push('}');
    if r.rows.is_empty() {
        sql.push_str(" WHERE 0");
        vals = "{}".into();
    }
    let names: Vec<String> = r.names.iter().map(|n| lua_string(n.as_bytes())).collect();
    format!(
        "SQL = {}\nPARAMS = {{{}}}\nNAMES = {{{}}}\nNCOLS = {}\nVALS = {}\n",
        lua_string(sql.as_bytes()),
        params.join(", "),
        names.join(", "),
        r.names.len(),
        vals
    )
}

/// Runs the query several ways and returns, each as `ok, text`: the packed
/// result's JSON, the script-built rows' JSON, the reference's, a packed
/// result nested in a table and the script rows nested alike, then the
/// result's JSON once a script looked inside; and whether the row tables
/// equal the script-built ones.
const CHECK: &str = r#"
local function expected()
  local rows = {}
  for r, vals in ipairs(VALS) do
    local row = {}
    for c = 1, NCOLS do
      if vals[c] ~= nil then row[NAMES[c]] = vals[c] end
    end
    rows[r] = row
  end
  return rows
end

local function same(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b and math.type(a) == math.type(b) end
  for k, v in next, a do
    if not same(v, rawget(b, k)) then return false end
  end
  for k in next, b do
    if rawget(a, k) == nil then return false end
  end
  return true
end

local want = expected()
local out = {}
local function add(ok, text)
  out[#out + 1] = ok
  out[#out + 1] = text
end
add(REF.cove(db.query(SQL, PARAMS)))
add(REF.cove(want))
add(REF.encode(want))
add(REF.cove({ n = 1, rows = db.query(SQL, PARAMS), z = { db.query(SQL, PARAMS) } }))
add(REF.cove({ n = 1, rows = want, z = { want } }))
local rows = db.query(SQL, PARAMS)
local looked = #rows
add(REF.cove(rows))
out[#out + 1] = looked == #want and same(rows, want)
return table.unpack(out)
"#;

#[test]
fn query_results_match_rows_built_by_script() {
    let app = TestApp::load("app.get('/', function(req, res) res:text('') end)");
    let lua = app.lua();
    runner(256)
        .run(&rows(), |r| {
            let setup = lua_case(&r);
            lua.load(&setup)
                .exec()
                .unwrap_or_else(|e| panic!("{e}\n{setup}"));
            type Got = (bool, mlua::LuaString);
            let (packed, script, reference, nested, nested_script, unpacked, same): (
                Got,
                Got,
                Got,
                Got,
                Got,
                Got,
                bool,
            ) = {
                let v: mlua::MultiValue = lua
                    .load(CHECK)
                    .eval()
                    .unwrap_or_else(|e| panic!("{e}\n{setup}"));
                let v: Vec<mlua::Value> = v.into_iter().collect();
                let pair = |i: usize| -> Got {
                    (
                        v[2 * i].as_boolean().expect("ok"),
                        v[2 * i + 1].as_string().expect("text").clone(),
                    )
                };
                (
                    pair(0),
                    pair(1),
                    pair(2),
                    pair(3),
                    pair(4),
                    pair(5),
                    v[12].as_boolean().expect("same"),
                )
            };
            let show = |g: &Got| (g.0, String::from_utf8_lossy(&g.1.as_bytes()).into_owned());
            // The packed writer, the stack walker over script rows and
            // over the unpacked rows: the same bytes (one float formatter).
            prop_assert_eq!(show(&packed), show(&script), "{}", setup);
            prop_assert_eq!(show(&unpacked), show(&script), "{}", setup);
            prop_assert_eq!(show(&nested), show(&nested_script), "{}", setup);
            prop_assert!(same, "row tables differ from the script's\n{}", setup);
            prop_assert_eq!(script.0, reference.0, "{}", setup);
            if script.0 {
                prop_assert_eq!(
                    canonical(&script.1.as_bytes(), "json.encode"),
                    canonical(&reference.1.as_bytes(), "the reference")
                );
            }
            Ok(())
        })
        .unwrap();
}
