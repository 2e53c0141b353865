//! The files generated from the catalog: the reference pages (docs/api/),
//! the TypeScript declarations (types/hull.d.ts) and the LuaLS annotations
//! (types/lua/). `cove new` and `cove types` write the editor ones into an
//! app's `.cove/types/`; the repository keeps committed copies, and
//! crates/cove-caps/tests/generated.rs fails when they are stale
//! (`COVE_BLESS=1` rewrites them).

mod luals;
mod markdown;
mod typescript;

use super::{modules, Lang, Module, Sig, Ty, TypeDef};

/// A generated file: its path (relative to the repository root, or to an
/// app's `.cove/` for the editor types) and contents.
pub struct Generated {
    pub path: String,
    pub text: String,
}

/// Every file committed in the repository.
pub fn committed() -> Vec<Generated> {
    let mut all = markdown::pages();
    all.extend(editor_types());
    all
}

/// The editor types, with paths under `types/`: `hull.d.ts` and the LuaLS
/// library `lua/…`.
pub fn editor_types() -> Vec<Generated> {
    let mut all = vec![Generated {
        path: "types/hull.d.ts".into(),
        text: typescript::declarations(),
    }];
    all.extend(luals::library());
    all
}

/// The modules an app can use (not the stdlib's private ones).
fn public() -> impl Iterator<Item = &'static Module> {
    modules().iter().filter(|m| !m.private)
}

/// The name the module's object goes by: the JS export, the Lua local.
fn object_name(m: &Module) -> &'static str {
    m.object_name()
}

/// The module's name as a file or class name (`middleware-session`).
fn flat_name(m: &Module, sep: &str) -> String {
    m.title().replace([':', '/'], sep)
}

/// The functions of `m` that exist in `lang`.
fn in_lang(m: &Module, lang: Lang) -> impl Iterator<Item = &Sig> {
    m.functions.iter().filter(move |s| s.name(lang).is_some())
}

/// The callbacks an app passes (`Handler`, `Middleware`): function types,
/// not objects.
fn callback(t: &TypeDef) -> bool {
    matches!(t.name, "Handler" | "Middleware")
}

/// What a handler calls an object of type `t` (`req`, `res`).
fn var_name(t: &TypeDef) -> String {
    match t.name {
        "Request" => "req".into(),
        "Response" => "res".into(),
        n => n.to_lowercase(),
    }
}

/// A type in the words of the docs (the same for both languages).
fn plain(ty: Ty) -> String {
    match ty {
        Ty::Str => "string".into(),
        Ty::Int => "integer".into(),
        Ty::Num => "number".into(),
        Ty::Bool => "boolean".into(),
        Ty::Bytes => "bytes".into(),
        Ty::Nil => "nothing".into(),
        Ty::Any => "any".into(),
        Ty::Record => "table/object".into(),
        Ty::Fn => "function".into(),
        Ty::List(t) => format!("list of {}", plain(*t)),
        Ty::Opt(t) => format!("{} or nil/null", plain(*t)),
        Ty::Union(ts) => ts
            .iter()
            .map(|t| plain(*t))
            .collect::<Vec<_>>()
            .join(" or "),
        Ty::Named(n) => n.to_string(),
        Ty::Promise(t) => format!("Promise of {}", plain(*t)),
        Ty::Literal(ls) => ls
            .iter()
            .map(|l| format!("\"{l}\""))
            .collect::<Vec<_>>()
            .join(" | "),
    }
}
