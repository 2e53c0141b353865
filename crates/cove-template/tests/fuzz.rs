//! Property tests for the parser and renderer: whatever the input, they
//! return an output or an error — no panic, no hang, no runaway recursion.
//! Inputs are built from template fragments (so they reach deep into the
//! grammar) as well as arbitrary text; includes and extends point at each
//! other at random to exercise cycles and depth limits.

use std::rc::Rc;

use proptest::prelude::*;

use cove_template::testing::{Data, DataHost, MemLoader};
use cove_template::{render, Flavor, Limits, Templates};

const FRAGMENTS: &[&str] = &[
    "{{",
    "}}",
    "{{{",
    "}}}",
    "{%",
    "%}",
    "{#",
    "#}",
    "{%-",
    "-%}",
    "{{-",
    "-}}",
    " ",
    "\n",
    "x",
    "]",
    "{",
    "}",
    "%",
    "#",
    "-",
    "|",
    ":",
    ".",
    ",",
    "(",
    ")",
    "'",
    "\"",
    "\\",
    "==",
    "!=",
    "<",
    ">=",
    "if",
    "elif",
    "else",
    "end",
    "for",
    "in",
    "block",
    "extends",
    "include",
    "not",
    "and",
    "or",
    "a",
    "b.c",
    "items",
    "loop",
    "loop.index",
    "loop.last",
    "k, v",
    "upper",
    "lower",
    "trim",
    "length",
    "default",
    "json",
    "raw",
    "1",
    "-2.5",
    "'s'",
    "\"t.html\"",
    "'a.html'",
    "true",
    "{% if a %}",
    "{% else %}",
    "{% elif b %}",
    "{% end %}",
    "{% for x in items %}",
    "{% for k, v in m %}",
    "{% block b1 %}",
    "{% block b2 %}",
    "{% extends 'a.html' %}",
    "{% extends 'b.html' %}",
    "{% include 'a.html' %}",
    "{% include 'b.html' %}",
    "{% include 'c.html' %}",
    "{{ x }}",
    "{{ loop.index }}",
    "{{ a | upper | raw }}",
    "{{ items | length }}",
    "{{ m | json }}",
    "{{ a | default: 'z' }}",
];

fn template() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::collection::vec(prop::sample::select(FRAGMENTS), 0..40).prop_map(|v| v.concat()),
        1 => ".{0,80}",
    ]
}

fn data() -> Data {
    let items = Data::List((0..5).map(Data::Int).collect());
    Data::map([
        ("a", Data::str("<a&b>")),
        ("b", Data::map([("c", Data::Float(1.5))])),
        ("items", items.clone()),
        ("m", Data::map([("k", items), ("z", Data::Nil)])),
        ("x", Data::Bool(false)),
    ])
}

fn limits() -> Limits {
    Limits {
        max_steps: 100_000,
        max_output: 1 << 20,
        ..Limits::default()
    }
}

fn render_all(templates: &mut Templates, names: &[&str]) {
    for flavor in [Flavor::Lua, Flavor::Js] {
        for name in names {
            if let Ok(t) = templates.get(name) {
                let mut host = DataHost {
                    flavor,
                    data: Rc::new(data()),
                };
                let _ = render(&t, &mut host);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_source_parses_or_fails_cleanly(src in template()) {
        let mut templates = Templates::with_limits(MemLoader::new([("a.html", "A{% block b1 %}1{% end %}")]), limits());
        if let Ok(t) = templates.compile_str(&src) {
            for flavor in [Flavor::Lua, Flavor::Js] {
                let mut host = DataHost { flavor, data: Rc::new(data()) };
                let _ = render(&t, &mut host);
            }
        }
    }

    #[test]
    fn templates_that_include_each_other_terminate(
        a in template(), b in template(), c in template(), t in template()
    ) {
        let loader = MemLoader::new([
            ("a.html", a.as_str()),
            ("b.html", b.as_str()),
            ("c.html", c.as_str()),
            ("t.html", t.as_str()),
        ]);
        let mut templates = Templates::with_limits(loader, limits());
        render_all(&mut templates, &["a.html", "b.html", "c.html", "t.html"]);
    }
}

/// Exponential fan-out through includes is stopped by the step limit.
#[test]
fn include_fan_out_is_bounded() {
    let mut files = MemLoader::default();
    for i in 0..16 {
        let next = format!("{{% include 'f{}.html' %}}", i + 1);
        files.0.insert(format!("f{i}.html"), next.repeat(8));
    }
    files.0.insert("f16.html".into(), "x".into());
    let mut templates = Templates::with_limits(files, limits());
    let t = templates.get("f0.html").unwrap();
    let mut host = DataHost {
        flavor: Flavor::Lua,
        data: Rc::new(data()),
    };
    let e = render(&t, &mut host).unwrap_err();
    assert!(e.to_string().contains("steps"), "{e}");
}

/// Deep nesting in one template is refused at parse time, not by the stack.
#[test]
fn deep_nesting_is_refused() {
    let mut templates = Templates::new(MemLoader::default());
    for src in [
        "{% if a %}".repeat(10_000),
        "{% block x %}".repeat(10_000),
        format!("{{{{ {} }}}}", "(".repeat(10_000)),
        format!("{{{{ {}a }}}}", "not ".repeat(10_000)),
    ] {
        assert!(templates.compile_str(&src).is_err());
    }
}
