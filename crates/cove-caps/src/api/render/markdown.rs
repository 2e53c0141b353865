//! docs/api/: one page per module, both languages side by side, and an
//! index. docs/api.md stays the guide with examples; these are the
//! reference, generated.

use std::fmt::Write;

use super::{object_name, plain, public, Generated};
use crate::api::{Call, Lang, Module, Param, Sig, TypeDef};

const HEADER: &str = "<!-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`; do not edit. -->\n\n";

pub(super) fn pages() -> Vec<Generated> {
    let mut index = String::from(HEADER);
    index.push_str(
        "# API reference, by module\n\n\
         Every function a script can call, generated from the catalog in\n\
         crates/cove-caps/src/api. The guide with examples and error messages is\n\
         [../api.md](../api.md); editor types: [../editors.md](../editors.md).\n\n\
         | Module | Lua | JS | |\n|---|---|---|---|\n",
    );
    let mut pages = Vec::new();
    for m in public() {
        let file = page_name(m);
        let _ = writeln!(
            index,
            "| [{}]({file}) | {} | {} | {} |",
            m.js,
            lua_access(m),
            js_access(m),
            m.doc
        );
        pages.push(Generated {
            path: format!("docs/api/{file}"),
            text: page(m),
        });
    }
    pages.push(Generated {
        path: "docs/api/README.md".into(),
        text: index,
    });
    pages
}

fn page_name(m: &Module) -> String {
    format!("{}.md", super::flat_name(m, "-"))
}

fn lua_access(m: &Module) -> String {
    match (m.lua_global, m.lua_require) {
        (Some(g), Some(r)) => format!("global `{g}`, or `require(\"{r}\")`"),
        (Some(g), None) => format!("global `{g}`"),
        (None, Some(r)) => format!("`local {} = require(\"{r}\")`", object_name(m)),
        (None, None) => "—".into(),
    }
}

fn js_access(m: &Module) -> String {
    if m.default_export {
        format!("`import {} from \"{}\"`", object_name(m), m.js)
    } else if m.js.starts_with("hull:") {
        format!("`import {{ {} }} from \"{}\"`", object_name(m), m.js)
    } else {
        format!("global `{}`", object_name(m))
    }
}

fn page(m: &Module) -> String {
    let mut s = String::from(HEADER);
    let _ = writeln!(s, "# {}\n\n{}.\n", m.js, m.doc);
    let _ = writeln!(s, "* Lua: {}\n* JS: {}", lua_access(m), js_access(m));
    if !m.native {
        s.push_str(
            "* Written in each script language (the stdlib); see [../stdlib.md](../stdlib.md).\n",
        );
    }
    s.push('\n');
    if !m.functions.is_empty() {
        s.push_str("## Functions\n\n");
        functions(&mut s, object_name(m), &m.functions);
    }
    for t in m.types {
        typedef(&mut s, t);
    }
    s
}

fn functions(s: &mut String, object: &str, sigs: &[Sig]) {
    s.push_str("| Lua | JS | returns | |\n|---|---|---|---|\n");
    for sig in sigs {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {}{} |",
            call(object, sig, Lang::Lua),
            call(object, sig, Lang::Js),
            returns(sig),
            sig.doc,
            if sig.slow {
                " (waits: Lua suspends the handler)"
            } else {
                ""
            }
        );
    }
    s.push('\n');
}

fn call(object: &str, sig: &Sig, lang: Lang) -> String {
    let Some(name) = sig.name(lang) else {
        return "—".into();
    };
    let sep = match (sig.call, lang) {
        (Call::Method, Lang::Lua) => ":",
        _ => ".",
    };
    format!("`{object}{sep}{name}({})`", params(sig.params))
}

fn params(ps: &[Param]) -> String {
    ps.iter()
        .map(|p| {
            if p.optional {
                format!("[{}]", p.name)
            } else {
                p.name.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn returns(sig: &Sig) -> String {
    let (lua, js) = (plain(sig.returns(Lang::Lua)), plain(sig.returns(Lang::Js)));
    if sig.lua.is_none() || lua == js {
        if sig.lua.is_none() {
            js
        } else {
            lua
        }
    } else {
        format!("Lua: {lua}; JS: {js}")
    }
}

fn typedef(s: &mut String, t: &TypeDef) {
    let _ = writeln!(s, "## {}\n\n{}.\n", t.name, t.doc);
    if !t.fields.is_empty() {
        s.push_str("| Field | Type | |\n|---|---|---|\n");
        for f in t.fields {
            let ty = plain(f.ty);
            let ty = if f.optional {
                format!("{ty} (optional)")
            } else {
                ty
            };
            let _ = writeln!(s, "| `{}` | {ty} | {} |", f.name, f.doc);
        }
        s.push('\n');
    }
    if !t.methods.is_empty() {
        functions(s, &super::var_name(t), t.methods);
    }
}
