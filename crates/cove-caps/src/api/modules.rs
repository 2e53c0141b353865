//! Every module, in the order the docs list them.

use std::sync::OnceLock;

use super::{app, data, io, stdlib, tables, test, Module};

/// Every module a script can reach: the native ones (their functions
/// listed), then `test`, then the stdlib modules.
pub fn modules() -> &'static [Module] {
    static ALL: OnceLock<Vec<Module>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = vec![
            app::module(),
            data::db(),
            data::json(),
            io::time(),
            io::env(),
            io::log(),
        ];
        all.extend([
            tables::crypto(),
            io::template(),
            tables::kv(),
            tables::http(),
            io::smtp(),
        ]);
        all.push(test::module());
        all.extend(stdlib::modules());
        all
    })
}

/// The module a JS specifier names (`hull:time`).
pub fn module_by_js(spec: &str) -> Option<&'static Module> {
    modules().iter().find(|m| m.js == spec)
}

/// The module a Lua `require` name names (`hull.kv`).
pub fn module_by_lua(name: &str) -> Option<&'static Module> {
    modules().iter().find(|m| m.lua_require == Some(name))
}
