//! A plain Rust value tree implementing [`Host`], for this crate's tests,
//! the property tests and anyone checking templates without a VM.

use std::collections::HashMap;
use std::io;
use std::rc::Rc;

use crate::cache::Loader;
use crate::host::{Flavor, Host, ItemKey, Shape};
use crate::names::Key;

/// A value as either runtime could hold it.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Data>),
    /// Keys in insertion order (as JS objects keep them).
    Map(Vec<(String, Data)>),
}

impl Data {
    /// A map from pairs.
    pub fn map<const N: usize>(pairs: [(&str, Data); N]) -> Data {
        Data::Map(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    pub fn str(s: &str) -> Data {
        Data::Str(s.to_string())
    }
}

/// Renders [`Data`] with a chosen [`Flavor`].
pub struct DataHost {
    pub flavor: Flavor,
    pub data: Rc<Data>,
}

/// A value handle: the shared tree and a path into it would be heavier than
/// a clone for tests; values are small.
pub type Handle = Rc<Data>;

impl Host for DataHost {
    type Value = Handle;

    fn flavor(&self) -> Flavor {
        self.flavor
    }
    fn data(&mut self) -> Handle {
        self.data.clone()
    }
    fn field(&mut self, obj: &Handle, key: &Key) -> Handle {
        match &**obj {
            Data::Map(pairs) => pairs
                .iter()
                .find(|(k, _)| **k == *key.name)
                .map_or(Rc::new(Data::Nil), |(_, v)| Rc::new(v.clone())),
            _ => Rc::new(Data::Nil),
        }
    }
    fn shape(&mut self, v: &Handle) -> Shape<'_> {
        match &**v {
            Data::Nil => Shape::Nil,
            Data::Bool(b) => Shape::Bool(*b),
            Data::Int(n) => Shape::Int(*n),
            Data::Float(f) => Shape::Float(*f),
            Data::Str(s) => Shape::Str(s.clone().into_bytes().into()),
            Data::List(_) | Data::Map(_) => Shape::Table,
        }
    }
    fn items(&mut self, v: &Handle) -> Result<usize, String> {
        match (&**v, self.flavor) {
            (Data::List(items), _) => Ok(items.len()),
            (Data::Map(_), Flavor::Lua) => Ok(0),
            _ => Err("not a list".into()),
        }
    }
    fn item(&mut self, v: &Handle, i: usize) -> Handle {
        match &**v {
            Data::List(items) => Rc::new(items.get(i).cloned().unwrap_or(Data::Nil)),
            _ => Rc::new(Data::Nil),
        }
    }
    fn entries(&mut self, v: &Handle) -> Result<Vec<(ItemKey, Handle)>, String> {
        Ok(match &**v {
            Data::List(items) => items
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let key = match self.flavor {
                        Flavor::Lua => ItemKey::Int(i as i64 + 1),
                        Flavor::Js => ItemKey::Str(i.to_string()),
                    };
                    (key, Rc::new(d.clone()))
                })
                .collect(),
            Data::Map(pairs) => pairs
                .iter()
                .map(|(k, d)| (ItemKey::Str(k.clone()), Rc::new(d.clone())))
                .collect(),
            _ => Vec::new(),
        })
    }
    fn count(&mut self, v: &Handle) -> usize {
        match &**v {
            Data::List(items) => items.len(),
            Data::Map(pairs) if self.flavor == Flavor::Js => pairs.len(),
            _ => 0,
        }
    }
    fn json(&mut self, v: &Handle, out: &mut Vec<u8>) -> Result<(), String> {
        write_json(v, out);
        Ok(())
    }
    fn display(&mut self, v: &Handle, out: &mut Vec<u8>) {
        out.extend_from_slice(match &**v {
            Data::List(_) => b"[list]",
            _ => b"[map]",
        });
    }
}

fn write_json(v: &Data, out: &mut Vec<u8>) {
    match v {
        Data::Nil => out.extend_from_slice(b"null"),
        Data::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Data::Int(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Data::Float(f) => out.extend_from_slice(f.to_string().as_bytes()),
        Data::Str(s) => crate::format::json_string(out, s.as_bytes()),
        Data::List(items) => {
            out.push(b'[');
            for (i, d) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json(d, out);
            }
            out.push(b']');
        }
        Data::Map(pairs) => {
            out.push(b'{');
            for (i, (k, d)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                crate::format::json_string(out, k.as_bytes());
                out.push(b':');
                write_json(d, out);
            }
            out.push(b'}');
        }
    }
}

/// Templates held in memory, by name.
#[derive(Default, Clone)]
pub struct MemLoader(pub HashMap<String, String>);

impl MemLoader {
    pub fn new<const N: usize>(files: [(&str, &str); N]) -> MemLoader {
        MemLoader(
            files
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }
}

impl Loader for MemLoader {
    fn load(&self, name: &str) -> io::Result<Vec<u8>> {
        self.0
            .get(name)
            .map(|s| s.clone().into_bytes())
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such file"))
    }
}

/// The shape of generated template data (the property tests of both
/// runtimes' template bindings).
#[derive(Clone, Debug)]
pub enum Schema {
    /// A boolean, number, string or null.
    Scalar,
    /// Fields by name (`a.b.c` reaches them).
    Record(Vec<(String, Schema)>),
    /// Items of one shape.
    List(Box<Schema>),
    /// Any string keys (only a `for k, v` loop reaches them), scalars.
    Bag,
}

/// A template that reads every field, item and entry of data of shape `s`
/// found at `path`, through tags, `if`, both `for` forms, `loop.*` and
/// each of `filters` on every scalar.
pub fn template_for(s: &Schema, path: &str, filters: &[&str]) -> String {
    let mut out = String::new();
    write_template(s, path, 0, filters, &mut out);
    out
}

fn write_template(s: &Schema, path: &str, depth: usize, filters: &[&str], out: &mut String) {
    let out_tag = |out: &mut String, expr: &str| {
        out.push_str("{{ ");
        out.push_str(expr);
        out.push_str(" }}");
    };
    match s {
        Schema::Scalar => {
            out.push('<');
            out_tag(out, path);
            out.push_str(&format!(
                "|{{{{{{ {path} }}}}}}|{{% if {path} %}}T{{% else %}}F{{% end %}}|"
            ));
            for filter in filters {
                out_tag(out, &format!("{path} | {filter}"));
            }
            out.push('>');
        }
        Schema::Record(fields) => {
            for (k, s) in fields {
                write_template(s, &format!("{path}.{k}"), depth, filters, out);
            }
            out_tag(out, &format!("{path}.nope.deeper"));
            out_tag(out, &format!("{path} | length"));
        }
        Schema::List(item) => {
            let x = format!("x{depth}");
            out.push_str(&format!("{{% for {x} in {path} %}}"));
            for l in [
                "loop.index",
                "loop.index0",
                "loop.first",
                "loop.last",
                "loop.length",
            ] {
                out_tag(out, l);
            }
            out.push('[');
            write_template(item, &x, depth + 1, filters, out);
            out.push_str("]{% end %}");
            out_tag(out, &format!("{path} | length"));
            let (k, v) = (format!("k{depth}"), format!("v{depth}"));
            out.push_str(&format!("{{% for {k}, {v} in {path} %}}"));
            out_tag(out, &k);
            out.push(':');
            write_template(item, &v, depth + 1, filters, out);
            out.push_str(";{% end %}");
        }
        Schema::Bag => {
            let (k, v) = (format!("k{depth}"), format!("v{depth}"));
            out.push_str(&format!("{{% for {k}, {v} in {path} %}}"));
            out_tag(out, &k);
            out.push('=');
            out_tag(out, &v);
            out.push_str(";{% end %}");
            out_tag(out, &format!("{path} | length"));
        }
    }
}
