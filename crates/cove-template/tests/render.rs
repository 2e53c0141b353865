//! Rendering behaviour, in both flavors, over plain Rust data.

use std::rc::Rc;

use cove_template::testing::{Data, DataHost, MemLoader};
use cove_template::{render, Error, ErrorKind, Flavor, Templates};

fn items() -> Data {
    Data::List(vec![Data::str("a"), Data::str("b"), Data::str("c")])
}

fn run(
    templates: &mut Templates,
    name: &str,
    data: &Data,
    flavor: Flavor,
) -> Result<String, Error> {
    let t = templates.get(name)?;
    let mut host = DataHost {
        flavor,
        data: Rc::new(data.clone()),
    };
    render(&t, &mut host).map(|b| String::from_utf8(b).unwrap())
}

fn src(source: &str, data: &Data, flavor: Flavor) -> Result<String, Error> {
    let mut templates = Templates::new(MemLoader::default());
    let t = templates.compile_str(source)?;
    let mut host = DataHost {
        flavor,
        data: Rc::new(data.clone()),
    };
    render(&t, &mut host).map(|b| String::from_utf8(b).unwrap())
}

/// Same output in both runtimes.
fn both(source: &str, data: &Data) -> String {
    let lua = src(source, data, Flavor::Lua).unwrap();
    let js = src(source, data, Flavor::Js).unwrap();
    assert_eq!(lua, js, "{source}");
    lua
}

#[test]
fn outputs_escape_unless_raw() {
    let d = Data::map([("h", Data::str("<b>\"x\" & 'y'</b>"))]);
    assert_eq!(
        both("{{ h }}", &d),
        "&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;"
    );
    assert_eq!(
        both("{{{ h }}}|{{ h | raw }}", &d),
        "<b>\"x\" & 'y'</b>|<b>\"x\" & 'y'</b>"
    );
    assert_eq!(
        both("[{{ missing }}][{{ missing.deeper.still }}]", &d),
        "[][]"
    );
}

#[test]
fn dot_paths_and_literals() {
    let d = Data::map([(
        "user",
        Data::map([("address", Data::map([("city", Data::str("Oslo"))]))]),
    )]);
    assert_eq!(both("{{ user.address.city }}", &d), "Oslo");
    assert_eq!(
        both(
            "{{ \"{{ var }}\" }} {{{ \"var\" }}} {{ 42 }} {{ -1.5 }} {{ true }}",
            &d
        ),
        "{{ var }} var 42 -1.5 true"
    );
}

#[test]
fn if_elif_else_and_not() {
    let t = "{% if a %}A{% elif not b %}notB{% else %}else{% end %}";
    assert_eq!(both(t, &Data::map([("a", Data::Bool(true))])), "A");
    assert_eq!(both(t, &Data::map([])), "notB");
    assert_eq!(both(t, &Data::map([("b", Data::Int(1))])), "else");
}

#[test]
fn truthiness_follows_the_runtime() {
    let t = "{% if v %}T{% else %}F{% end %}";
    for (v, lua, js) in [
        (Data::Int(0), "T", "F"),
        (Data::Float(f64::NAN), "T", "F"),
        (Data::str(""), "T", "F"),
        (Data::List(vec![]), "T", "T"),
        (Data::Bool(false), "F", "F"),
        (Data::Nil, "F", "F"),
    ] {
        let d = Data::map([("v", v.clone())]);
        assert_eq!(src(t, &d, Flavor::Lua).unwrap(), lua, "{v:?}");
        assert_eq!(src(t, &d, Flavor::Js).unwrap(), js, "{v:?}");
    }
}

#[test]
fn numbers_print_as_the_runtime_does() {
    let d = Data::map([
        ("f", Data::Float(3.0)),
        ("g", Data::Float(0.5)),
        ("i", Data::Int(7)),
    ]);
    assert_eq!(
        src("{{ f }} {{ g }} {{ i }}", &d, Flavor::Lua).unwrap(),
        "3.0 0.5 7"
    );
    assert_eq!(
        src("{{ f }} {{ g }} {{ i }}", &d, Flavor::Js).unwrap(),
        "3 0.5 7"
    );
}

#[test]
fn loops_with_loop_variables() {
    let d = Data::map([("items", items())]);
    assert_eq!(
        both("{% for x in items %}{{ loop.index }}/{{ loop.length }}:{{ x }}{% if loop.first %}F{% end %}{% if loop.last %}L{% end %}{% if not loop.last %},{% end %}{% end %}", &d),
        "1/3:aF,2/3:b,3/3:cL"
    );
    assert_eq!(
        both("{% for x in items %}{{ loop.index0 }}{% end %}", &d),
        "012"
    );
    assert_eq!(both("{% for x in nothing %}x{% end %}", &d), "");
    // Nested loops: `loop` is the innermost; outer variables stay visible.
    let d = Data::map([("rows", Data::List(vec![items(), items()]))]);
    assert_eq!(
        both(
            "{% for r in rows %}{% for c in r %}{{ loop.index }}{% end %};{% end %}",
            &d
        ),
        "123;123;"
    );
    // Outside a loop, `loop` is ordinary data (as in Hull).
    assert_eq!(
        both(
            "{{ loop.index }}",
            &Data::map([("loop", Data::map([("index", Data::Int(9))]))])
        ),
        "9"
    );
}

#[test]
fn key_value_loops() {
    let d = Data::map([
        ("m", Data::map([("b", Data::Int(2)), ("a", Data::Int(1))])),
        ("l", items()),
    ]);
    assert_eq!(
        both("{% for k, v in m %}{{ k }}={{ v }};{% end %}", &d),
        "b=2;a=1;"
    );
    assert_eq!(
        src("{% for k, v in l %}{{ k }}{% end %}", &d, Flavor::Lua).unwrap(),
        "123"
    );
    assert_eq!(
        src("{% for k, v in l %}{{ k }}{% end %}", &d, Flavor::Js).unwrap(),
        "012"
    );
}

#[test]
fn loop_variables_shadow_data() {
    let d = Data::map([("x", Data::str("data")), ("items", items())]);
    assert_eq!(
        both("{{ x }}{% for x in items %}{{ x }}{% end %}{{ x }}", &d),
        "dataabcdata"
    );
}

#[test]
fn comparisons() {
    let d = Data::map([
        ("n", Data::Int(3)),
        ("f", Data::Float(3.0)),
        ("s", Data::str("b")),
    ]);
    for (expr, want) in [
        ("n == 3", true),
        ("n == f", true),
        ("n != 4", true),
        ("n < 4 and n > 2", true),
        ("n <= 3 and n >= 3", true),
        ("s == 'b'", true),
        ("s < \"c\"", true),
        ("s == 3", false),
        ("missing > 1", false),
        ("missing == missing2", true),
        ("not n == 3", false),
        ("(n == 1 or n == 3) and s != 'a'", true),
        ("n == 1 or n == 2 or s == 'x'", false),
    ] {
        let t = format!("{{% if {expr} %}}yes{{% else %}}no{{% end %}}");
        assert_eq!(both(&t, &d), if want { "yes" } else { "no" }, "{expr}");
    }
    let e = src("\n{% if s > 1 %}{% end %}", &d, Flavor::Lua).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Render);
    assert_eq!(e.to_string(), "(string):2:9: cannot compare a string > a number: only numbers with numbers and strings with strings");
}

#[test]
fn and_or_give_back_a_value() {
    let d = Data::map([("name", Data::str("Ann"))]);
    assert_eq!(both("{{ nick or name }}|{{ name and 'x' }}", &d), "Ann|x");
}

#[test]
fn filters() {
    let d = Data::map([
        ("s", Data::str("  Hello World  ")),
        ("l", items()),
        ("m", Data::map([("a", Data::Int(1)), ("b", Data::Int(2))])),
        ("e", Data::str("")),
        ("o", Data::map([("k", Data::str("</script>"))])),
    ]);
    assert_eq!(
        both("[{{ s | trim | upper }}][{{ s | lower | trim }}]", &d),
        "[HELLO WORLD][hello world]"
    );
    assert_eq!(
        both(
            "{{ l | length }} {{ s | length }} {{ missing | length }}",
            &d
        ),
        "3 15 0"
    );
    assert_eq!(src("{{ m | length }}", &d, Flavor::Lua).unwrap(), "0");
    assert_eq!(src("{{ m | length }}", &d, Flavor::Js).unwrap(), "2");
    assert_eq!(both("{{ missing | default: 'none' }}|{{ e | default: s | trim }}|{{ l | length | default: 5 }}|{{ x | default }}", &d), "none|Hello World|3|");
    assert_eq!(
        both("{{ o | json | raw }}", &d),
        "{\"k\":\"\\u003c/script>\"}"
    );
    assert_eq!(both("{{ 'a<b' | json }}", &d), "&quot;a\\u003cb&quot;");
    assert_eq!(both("{% if l | length > 2 %}many{% end %}", &d), "many");
}

#[test]
fn unicode_case_and_length_per_runtime() {
    let d = Data::map([("s", Data::str("éa"))]);
    assert_eq!(
        src("{{ s | upper }} {{ s | length }}", &d, Flavor::Lua).unwrap(),
        "éA 3"
    );
    assert_eq!(
        src("{{ s | upper }} {{ s | length }}", &d, Flavor::Js).unwrap(),
        "ÉA 2"
    );
}

#[test]
fn backtick_is_escaped_in_js_only() {
    let d = Data::map([("s", Data::str("`"))]);
    assert_eq!(src("{{ s }}", &d, Flavor::Lua).unwrap(), "`");
    assert_eq!(src("{{ s }}", &d, Flavor::Js).unwrap(), "&#96;");
}

#[test]
fn text_and_newlines_are_kept() {
    let d = Data::map([("a", Data::Int(1))]);
    assert_eq!(both("[{{ a }}]", &d), "[1]");
    assert_eq!(both("{% if a %}\nline]\n{% end %}\n", &d), "\nline]\n\n");
    assert_eq!(
        both("<ul>\n  {%- if a -%}\n  <li>\n  {%- end %}\n</ul>", &d),
        "<ul><li>\n</ul>"
    );
    assert_eq!(both("a {{- a -}} b {# c #} d", &d), "a1b  d");
}

fn layouts() -> MemLoader {
    MemLoader::new([
        ("g.html", "G<{% block a %}ga{% end %}|{% block b %}gb{% end %}>"),
        ("p.html", "{% extends \"g.html\" %}{% block a %}pa{% end %}"),
        ("c.html", "{% extends 'p.html' %}ignored{% block a %}ca{% end %}{% block b %}cb{% end %}"),
        ("c2.html", "{% extends 'p.html' %}{% block b %}cb{% end %}"),
        ("nested.html", "<{% block outer %}o[{% block inner %}i{% end %}]{% end %}>"),
        ("nested_child.html", "{% extends 'nested.html' %}{% block inner %}I{% end %}"),
        ("page.html", "{% extends 'base.html' %}{% block body %}{% for x in items %}{% include 'item.html' %}{% end %}{% end %}"),
        ("base.html", "<html>{% include 'nav.html' %}{% block body %}{% end %}</html>\n"),
        ("nav.html", "<nav>{{ title | upper }}</nav>"),
        ("item.html", "<li>{{ x }}{% if loop.last %}!{% end %}</li>"),
        ("loop1.html", "{% include 'loop2.html' %}"),
        ("loop2.html", "{% include 'loop1.html' %}"),
        ("self.html", "{% extends 'self.html' %}"),
        ("missing.html", "a\n  {% include 'nope.html' %}"),
        ("bad.html", "x\n{{ a | uper }}"),
        ("includes_bad.html", "{% include 'bad.html' %}"),
    ])
}

#[test]
fn multi_level_extends_most_derived_block_wins() {
    let mut t = Templates::new(layouts());
    let d = Data::map([]);
    // Hull rendered G<pa|gb> here: the grandchild's overrides were lost.
    assert_eq!(run(&mut t, "c.html", &d, Flavor::Lua).unwrap(), "G<ca|cb>");
    assert_eq!(run(&mut t, "c2.html", &d, Flavor::Js).unwrap(), "G<pa|cb>");
    assert_eq!(run(&mut t, "p.html", &d, Flavor::Js).unwrap(), "G<pa|gb>");
    assert_eq!(
        run(&mut t, "nested_child.html", &d, Flavor::Lua).unwrap(),
        "<o[I]>"
    );
}

#[test]
fn includes_see_loop_variables() {
    let mut t = Templates::new(layouts());
    let d = Data::map([("title", Data::str("Home")), ("items", items())]);
    assert_eq!(
        run(&mut t, "page.html", &d, Flavor::Lua).unwrap(),
        "<html><nav>HOME</nav><li>a</li><li>b</li><li>c!</li></html>\n"
    );
}

#[test]
fn resolution_errors_name_the_tag() {
    let mut t = Templates::new(layouts());
    let d = Data::map([]);
    let e = run(&mut t, "missing.html", &d, Flavor::Lua).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotFound);
    assert_eq!(e.to_string(), "templates/missing.html:2:3: template not found: nope.html (templates/nope.html: no such file)");
    let e = run(&mut t, "loop1.html", &d, Flavor::Lua).unwrap_err();
    assert!(
        e.to_string()
            .contains("circular include: loop1.html → loop2.html → loop1.html"),
        "{e}"
    );
    let e = run(&mut t, "self.html", &d, Flavor::Lua).unwrap_err();
    assert!(e.to_string().contains("circular extends"), "{e}");
    let e = run(&mut t, "includes_bad.html", &d, Flavor::Lua).unwrap_err();
    assert_eq!(e.to_string(), "templates/bad.html:2:8: unknown filter \"uper\" (filters: upper, lower, trim, length, default, json, raw)");
    let e = run(&mut t, "nope.html", &d, Flavor::Lua).unwrap_err();
    assert_eq!(
        e.to_string(),
        "template not found: nope.html (templates/nope.html: no such file)"
    );
    for bad in ["", "/etc/passwd", "../app.lua", "a/../b.html", "a//b"] {
        let e = run(&mut t, bad, &d, Flavor::Lua).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidName, "{bad}");
        assert!(e.to_string().starts_with("invalid template name"), "{e}");
    }
}

#[test]
fn depth_limits() {
    let mut files = MemLoader::default();
    for i in 0..20 {
        files.0.insert(
            format!("i{i}.html"),
            format!("{{% include 'i{}.html' %}}", i + 1),
        );
        files.0.insert(
            format!("e{i}.html"),
            format!("{{% extends 'e{}.html' %}}", i + 1),
        );
    }
    files.0.insert("i20.html".into(), "end".into());
    files.0.insert("e20.html".into(), "end".into());
    let mut t = Templates::new(files);
    let d = Data::map([]);
    let e = run(&mut t, "i0.html", &d, Flavor::Lua).unwrap_err();
    assert!(
        e.to_string()
            .contains("include depth limit exceeded (max 16)"),
        "{e}"
    );
    let e = run(&mut t, "e0.html", &d, Flavor::Lua).unwrap_err();
    assert!(
        e.to_string()
            .contains("extends depth limit exceeded (max 8)"),
        "{e}"
    );
    assert_eq!(run(&mut t, "i5.html", &d, Flavor::Lua).unwrap(), "end");
}

#[test]
fn cache_and_clear() {
    let mut files = MemLoader::new([("a.html", "one")]);
    let mut t = Templates::new(files.clone());
    let d = Data::map([]);
    assert_eq!(run(&mut t, "a.html", &d, Flavor::Lua).unwrap(), "one");
    // Same template object until the cache is cleared.
    assert!(Rc::ptr_eq(
        &t.get("a.html").unwrap(),
        &t.get("a.html").unwrap()
    ));
    files.0.insert("a.html".into(), "two".into());
    let mut t2 = Templates::new(files);
    assert_eq!(run(&mut t2, "a.html", &d, Flavor::Lua).unwrap(), "two");
    t.clear();
}

#[test]
fn render_errors_point_into_the_template() {
    let d = Data::map([("s", Data::str("x")), ("m", Data::map([]))]);
    let e = src("ab\n{% for x in s %}{% end %}", &d, Flavor::Lua).unwrap_err();
    assert_eq!(e.to_string(), "(string):2:1: cannot loop over a string: {% for %} needs a list (or a table/object with `for k, v in`)");
    let e = src(
        "{% for x in m %}{{ loop.nope }}{% end %}{% for x in s %}{% end %}",
        &Data::map([("m", items())]),
        Flavor::Lua,
    )
    .unwrap_err();
    assert!(
        e.to_string().starts_with("(string):1:20: inside {% for %}"),
        "{e}"
    );
    let e = src("{% for x in m %}{% end %}", &d, Flavor::Js).unwrap_err();
    assert_eq!(e.to_string(), "(string):1:1: not a list");
}

#[test]
fn work_is_bounded() {
    use cove_template::Limits;
    let files = MemLoader::new([(
        "big.html",
        "{% for a in l %}{% for b in l %}{% for c in l %}x{% end %}{% end %}{% end %}",
    )]);
    let limits = Limits {
        max_steps: 10_000,
        ..Limits::default()
    };
    let mut t = Templates::with_limits(files, limits);
    let l = Data::List(vec![Data::Int(1); 100]);
    let e = run(&mut t, "big.html", &Data::map([("l", l)]), Flavor::Lua).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Limit);
    assert!(e.to_string().contains("more than 10000 steps"), "{e}");
}

/// `{{ x | upper }}` (and `lower`, `trim`) is written straight into the
/// output; `| default` after it takes the general path (a filtered value,
/// then written). Both must agree for every kind of value, in both flavors.
#[test]
fn case_filters_written_in_place_match_the_general_path() {
    let values = [
        Data::str("  <Tom> & \"Jerry\" 'x' `y`  "),
        Data::str("\u{a0}\u{feff} éa ß İ\t\n"),
        Data::str(""),
        Data::Int(-42),
        Data::Float(2.5),
        Data::Bool(true),
        Data::Nil,
        items(),
    ];
    for flavor in [Flavor::Lua, Flavor::Js] {
        for v in &values {
            let d = Data::map([("x", v.clone())]);
            for f in ["upper", "lower", "trim"] {
                // `{{{ … }}}` is the unescaped output.
                for (open, close) in [("{{", "}}"), ("{{{", "}}}")] {
                    let direct = src(&format!("[{open} x | {f} {close}]"), &d, flavor).unwrap();
                    let general =
                        src(&format!("[{open} x | {f} | default {close}]"), &d, flavor).unwrap();
                    assert_eq!(direct, general, "{flavor:?} {v:?} {open}{f}");
                }
            }
        }
    }
}
