//! JavaScript source of an expression that builds a generated value
//! (values.rs).

use super::values::{Build, Later, Node, Obj, Text};

impl Text {
    pub(crate) fn to_js(&self) -> String {
        match self {
            Text::Literal(a) => format!("\"{a}\""),
            // Long enough for QuickJS to make a rope of it.
            Text::Concat(a, b) => format!("(\"{a}\".repeat(40) + \"{b}\")"),
            Text::Repeat(a, n) => format!("\"{a}\".repeat({n})"),
            Text::Slice(a) => format!("\"{a}\".slice(1)"),
        }
    }
}

fn num_js(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "(-Infinity)" }.into()
    } else {
        format!("({f:?})")
    }
}

/// JS source of an expression that builds `n`.
pub(crate) fn to_js(n: &Node) -> String {
    match n {
        Node::Null => "null".into(),
        Node::Bool(b) => b.to_string(),
        Node::Int(i) => format!("({i})"),
        Node::Num(f) => num_js(*f),
        Node::Str(t) => t.to_js(),
        Node::Skipped(s) | Node::Declined(s) => s.to_string(),
        // Only meaningful inside an object's builder, where `o` is bound.
        Node::Itself => "o".into(),
        Node::Arr(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|i| i.as_ref().map(to_js).unwrap_or_default())
                .collect();
            // A hole at the end needs one more comma to count.
            let tail = if items.last().is_some_and(String::is_empty) {
                ","
            } else {
                ""
            };
            format!("[{}{tail}]", items.join(", "))
        }
        Node::Rows(keys, rows) => {
            let rows: Vec<String> = rows
                .iter()
                .map(|values| {
                    let members: Vec<String> = keys
                        .iter()
                        .zip(values)
                        .map(|(k, v)| format!("[\"{}\"]: {}", k.0, to_js(v)))
                        .collect();
                    format!("{{{}}}", members.join(", "))
                })
                .collect();
            format!("[{}]", rows.join(", "))
        }
        Node::Obj(o) => obj_js(o),
    }
}

fn obj_js(o: &Obj) -> String {
    let mut s = String::from("(() => { const o = ");
    // Tried: after `o["__proto__"] = v` a key may be a getter of the new
    // prototype's, and assigning to it throws.
    let assign = |s: &mut String| {
        for (k, v) in &o.props {
            s.push_str(&format!(
                "try {{ o[\"{}\"] = {}; }} catch (e) {{}} ",
                k.0,
                to_js(v)
            ));
        }
    };
    match o.build {
        Build::Literal => {
            let members: Vec<String> = o
                .props
                .iter()
                .map(|(k, v)| format!("[\"{}\"]: {}", k.0, to_js(v)))
                .collect();
            s.push_str(&format!("{{{}}}; ", members.join(", ")));
        }
        Build::Assign => {
            s.push_str("{}; ");
            assign(&mut s);
        }
        Build::NullProto => {
            s.push_str("Object.create(null); ");
            assign(&mut s);
        }
        Build::Class => {
            s.push_str("new (class Thing {})(); ");
            assign(&mut s);
        }
    }
    for l in &o.later {
        s.push_str(&later_js(l));
    }
    s.push_str("return o; })()");
    s
}

/// The statement for `l`, applied to `o`; every one is tried, so that a
/// frozen object or a key it lacks makes it do nothing.
fn later_js(l: &Later) -> String {
    let op = match l {
        Later::Delete(k) => format!("delete o[\"{}\"];", k.0),
        Later::Set(k, v) => format!("o[\"{}\"] = {};", k.0, to_js(v)),
        Later::Hide(k) => format!(
            "if (Object.prototype.hasOwnProperty.call(o, \"{0}\")) \
             Object.defineProperty(o, \"{0}\", {{ enumerable: false }});",
            k.0
        ),
        Later::Getter(k, v) => format!(
            "Object.defineProperty(o, \"{}\", {{ enumerable: true, configurable: true, \
             get() {{ return {}; }} }});",
            k.0,
            to_js(v)
        ),
        Later::Freeze => "Object.freeze(o);".into(),
        Later::FromChild(child, ops) => {
            let ops: String = ops.iter().map(later_js).collect();
            format!(
                // An own member only: `o["__proto__"]` may be
                // Object.prototype, and a getter there would outlive the case.
                "{{ const c = Object.prototype.hasOwnProperty.call(o, \"{0}\") ? o[\"{0}\"] : null; \
                 if (c !== null && typeof c === \"object\" && Object.isExtensible(c)) \
                 Object.defineProperty(c, \"zz_get\", {{ enumerable: true, configurable: true, \
                 get() {{ {ops} return 1; }} }}); }}",
                child.0
            )
        }
    };
    format!("try {{ {op} }} catch (e) {{}} ")
}
