//! The script API, declared once: every module a script can reach, every
//! function in it with its Lua and JS names, parameters, result, whether it
//! suspends the script, and a one-line doc. Module resolution in both
//! runtimes reads [`modules`]; the reference pages (docs/api/), the
//! TypeScript declarations (types/hull.d.ts) and the LuaLS annotations
//! (types/hull.lua) are generated from it (`render`), and a test fails when
//! the committed copies are stale or a runtime exposes a function the
//! catalog does not declare (crates/cove/tests/api_catalog.rs).
//!
//! Capabilities bound by a loop (crypto, kv, http; see [`crate::cap`]) carry
//! their signatures in their own tables; the rest are declared in this
//! module's files, and `cap`'s tests check that every function of its table
//! is declared here under the same names.

mod app;
mod data;
mod io;
mod modules;
pub mod render;
mod stdlib;
mod tables;
mod test;
mod types;

pub use crate::sig::{opt, p, Param, Ty};
pub use modules::{module_by_js, module_by_lua, modules, stdlib_mismatches};

/// How a script calls a function of a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `module.name(...)` in both languages.
    Function,
    /// On an object: Lua `obj:name(...)`, JS `obj.name(...)`.
    Method,
}

/// One script-facing function.
#[derive(Debug, Clone, Copy)]
pub struct Sig {
    /// Its Lua name; `None`: JS only.
    pub lua: Option<&'static str>,
    /// Its JS name; `None`: Lua only.
    pub js: Option<&'static str>,
    pub call: Call,
    pub params: &'static [Param],
    /// What it returns (in Lua, for a JS-only function: in JS).
    pub ret: Ty,
    /// What JS returns where it differs from Lua (`Promise`s, objects for
    /// Lua's multiple results).
    pub js_ret: Option<Ty>,
    /// It waits on the network or the database: Lua suspends the handler's
    /// coroutine, JS offers a promise form.
    pub slow: bool,
    pub doc: &'static str,
}

impl Sig {
    /// A function with the same name in both languages.
    pub const fn both(
        name: &'static str,
        params: &'static [Param],
        ret: Ty,
        doc: &'static str,
    ) -> Sig {
        Sig {
            lua: Some(name),
            js: Some(name),
            call: Call::Function,
            params,
            ret,
            js_ret: None,
            slow: false,
            doc,
        }
    }

    /// Lua and JS names differ (`hash_password` / `hashPassword`).
    pub const fn named(
        lua: &'static str,
        js: &'static str,
        params: &'static [Param],
        ret: Ty,
        doc: &'static str,
    ) -> Sig {
        Sig {
            lua: Some(lua),
            js: Some(js),
            ..Sig::both("", params, ret, doc)
        }
    }

    /// Only in Lua.
    pub const fn lua_only(
        name: &'static str,
        params: &'static [Param],
        ret: Ty,
        doc: &'static str,
    ) -> Sig {
        Sig {
            js: None,
            ..Sig::both(name, params, ret, doc)
        }
    }

    /// Only in JS.
    pub const fn js_only(
        name: &'static str,
        params: &'static [Param],
        ret: Ty,
        doc: &'static str,
    ) -> Sig {
        Sig {
            lua: None,
            ..Sig::both(name, params, ret, doc)
        }
    }

    /// A method (`res:json(v)` / `res.json(v)`).
    pub const fn method(self) -> Sig {
        Sig {
            call: Call::Method,
            ..self
        }
    }

    /// It waits on the network or the database.
    pub const fn slow(self) -> Sig {
        Sig { slow: true, ..self }
    }

    /// JS returns `ret` instead.
    pub const fn js_returns(self, ret: Ty) -> Sig {
        Sig {
            js_ret: Some(ret),
            ..self
        }
    }

    /// The name in `lang`.
    pub fn name(&self, lang: Lang) -> Option<&'static str> {
        match lang {
            Lang::Lua => self.lua,
            Lang::Js => self.js,
        }
    }

    /// The result type in `lang`.
    pub fn returns(&self, lang: Lang) -> Ty {
        match lang {
            Lang::Js => self.js_ret.unwrap_or(self.ret),
            Lang::Lua => self.ret,
        }
    }
}

/// A script language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Lua,
    Js,
}

/// Where a module lives in each language.
#[derive(Debug, Clone)]
pub struct Module {
    /// The JS specifier (`hull:time`).
    pub js: &'static str,
    /// The Lua global it is also reachable as (`time`), if any.
    pub lua_global: Option<&'static str>,
    /// The Lua `require` name (`hull.kv`), if it can be required.
    pub lua_require: Option<&'static str>,
    /// Implemented in Rust (its functions are listed), or a stdlib module
    /// written in each script language (docs/api.md describes those).
    pub native: bool,
    /// Only stdlib modules may import it (`hull:_tables`).
    pub private: bool,
    /// JS imports it as the module's default export (`import email from
    /// "hull:email"`), not by name.
    pub default_export: bool,
    pub doc: &'static str,
    /// Its functions; for the object a module hands out (`req`, `res`),
    /// its methods.
    pub functions: Vec<Sig>,
    /// Named types its functions use, declared with it.
    pub types: &'static [types::TypeDef],
}

impl Module {
    /// Its name without the `hull:` prefix (`middleware:session`).
    pub fn title(&self) -> &'static str {
        self.js.strip_prefix("hull:").unwrap_or(self.js)
    }

    /// The name its object goes by: the Lua global, else the last part of
    /// its name (`session` for `hull:middleware:session`), which is also
    /// the JS export.
    pub fn object_name(&self) -> &'static str {
        self.lua_global.unwrap_or_else(|| {
            self.title()
                .rsplit([':', '/'])
                .next()
                .unwrap_or(self.title())
        })
    }
}

pub use types::{Field, TypeDef};
