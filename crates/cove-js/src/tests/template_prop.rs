//! The template bindings (template.rs: data read in place through
//! QuickJS's C API, reference counts kept by hand, ASCII strings read in
//! place; `template.render` a fast method) against cove-template's own
//! value tree host (`cove_template::testing::DataHost`), which renders the
//! same data without a VM. Templates are generated with the data's shape,
//! so that every field, loop and entry of the data is read.

use std::rc::Rc;

use proptest::prelude::*;

use cove_template::testing::{template_for, Data, DataHost, MemLoader, Schema};
use cove_template::{render, Flavor, Templates};

use super::js_source::to_js;
use super::support::{eval, runner, stringify, TestApp};
use super::values::{node, num};

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
        2 => "[<>&\"'`a é日😀ß\\t\\n ]{0,8}",
        1 => prop::sample::select(vec!["", " ", "  x  ", "0", "false", "null", "{{ a }}"])
            .prop_map(String::from),
    ]
}

fn scalar() -> impl Strategy<Value = Data> {
    prop_oneof![
        1 => Just(Data::Nil),
        1 => any::<bool>().prop_map(Data::Bool),
        // Numbers a double holds exactly.
        2 => (-(1i64 << 53)..(1i64 << 53)).prop_map(Data::Int),
        2 => num().prop_map(Data::Float),
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
                1 => prop::sample::select(vec![
                    "", "1", "0", "01", "-1", "4294967294", "é", "a b", "<", "length",
                ])
                .prop_map(String::from),
            ];
            // Insertion order: the keys as generated, each once.
            prop::collection::vec((key, scalar()), 0..6)
                .prop_map(|pairs| {
                    let mut seen = Vec::new();
                    let pairs = pairs
                        .into_iter()
                        .filter(|(k, _)| {
                            let new = !seen.contains(k);
                            seen.push(k.clone());
                            new
                        })
                        .collect();
                    Data::Map(pairs)
                })
                .boxed()
        }
    }
}

/// A template that reads every part of data of shape `s` at `path`.
/// Every scalar is also shown through these. Not `json`: DataHost writes its
/// own JSON (the filter is checked against JSON.stringify below).
const FILTERS: &[&str] = &["upper", "lower", "trim", "length", "default: \"d\""];

/// `d` as a JS expression.
fn js_data(d: &Data) -> String {
    match d {
        Data::Nil => "null".into(),
        Data::Bool(b) => b.to_string(),
        Data::Int(i) => format!("({i})"),
        Data::Float(f) if f.is_nan() => "NaN".into(),
        Data::Float(f) if f.is_infinite() => {
            if *f > 0.0 { "Infinity" } else { "(-Infinity)" }.into()
        }
        Data::Float(f) => format!("({f:?})"),
        Data::Str(s) => serde_json::to_string(s).expect("a JS string"),
        Data::List(items) => {
            let items: Vec<String> = items.iter().map(js_data).collect();
            format!("[{}]", items.join(", "))
        }
        Data::Map(pairs) => {
            let pairs: Vec<String> = pairs
                .iter()
                .map(|(k, v)| {
                    format!(
                        "[{}]: {}",
                        serde_json::to_string(k).expect("key"),
                        js_data(v)
                    )
                })
                .collect();
            format!("{{{}}}", pairs.join(", "))
        }
    }
}

/// Whether `k` is an array index, which JS lists first, ascending.
fn index(k: &str) -> Option<u32> {
    k.parse::<u32>()
        .ok()
        .filter(|n| *n != u32::MAX && n.to_string() == k)
}

/// `d` as the JS binding sees it: an object's keys in property order.
fn as_js_sees(d: &Data) -> Data {
    match d {
        Data::List(items) => Data::List(items.iter().map(as_js_sees).collect()),
        Data::Map(pairs) => {
            let mut pairs: Vec<_> = pairs
                .iter()
                .map(|(k, v)| (k.clone(), as_js_sees(v)))
                .collect();
            // Stable: the other keys keep their insertion order.
            pairs.sort_by_key(|(k, _)| index(k).map_or((1, 0), |n| (0, n)));
            Data::Map(pairs)
        }
        other => other.clone(),
    }
}

/// `[ok, text]` from script.
fn pair(v: rquickjs::Value<'_>) -> (bool, String) {
    let a = v.into_array().expect("[ok, text]");
    (a.get(0).expect("ok"), a.get(1).expect("text"))
}

const APP: &str = r#"
import { app } from "hull:app";
import { template } from "hull:template";
globalThis.template = template;
app.get("/", (req, res) => res.text(""));
"#;

/// `[ok, page]` for `template.render` then `template.renderString`.
const RENDER: &str = r#"(() => {
  const attempt = (f) => { try { return [true, f()]; } catch (e) { return [false, String(e)]; } };
  template.clearCache();
  return [attempt(() => template.render("case.html", DATA)), attempt(() => template.renderString(SOURCE, DATA))];
})()"#;

#[test]
fn templates_render_js_data_as_the_reference_host_does() {
    let app = TestApp::load(APP);
    let case = schema().prop_flat_map(|s| (Just(s.clone()), data(&s)));
    runner(256)
        .run(&case, |(s, d)| {
            let source = template_for(&s, "data", FILTERS);
            let want = {
                let t = Templates::new(MemLoader::default())
                    .compile_str(&source)
                    .expect("generated template compiles");
                let mut host = DataHost {
                    flavor: Flavor::Js,
                    data: Rc::new(Data::Map(vec![("data".into(), as_js_sees(&d))])),
                };
                render(&t, &mut host).map(|page| String::from_utf8_lossy(&page).into_owned())
            };
            app.write_template("case.html", &source);
            let setup = format!(
                "globalThis.SOURCE = {}; globalThis.DATA = {{ data: {} }};",
                serde_json::to_string(&source).expect("source"),
                js_data(&d)
            );
            let got: Vec<(bool, String)> = app.with(|ctx| {
                eval(ctx, &setup);
                let both = eval(ctx, RENDER).into_array().expect("two results");
                (0..2)
                    .map(|i| pair(both.get(i).expect("a result")))
                    .collect()
            });
            for (api, (ok, page)) in ["template.render", "template.renderString"].iter().zip(got) {
                match &want {
                    Ok(want) => {
                        prop_assert!(ok, "{} failed: {}\n{}", api, page, source);
                        prop_assert_eq!(&page, want, "{}\n{}", api, source);
                    }
                    Err(e) => prop_assert!(!ok, "the reference failed ({}), {} did not", e, api),
                }
            }
            Ok(())
        })
        .unwrap();
}

/// The `json` filter (the serializer of `res.json` through the template
/// host, or `JSON.stringify`) writes what `JSON.stringify` does, with `<`
/// as `\u003c`, for the values the serializer's property test makes
/// (each side on a copy of its own); both fail on the same values.
#[test]
fn the_json_filter_writes_what_json_stringify_does() {
    let app = TestApp::load(APP);
    runner(128)
        .run(&node(), |n| {
            let expr = to_js(&n);
            let (page, want) = app.with(|ctx| {
                let page = pair(eval(
                    ctx,
                    &format!(
                        "(() => {{ try {{ return [true, template.renderString('{{{{{{ v | json }}}}}}', {{ v: {expr} }})]; }} \
                         catch (e) {{ return [false, String(e)]; }} }})()"
                    ),
                ));
                (page, stringify(ctx, eval(ctx, &expr)))
            });
            match want {
                // Handed to JSON.stringify after a getter changed it, the
                // value may encode where a fresh copy throws (the getter
                // hid the member of a cycle), throw where it encodes (it
                // added a BigInt member) or read otherwise.
                _ if n.may_decline() && n.changes_while_read() => {}
                Ok(text) => {
                    prop_assert!(page.0, "{}\n{}", page.1, expr);
                    let text = text.unwrap_or_else(|| "null".into()).replace('<', "\\u003c");
                    prop_assert_eq!(page.1, text, "{}", expr);
                }
                Err(_) => prop_assert!(!page.0, "{}", expr),
            }
            Ok(())
        })
        .unwrap();
}
