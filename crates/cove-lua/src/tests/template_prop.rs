//! The template bindings (template.rs: data read raw off the Lua stack,
//! `template.render` as a plain C function rendering into a page buffer
//! kept per VM) against cove-template's own value tree host
//! (`cove_template::testing::DataHost`), which renders the same data
//! without a VM. Templates are generated with the data's shape, so that
//! every field, loop and entry of the data is read.

use std::rc::Rc;

use proptest::prelude::*;

use cove_template::testing::{template_for, Data, DataHost, MemLoader, Schema};
use cove_template::{render, Flavor, Templates};

use super::support::{runner, TestApp};
use super::values::{float, int, lua_float, lua_int, lua_string, node, to_lua, LIAR};

fn schema() -> impl Strategy<Value = Schema> {
    let leaf = prop_oneof![3 => Just(Schema::Scalar), 1 => Just(Schema::Bag)];
    let tree = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            2 => record(inner.clone()),
            1 => inner.prop_map(|s| Schema::List(Box::new(s))),
        ]
    });
    record(tree.boxed())
}

/// Fields named `f_…` (never a keyword or a loop variable), each once.
fn record(inner: BoxedStrategy<Schema>) -> impl Strategy<Value = Schema> {
    prop::collection::btree_map("f_[a-z0-9_]{0,4}", inner, 1..5)
        .prop_map(|fields| Schema::Record(fields.into_iter().collect()))
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-zA-Z0-9 ]{0,8}",
        2 => "[<>&\"'`a é日😀\\t\\n ]{0,8}",
        1 => prop::sample::select(vec!["", " ", "  x  ", "0", "false", "nil", "{{ a }}"])
            .prop_map(String::from),
    ]
}

fn scalar() -> impl Strategy<Value = Data> {
    prop_oneof![
        1 => any::<bool>().prop_map(Data::Bool),
        2 => int().prop_map(Data::Int),
        2 => float(true).prop_map(Data::Float),
        3 => text().prop_map(Data::Str),
    ]
}

fn data(s: &Schema) -> BoxedStrategy<Data> {
    match s {
        Schema::Scalar => scalar().boxed(),
        Schema::Record(fields) => {
            let fields: Vec<_> = fields
                .iter()
                .map(|(k, s)| {
                    let k = k.clone();
                    data(s).prop_map(move |d| (k.clone(), d))
                })
                .collect();
            fields.prop_map(Data::Map).boxed()
        }
        Schema::List(item) => prop::collection::vec(data(item), 0..5)
            .prop_map(Data::List)
            .boxed(),
        Schema::Bag => {
            let key = prop_oneof![
                2 => "[a-z]{1,4}",
                1 => prop::sample::select(vec!["", "1", "01", "-1", "é", "a b", "<", "length"])
                    .prop_map(String::from),
            ];
            prop::collection::btree_map(key, scalar(), 0..6)
                .prop_map(|m| Data::Map(m.into_iter().collect()))
                .boxed()
        }
    }
}

/// A template that reads every part of data of shape `s` at `path`.
/// Every scalar is also shown through these. Not `json`: DataHost writes its
/// own JSON (the filter is checked against json.encode below).
const FILTERS: &[&str] = &["upper", "trim", "length", "default: \"d\""];

/// `d` as a Lua table constructor.
fn lua_data(d: &Data) -> String {
    match d {
        Data::Nil => "nil".into(),
        Data::Bool(b) => b.to_string(),
        Data::Int(i) => lua_int(*i),
        Data::Float(f) => lua_float(*f),
        Data::Str(s) => lua_string(s.as_bytes()),
        Data::List(items) => {
            let items: Vec<String> = items.iter().map(lua_data).collect();
            format!("{{{}}}", items.join(", "))
        }
        Data::Map(pairs) => {
            let pairs: Vec<String> = pairs
                .iter()
                .map(|(k, v)| format!("[{}] = {}", lua_string(k.as_bytes()), lua_data(v)))
                .collect();
            format!("{{{}}}", pairs.join(", "))
        }
    }
}

/// `d` as the Lua binding sees it: `for k, v` visits keys sorted.
fn as_lua_sees(d: &Data) -> Data {
    match d {
        Data::List(items) => Data::List(items.iter().map(as_lua_sees).collect()),
        Data::Map(pairs) => {
            let mut pairs: Vec<_> = pairs
                .iter()
                .map(|(k, v)| (k.clone(), as_lua_sees(v)))
                .collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            Data::Map(pairs)
        }
        other => other.clone(),
    }
}

const RENDER: &str = r#"
local data = ...
TEMPLATE.clear_cache()
local ok, page = pcall(TEMPLATE.render, "case.html", data)
local ok2, page2 = pcall(TEMPLATE.render_string, SOURCE, data)
return ok, page, ok2, page2
"#;

fn app() -> TestApp {
    let app = TestApp::load(
        "TEMPLATE = require('hull.template')\napp.get('/', function(req, res) res:text('') end)",
    );
    app.lua().load(LIAR).exec().expect("LIAR");
    app
}

#[test]
fn templates_render_lua_data_as_the_reference_host_does() {
    let app = app();
    let lua = app.lua();
    let case = schema().prop_flat_map(|s| (Just(s.clone()), data(&s)));
    runner(256)
        .run(&case, |(s, d)| {
            let source = template_for(&s, "data", FILTERS);
            let want = {
                let t = Templates::new(MemLoader::default())
                    .compile_str(&source)
                    .expect("generated template compiles");
                let mut host = DataHost {
                    flavor: Flavor::Lua,
                    data: Rc::new(Data::Map(vec![("data".into(), as_lua_sees(&d))])),
                };
                render(&t, &mut host).map(|page| String::from_utf8_lossy(&page).into_owned())
            };
            app.write_template("case.html", &source);
            lua.globals().set("SOURCE", source.as_str()).unwrap();
            let value = format!("{{ data = {} }}", lua_data(&d));
            let (ok, page, ok2, page2): (bool, mlua::LuaString, bool, mlua::LuaString) = lua
                .load(format!("return (function(...) {RENDER} end)({value})"))
                .eval()
                .unwrap_or_else(|e| panic!("{e}\n{value}"));
            let page = page.to_string_lossy();
            let page2 = page2.to_string_lossy();
            match &want {
                Ok(want) => {
                    prop_assert!(ok, "template.render failed: {}\n{}", page, source);
                    prop_assert_eq!(&page, want, "template.render\n{}", source);
                    prop_assert!(ok2, "template.render_string failed: {}", page2);
                    prop_assert_eq!(&page2, want, "template.render_string\n{}", source);
                }
                Err(e) => {
                    prop_assert!(!ok && !ok2, "the reference failed ({}), Lua did not", e);
                }
            }
            Ok(())
        })
        .unwrap();
}

/// The `json` filter (the stack walker through the template host) writes
/// what `json.encode` does, with `<` as `\u003c`, for the values the
/// encoders' property test makes; both fail on the same values.
#[test]
fn the_json_filter_writes_what_json_encode_does() {
    let app = app();
    let lua = app.lua();
    runner(128)
        .run(&node(), |n| {
            let expr = to_lua(&n);
            let src = format!(
                "local v = {expr}\n\
                 local ok, text = pcall(json.encode, v)\n\
                 local rok, page = pcall(TEMPLATE.render_string, '{{{{{{ v | json }}}}}}', {{ v = v }})\n\
                 if ok then text = text:gsub('<', '\\\\u003c') end\n\
                 return ok, text, rok, page"
            );
            let (ok, text, rok, page): (bool, mlua::LuaString, bool, mlua::LuaString) =
                lua.load(src).eval().unwrap_or_else(|e| panic!("{e}\n{expr}"));
            prop_assert_eq!(rok, ok, "{}", page.to_string_lossy());
            if ok {
                prop_assert_eq!(page.as_bytes(), text.as_bytes());
            }
            Ok(())
        })
        .unwrap();
}
