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
            tables::metrics(),
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

/// How the stdlib files embedded for `lang` (their `require` names or
/// specifiers) differ from the catalog's stdlib modules, private ones
/// included; empty when they agree. Each runtime's tests call it, so a file
/// added without a declaration (or the reverse) fails there.
pub fn stdlib_mismatches<'a>(
    lang: super::Lang,
    files: impl Iterator<Item = &'a str>,
) -> Vec<String> {
    let name = |m: &Module| match lang {
        super::Lang::Lua => m.lua_require,
        super::Lang::Js => Some(m.js),
    };
    let declared: Vec<&str> = modules()
        .iter()
        .filter(|m| !m.native)
        .filter_map(name)
        .collect();
    let files: Vec<&str> = files.collect();
    let mut wrong: Vec<String> = files
        .iter()
        .filter(|f| !declared.contains(f))
        .map(|f| format!("{f}: a stdlib file the catalog does not declare"))
        .collect();
    wrong.extend(
        declared
            .iter()
            .filter(|d| !files.contains(d))
            .map(|d| format!("{d}: declared in the catalog, no stdlib file")),
    );
    wrong
}
