//! Hull's `require` (§2.2): embedded stdlib modules by name, and `./x` /
//! `./x.json` files resolved from the requiring module, confined to the app
//! directory.

use mlua::{Lua, Table, Value};

use crate::app_api::AppState;
use crate::error::chunk_of;
use crate::globals::{fail, Outcome};
use crate::json;
use cove_core::clean_relative;

const MAX_MODULE: u64 = 10 * 1024 * 1024;

// Embedded Lua stdlib modules: `STDLIB`, (name, source) for every file
// under stdlib/lua (listed by build.rs).
include!(concat!(env!("OUT_DIR"), "/stdlib.rs"));

/// Chunk-name prefix of stdlib modules. App files load as `@path`, and app
/// code cannot name chunks (`load` is removed), so this marks stdlib code.
pub(crate) const STDLIB_CHUNK: &str = "=hull.";

pub(crate) fn require_fn(lua: &Lua, cache: Table) -> mlua::Result<mlua::Function> {
    lua.create_function(move |lua, name: String| {
        // Before the cache: a stdlib module may have loaded it already.
        let private = name.starts_with(PRIVATE_PREFIX) && !required_by_stdlib(lua);
        if let Some(v) = cache.raw_get::<Option<Value>>(name.as_str())? {
            if !private {
                return Ok((true, v));
            }
        }
        if let Some((_, src)) = STDLIB.iter().find(|(n, _)| *n == name && !private) {
            let v = run_stdlib(lua, src.as_bytes(), &name)?;
            cache.raw_set(name.as_str(), v.clone())?;
            return Ok((true, v));
        }
        if let Some(v) = native_module(lua, &name)? {
            cache.raw_set(name.as_str(), v.clone())?;
            return Ok((true, v));
        }
        if !(name.starts_with('.') || name.contains('/')) {
            let hint = cove_core::hint(&name, module_names(), "Cove's modules");
            return fail(lua, format!("module not found: {name}{hint}"));
        }
        load_file(lua, &cache, &name)
    })
}

/// Stdlib modules only the stdlib may require: their db calls run with its
/// right to the reserved tables, which an app must not borrow through them.
const PRIVATE_PREFIX: &str = "hull._";

/// Whether the chunk calling `require` (level 2: 0 is this function, 1 the
/// prelude's wrapper) is a stdlib module.
fn required_by_stdlib(lua: &Lua) -> bool {
    lua.inspect_stack(2, |d| {
        d.source()
            .source
            .is_some_and(|s| s.starts_with(STDLIB_CHUNK))
    })
    .unwrap_or(false)
}

/// Every module an app may `require` by name: the catalog's
/// (crates/cove-caps/src/api), which the stdlib files and
/// [`native_module`] must match (tests below and tests/api_catalog.rs).
fn module_names() -> impl Iterator<Item = &'static str> {
    cove_caps::api::modules()
        .iter()
        .filter(|m| !m.private)
        .filter_map(|m| m.lua_require)
}

/// Modules implemented in Rust, by name.
fn native_module(lua: &Lua, name: &str) -> mlua::Result<Option<Value>> {
    Ok(Some(match name {
        crate::template::MODULE => crate::template::module(lua)?,
        "hull.json" => lua.globals().raw_get("json")?,
        _ => match crate::caps::required(lua, name)? {
            Some(t) => Value::Table(t),
            None => return Ok(None),
        },
    }))
}

fn load_file(lua: &Lua, cache: &Table, name: &str) -> mlua::Result<Outcome> {
    let files = match lua.app_data_ref::<AppState>() {
        Some(st) => st.files.clone(),
        None => return fail(lua, "require: no app directory"),
    };
    // Level 0 is this function, 1 the prelude wrapper, 2 the requiring chunk.
    let from = chunk_of(lua, 2).unwrap_or_default();
    let from_dir = from.rsplit_once('/').map_or("", |(d, _)| d);
    let mut rel_name = name.to_string();
    if !(rel_name.ends_with(".lua") || rel_name.ends_with(".json")) {
        rel_name.push_str(".lua");
    }
    let joined = if from_dir.is_empty() || name.starts_with('/') {
        rel_name
    } else {
        format!("{from_dir}/{rel_name}")
    };
    let Some(key) = clean_relative(&joined) else {
        return fail(
            lua,
            format!("require: {name}: path leaves the app directory"),
        );
    };
    if let Some(v) = cache.raw_get::<Option<Value>>(key.as_str())? {
        return Ok((true, v));
    }
    match files.len(&key) {
        Ok(len) if len > MAX_MODULE => {
            return fail(lua, format!("require: {key} is larger than 10 MiB"))
        }
        Ok(_) => {}
        Err(_) => return fail(lua, format!("module not found: {name} (looked for {key})")),
    }
    let source = match files.read(&key) {
        Ok(s) => s.into_owned(),
        Err(e) => return fail(lua, format!("require: cannot read {key}: {e}")),
    };
    let value = if key.ends_with(".json") {
        match json::decode(lua, &source) {
            Ok(v) => v,
            Err(e) => return fail(lua, format!("require: {key}: invalid JSON: {e}")),
        }
    } else {
        run_module(lua, &source, &format!("@{key}"), name)?
    };
    cache.raw_set(key.as_str(), value.clone())?;
    Ok((true, value))
}

/// Run a module chunk; a module returning nothing is cached as `true`.
/// Run a stdlib module in the stdlib's environment: the globals, but a `db`
/// whose statements run with the stdlib's right to the reserved tables
/// (`_hull_*`). An app's `db` never has it; which one a call goes through is
/// settled here, when the module loads, not by looking at the caller of
/// each query. Assignments to globals still reach the globals.
fn run_stdlib(lua: &Lua, source: &[u8], name: &str) -> mlua::Result<Value> {
    let env = stdlib_env(lua)?;
    let v: Value = lua
        .load(source)
        .set_name(format!("={name}"))
        .set_environment(env)
        .call(name)?;
    Ok(if v.is_nil() { Value::Boolean(true) } else { v })
}

/// The stdlib's environment, made once per VM.
fn stdlib_env(lua: &Lua) -> mlua::Result<Table> {
    const KEY: &str = "cove.stdlib_env";
    if let Ok(env) = lua.named_registry_value::<Table>(KEY) {
        return Ok(env);
    }
    let globals = lua.globals();
    let app_db: Table = globals.raw_get("db")?;
    // The table's db functions of its own; batch and dialect are the app's.
    let db = crate::caps::module_as(lua, "hull:db", cove_db::Origin::Stdlib)?;
    let db_meta = lua.create_table()?;
    db_meta.raw_set("__index", app_db)?;
    db.set_metatable(Some(db_meta))?;
    let env = lua.create_table()?;
    env.raw_set("db", db)?;
    let meta = lua.create_table()?;
    meta.raw_set("__index", globals.clone())?;
    meta.raw_set("__newindex", globals)?;
    env.set_metatable(Some(meta))?;
    lua.set_named_registry_value(KEY, &env)?;
    Ok(env)
}

fn run_module(lua: &Lua, source: &[u8], chunk: &str, name: &str) -> mlua::Result<Value> {
    let v: Value = lua.load(source).set_name(chunk).call(name)?;
    Ok(if v.is_nil() { Value::Boolean(true) } else { v })
}

#[cfg(test)]
mod catalog_tests {
    use super::*;

    /// The embedded stdlib files are the catalog's stdlib modules, and the
    /// private ones are the catalog's private ones.
    #[test]
    fn every_stdlib_file_is_a_catalog_module() {
        let wrong = cove_caps::api::stdlib_mismatches(
            cove_caps::api::Lang::Lua,
            STDLIB.iter().map(|(n, _)| *n),
        );
        assert!(wrong.is_empty(), "{wrong:#?}");
        for (name, _) in STDLIB {
            let private = cove_caps::api::module_by_lua(name).is_some_and(|m| m.private);
            assert_eq!(private, name.starts_with(PRIVATE_PREFIX), "{name}");
        }
    }
}
