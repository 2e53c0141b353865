//! types/lua/: a LuaLS library (`---@meta`). `globals.lua` declares the
//! globals (`app`, `db`, `time`, …) and the named types; each module Lua
//! reaches with `require` gets its own file at the path `require` names
//! (`hull/kv.lua` for `require("hull.kv")`), which is how LuaLS resolves it.

use std::fmt::Write;

use super::{in_lang, object_name, public, Generated};
use crate::api::{modules, Call, Lang, Module, Param, Sig, Ty, TypeDef};

const HEADER: &str = "-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;\n-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.\n";

pub(super) fn library() -> Vec<Generated> {
    let mut globals = format!("---@meta\n{HEADER}\n");
    for t in modules().iter().flat_map(|m| m.types) {
        if super::callback(t) {
            let _ = writeln!(
                globals,
                "---{}\n---@alias hull.{} fun(req: hull.Request, res: hull.Response): any\n",
                t.doc, t.name
            );
        } else {
            class(&mut globals, t);
        }
    }
    let mut files = Vec::new();
    for m in public() {
        if let Some(g) = m.lua_global {
            module_table(&mut globals, m, g, "");
        }
        if let Some(r) = m.lua_require {
            let mut s = format!("---@meta {r}\n{HEADER}\n");
            let name = object_name(m);
            if m.lua_global.is_some() {
                let _ = writeln!(s, "return {name}");
            } else {
                module_table(&mut s, m, name, "local ");
                let _ = writeln!(s, "return {name}");
            }
            files.push(Generated {
                path: format!("types/lua/{}.lua", r.replace('.', "/")),
                text: s,
            });
        }
    }
    // Cove's one addition to a Lua library (crates/cove-lua/src/error.rs).
    globals.push_str(
        "---The code of a Cove capability error caught by `pcall` (`\"db.constraint\"`), or nil for any other string\n\
         ---@param s string\n---@return string?\nfunction string.code(s) end\n",
    );
    files.insert(
        0,
        Generated {
            path: "types/lua/globals.lua".into(),
            text: globals,
        },
    );
    files
}

/// `---@class hull.<name>` and `<local> <name> = {}` with its functions.
fn module_table(s: &mut String, m: &Module, name: &str, local: &str) {
    let class = format!("hull.{}", super::flat_name(m, "."));
    let _ = writeln!(s, "---{}\n---@class {class}", m.doc);
    // The entry named like the object (`test`) is its call signature.
    for sig in in_lang(m, Lang::Lua).filter(|s| s.lua == Some(name)) {
        let ps: Vec<String> = sig
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name, lua(p.ty)))
            .collect();
        let _ = writeln!(s, "---@overload fun({})", ps.join(", "));
    }
    let _ = writeln!(s, "{local}{name} = {{}}\n");
    for sig in in_lang(m, Lang::Lua).filter(|s| s.lua != Some(name)) {
        function(s, name, sig);
    }
}

fn class(s: &mut String, t: &TypeDef) {
    let _ = writeln!(s, "---{}\n---@class hull.{}", t.doc, t.name);
    for f in t.fields {
        let q = if f.optional { "?" } else { "" };
        let _ = writeln!(s, "---@field {}{q} {} {}", f.name, lua(f.ty), f.doc);
    }
    let var = format!("Hull{}", t.name);
    let _ = writeln!(s, "local {var} = {{}}\n");
    for sig in t.methods.iter().filter(|m| m.lua.is_some()) {
        function(s, &var, sig);
    }
}

fn function(s: &mut String, object: &str, sig: &Sig) {
    let name = sig.lua.unwrap_or_default();
    let _ = writeln!(s, "---{}", sig.doc);
    for p in sig.params {
        let q = if p.optional { "?" } else { "" };
        let pname = if p.name == "..." { "..." } else { p.name };
        let _ = writeln!(s, "---@param {pname}{q} {}", lua(p.ty));
    }
    match sig.ret {
        Ty::Nil => {}
        Ty::Named("KeyPair") => {
            s.push_str("---@return string public_key\n---@return string secret_key\n")
        }
        t => {
            let _ = writeln!(s, "---@return {}", lua(t));
        }
    }
    let sep = if sig.call == Call::Method { ":" } else { "." };
    let _ = writeln!(
        s,
        "function {object}{sep}{name}({}) end\n",
        names(sig.params)
    );
}

fn names(ps: &[Param]) -> String {
    ps.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

fn lua(ty: Ty) -> String {
    match ty {
        Ty::Str | Ty::Bytes => "string".into(),
        Ty::Int => "integer".into(),
        Ty::Num => "number".into(),
        Ty::Bool => "boolean".into(),
        Ty::Nil => "nil".into(),
        Ty::Any => "any".into(),
        Ty::Record => "table<string, any>".into(),
        Ty::Fn => "function".into(),
        Ty::List(t) => format!("{}[]", lua(*t)),
        Ty::Opt(t @ Ty::Union(_)) => format!("({})?", lua(*t)),
        Ty::Opt(t) => format!("{}?", lua(*t)),
        Ty::Union(ts) => ts.iter().map(|t| lua(*t)).collect::<Vec<_>>().join("|"),
        Ty::Named(n) => format!("hull.{n}"),
        Ty::Promise(t) => lua(*t),
        Ty::Literal(ls) => ls
            .iter()
            .map(|l| format!("\"{l}\""))
            .collect::<Vec<_>>()
            .join("|"),
    }
}
