//! A sandboxed Lua 5.4 state (Hull §2.2): safe standard libraries only,
//! `print` to stderr, a per-call instruction budget and a heap cap.

use std::io::Write;
use std::rc::Rc;

use mlua::{Lua, LuaOptions, StdLib, Value, Variadic};

pub(crate) use crate::raw::budget::Budget;

use cove_core::Limits;

/// Create the state with Hull's library set and Cove's guards installed.
pub(crate) fn new_state(limits: &Limits) -> mlua::Result<(Lua, Rc<Budget>)> {
    let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::UTF8 | StdLib::COROUTINE;
    let lua = Lua::new_with(libs, LuaOptions::new())?;
    lua.set_memory_limit(limits.max_heap)?;
    // Request garbage dies young: the generational collector does less
    // work per request than the incremental one (measured with callgrind).
    lua.gc_set_mode(mlua::prelude::LuaGcMode::Generational(
        mlua::prelude::LuaGcGenParams::default(),
    ));
    let g = lua.globals();
    for name in ["load", "loadfile", "dofile", "require"] {
        g.raw_set(name, Value::Nil)?;
    }
    let string: mlua::Table = g.raw_get("string")?;
    string.raw_set("dump", Value::Nil)?;
    g.raw_set("print", lua.create_function(print)?)?;

    crate::raw::layout::probe(&lua)?;
    let budget = Rc::new(Budget::install(&lua, limits.max_instructions)?);
    Ok((lua, budget))
}

/// Run `f` with the heap cap lifted. mlua guards every Rust-side table and
/// string operation with a Lua `pcall` while a cap is set, which made
/// building a request table cost ~20k instructions. Rust code that builds
/// Lua values runs here instead and is checked against the cap afterwards;
/// script code always runs under the cap.
pub(crate) fn unlimited<R>(lua: &Lua, f: impl FnOnce() -> mlua::Result<R>) -> mlua::Result<R> {
    let limit = lua.set_memory_limit(0)?;
    let result = f();
    lua.set_memory_limit(limit)?;
    if limit != 0 && lua.used_memory() > limit {
        lua.gc_collect()?;
        if lua.used_memory() > limit {
            return Err(mlua::Error::MemoryError(cove_core::OUT_OF_HEAP.into()));
        }
    }
    result
}

/// `over_budget()`: raises once the budget is spent, so a `pcall` cannot
/// swallow the limit and keep looping.
pub(crate) fn over_budget_fn(lua: &Lua, budget: Rc<Budget>) -> mlua::Result<mlua::Function> {
    lua.create_function(move |_, ()| {
        if budget.exceeded.get() {
            Err(budget.error(None))
        } else {
            Ok(())
        }
    })
}

fn print(_: &Lua, args: Variadic<Value>) -> mlua::Result<()> {
    let mut line = Vec::new();
    for (i, v) in args.iter().enumerate() {
        if i > 0 {
            line.push(b'\t');
        }
        match v {
            Value::String(s) => line.extend_from_slice(&s.as_bytes()),
            other => line.extend_from_slice(other.to_string()?.as_bytes()),
        }
    }
    line.push(b'\n');
    let _ = std::io::stderr().lock().write_all(&line);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(max_instructions: u64) -> (Lua, Rc<Budget>) {
        let limits = Limits {
            max_instructions,
            ..Limits::default()
        };
        new_state(&limits).unwrap()
    }

    #[test]
    fn unsafe_globals_are_gone() {
        let (lua, _) = state(1_000_000);
        let missing: bool = lua
            .load("return io == nil and os == nil and load == nil and dofile == nil and loadfile == nil and debug == nil and package == nil and string.dump == nil")
            .eval()
            .unwrap();
        assert!(missing);
        let present: bool = lua
            .load("return type(string.format) == 'function' and type(coroutine.wrap) == 'function' and type(utf8.char) == 'function' and math.type(1) == 'integer'")
            .eval()
            .unwrap();
        assert!(present);
    }

    #[test]
    fn budget_stops_an_infinite_loop() {
        let (lua, budget) = state(100_000);
        let err = budget.run(|| {
            lua.load("while true do end")
                .set_name("@app.lua")
                .exec()
                .unwrap_err()
        });
        assert!(
            err.to_string().contains("instruction limit exceeded"),
            "{err}"
        );
        budget.run(|| {
            lua.load("local x = 0 for i = 1, 1000 do x = x + i end")
                .exec()
                .unwrap()
        });
    }
}
