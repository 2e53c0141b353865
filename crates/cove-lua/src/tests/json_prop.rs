//! `json.encode` and `res:json` (raw/json.rs's walk over the Lua stack, the
//! objects of scalars raw/layout.rs reads straight from a table's hash part)
//! against the plain-Lua reference in reference.lua.

use mlua::Lua;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::canonical::canonical;
use super::support::{runner, TestApp};
use super::values::{node, to_lua, LIAR};

const APP: &str = r#"
app.get("/json", function(req, res) res:json(CASE) end)
"#;

fn app() -> TestApp {
    let app = TestApp::load(APP);
    app.lua().load(LIAR).exec().expect("LIAR");
    app
}

/// What Cove's `json.encode` and the reference make of the value `expr`
/// builds: `(ok, text or error kind)` each.
fn both(lua: &Lua, expr: &str) -> ((bool, Vec<u8>), (bool, Vec<u8>)) {
    let src = format!(
        "local v = {expr}\nlocal a, b = REF.cove(v)\nlocal c, d = REF.encode(v)\nreturn a, b, c, d"
    );
    let (a, b, c, d): (bool, mlua::LuaString, bool, mlua::LuaString) = lua
        .load(src)
        .eval()
        .unwrap_or_else(|e| panic!("{e}\n{expr}"));
    ((a, b.as_bytes().to_vec()), (c, d.as_bytes().to_vec()))
}

/// Cove and the reference agree: the same JSON value with keys in the same
/// order, or the same kind of error.
fn agree(cove: &(bool, Vec<u8>), reference: &(bool, Vec<u8>)) -> Result<(), TestCaseError> {
    let show = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match (cove.0, reference.0) {
        (true, true) => prop_assert_eq!(
            canonical(&cove.1, "json.encode"),
            canonical(&reference.1, "the reference")
        ),
        (false, false) => prop_assert_eq!(show(&cove.1), show(&reference.1)),
        _ => prop_assert!(
            false,
            "cove: {} {}, reference: {} {}",
            cove.0,
            show(&cove.1),
            reference.0,
            show(&reference.1)
        ),
    }
    Ok(())
}

#[test]
fn json_encode_matches_the_reference_encoder() {
    let app = app();
    let lua = app.lua();
    runner(256)
        .run(&node(), |n| {
            let expr = to_lua(&n);
            let (cove, reference) = both(lua, &expr);
            agree(&cove, &reference)?;
            // The encoder keeps scratch buffers between calls: a second
            // encoding of the same value is the same text.
            let (again, _) = both(lua, &expr);
            prop_assert_eq!(cove, again);
            Ok(())
        })
        .unwrap();
}

/// `res:json` (a Lua C function in a handler's coroutine) writes the body
/// `json.encode` returns, or fails the request when it fails.
#[test]
fn res_json_sends_what_json_encode_returns() {
    let app = app();
    let lua = app.lua();
    runner(64)
        .run(&node(), |n| {
            let expr = to_lua(&n);
            let (ok, text): (bool, mlua::LuaString) = lua
                .load(format!("CASE = {expr}\nreturn REF.cove(CASE)"))
                .eval()
                .unwrap();
            let reply = app.get("/json");
            if ok {
                prop_assert_eq!(reply.status, 200, "{:?}", reply.errors);
                prop_assert_eq!(&reply.body[..], &text.as_bytes()[..]);
            } else {
                prop_assert_eq!(reply.status, 500);
            }
            Ok(())
        })
        .unwrap();
}

/// The depth limit, reached through objects of scalars (read from the
/// table), objects of tables and arrays: 128 levels encode, 129 do not.
#[test]
fn nesting_up_to_the_limit_matches_the_reference() {
    let app = app();
    // Each leaf with the table levels it has itself.
    let leaves = [
        ("{ a = 1, b = 'x' }", 1),
        ("{ a = {} }", 2),
        ("{ 1, 2 }", 1),
        ("1", 0),
    ];
    let wraps = ["{ v = v }", "{ v }", "{ k = v, z = 1 }"];
    for (leaf, own) in leaves {
        for wrap in wraps {
            for depth in [127, 128, 129] {
                let expr = format!(
                    "(function() local v = {leaf} for _ = 1, {} do v = {wrap} end return v end)()",
                    depth - own
                );
                let (cove, reference) = both(app.lua(), &expr);
                let at = format!("{leaf} in {wrap} at {depth}");
                agree(&cove, &reference).unwrap_or_else(|e| panic!("{at}: {e}"));
                assert_eq!(cove.0, depth <= 128, "{at}");
            }
        }
    }
}

/// Found by the property above: `len` is a border, so the keys of
/// `{nil, false, false, false}` plus `t[6]` count 4 as `#t` is 4, and the
/// table was written `[null,false,false,false]`, dropping `t[6]`.
#[test]
fn r38_a_key_past_the_border_is_a_hole() {
    let app = app();
    let holey = "(function() local t = { nil, false, false, false } t[6] = false return t end)()";
    let (cove, reference) = both(app.lua(), holey);
    assert_eq!(cove, (false, b"SparseArray".to_vec()));
    assert_eq!(reference, cove);
}
