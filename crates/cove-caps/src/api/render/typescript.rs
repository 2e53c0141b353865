//! types/hull.d.ts: a `declare module` per `hull:*` module, and the named
//! types in a global `Hull` namespace that every module refers to.

use std::fmt::Write;

use super::{in_lang, object_name, public};
use crate::api::{modules, Lang, Param, Sig, Ty, TypeDef};

/// The class capabilities throw (crates/cove-js/src/prelude.js): a global,
/// not a module's.
const COVE_ERROR: &str = "
/** What Cove's capabilities throw when they fail: `code` names the failure (`db.reserved`, `kv.unavailable`, …; docs/api.md). */
declare class CoveError extends Error {
  constructor(message: string, code: string);
  code: string;
}
";

pub(super) fn declarations() -> String {
    let mut s = String::from(
        "// Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;\n\
         // do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.\n\n\
         declare namespace Hull {\n",
    );
    for t in modules().iter().flat_map(|m| m.types) {
        if super::callback(t) {
            let _ = writeln!(
                s,
                "  /** {} */\n  type {} = (req: Hull.Request, res: Hull.Response) => unknown;",
                t.doc, t.name
            );
        } else {
            interface(&mut s, t);
        }
    }
    s.push_str("}\n");
    s.push_str(COVE_ERROR);
    for m in public() {
        if !m.js.starts_with("hull:") {
            continue;
        }
        let name = object_name(m);
        let _ = writeln!(s, "\ndeclare module \"{}\" {{", m.js);
        let _ = writeln!(s, "  /** {} */", m.doc);
        let export = if m.default_export { "" } else { "export " };
        let _ = writeln!(s, "  {export}const {name}: {{");
        for sig in in_lang(m, Lang::Js) {
            member(&mut s, sig, "    ", name);
        }
        s.push_str("  };\n");
        if m.default_export {
            let _ = writeln!(s, "  export default {name};");
        }
        s.push_str("}\n");
    }
    // Globals that are not modules (the test API in test files).
    for m in public().filter(|m| !m.js.starts_with("hull:")) {
        let name = object_name(m);
        let _ = writeln!(s, "\n/** {} */\ndeclare const {name}: {{", m.doc);
        for sig in in_lang(m, Lang::Js) {
            member(&mut s, sig, "  ", name);
        }
        s.push_str("};\n");
    }
    s
}

fn interface(s: &mut String, t: &TypeDef) {
    let _ = writeln!(s, "  /** {} */\n  interface {} {{", t.doc, t.name);
    if t.fields.is_empty() && t.methods.is_empty() {
        // No fields declared: an open record (a row's columns).
        s.push_str("    [name: string]: any;\n");
    }
    for f in t.fields {
        let q = if f.optional { "?" } else { "" };
        let _ = writeln!(s, "    /** {} */\n    {}{q}: {};", f.doc, f.name, ts(f.ty));
    }
    for sig in t.methods.iter().filter(|m| m.js.is_some()) {
        member(s, sig, "    ", "");
    }
    s.push_str("  }\n");
}

/// A member; the one named like its object (`test`) is the object's call
/// signature.
fn member(s: &mut String, sig: &Sig, indent: &str, object: &str) {
    let name = sig.js.unwrap_or_default();
    let _ = writeln!(s, "{indent}/** {} */", sig.doc);
    let _ = writeln!(
        s,
        "{indent}{}({}): {};",
        if name == object {
            String::new()
        } else {
            key(name)
        },
        params(sig.params),
        returns(sig.returns(Lang::Js))
    );
}

/// A member name, quoted when it is not an identifier (`delete` is fine as
/// a property name; `a-b` is not).
fn key(name: &str) -> String {
    if name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
    {
        name.to_string()
    } else {
        format!("\"{name}\"")
    }
}

fn params(ps: &[Param]) -> String {
    ps.iter()
        .map(|p| {
            let q = if p.optional { "?" } else { "" };
            if p.name == "..." {
                return format!("...args: Array<{}>", ts(p.ty));
            }
            format!("{}{q}: {}", safe(p.name), ts(p.ty))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A parameter name that is not a reserved word.
fn safe(name: &str) -> String {
    match name {
        "function" | "default" | "new" | "delete" | "in" => format!("{name}_"),
        n => n.to_string(),
    }
}

fn returns(ty: Ty) -> String {
    match ty {
        Ty::Nil => "void".into(),
        t => ts(t),
    }
}

fn ts(ty: Ty) -> String {
    match ty {
        Ty::Str => "string".into(),
        Ty::Int | Ty::Num => "number".into(),
        Ty::Bool => "boolean".into(),
        Ty::Bytes => "ArrayBuffer | Uint8Array".into(),
        Ty::Nil => "undefined".into(),
        Ty::Any => "any".into(),
        Ty::Record => "Record<string, any>".into(),
        Ty::Fn => "(...args: any[]) => any".into(),
        Ty::List(t) => format!("Array<{}>", ts(*t)),
        Ty::Opt(t) => format!("{} | null", ts(*t)),
        Ty::Union(ts_) => ts_.iter().map(|t| ts(*t)).collect::<Vec<_>>().join(" | "),
        Ty::Named(n) => format!("Hull.{n}"),
        Ty::Promise(t) => format!("Promise<{}>", returns(*t)),
        Ty::Literal(ls) => ls
            .iter()
            .map(|l| format!("\"{l}\""))
            .collect::<Vec<_>>()
            .join(" | "),
    }
}
