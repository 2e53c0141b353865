//! The catalog (crates/cove-caps/src/api) declares exactly what each
//! runtime exposes: an app in each language lists the functions it can
//! reach on every module, on `req` and on `res`, and the lists must equal
//! the catalog's. (The test API, a global of test files only, is checked
//! by its own tests.)

use std::collections::{BTreeMap, BTreeSet};

use cove_caps::api::{modules, Lang, Module};

use crate::util::Server;

/// Modules the request-time app cannot reach.
fn listed(m: &Module) -> bool {
    !m.private && (m.js.starts_with("hull:"))
}

fn lua_app() -> String {
    let mut reach = String::new();
    for m in modules().iter().filter(|m| listed(m)) {
        let expr = match (m.lua_global, m.lua_require) {
            (_, Some(r)) => format!("require({r:?})"),
            (Some(g), None) => g.to_string(),
            (None, None) => continue,
        };
        reach.push_str(&format!("  out[{:?}] = fns({expr})\n", m.js));
    }
    format!(
        r#"
local function fns(v)
  local names, seen = {{}}, {{}}
  local function add(t)
    if type(t) ~= "table" then return end
    for k, x in pairs(t) do
      if type(x) == "function" and type(k) == "string" and not seen[k] then
        seen[k] = true
        names[#names + 1] = k
      end
    end
  end
  add(v)
  local mt = getmetatable(v)
  if type(mt) == "table" then add(mt.__index) end
  table.sort(names)
  return names
end

app.get("/api", function(req, res)
  local out = {{}}
{reach}  out.Request = fns(req)
  out.Response = fns(res)
  return res:json(out)
end)
"#
    )
}

fn js_app() -> String {
    let mut imports = String::new();
    let mut reach = String::new();
    for (i, m) in modules().iter().filter(|m| listed(m)).enumerate() {
        imports.push_str(&format!("import * as m{i} from {:?};\n", m.js));
        reach.push_str(&format!(
            "  out[{:?}] = fns(Object.values(m{i})[0]);\n",
            m.js
        ));
    }
    format!(
        r#"{imports}
import {{ app as theApp }} from "hull:app";
// Cove removes the global `Function`; its prototype is reached this way.
const FP = Object.getPrototypeOf(function () {{}});
function fns(v) {{
  const names = new Set();
  for (let o = v; o && o !== Object.prototype && o !== FP; o = Object.getPrototypeOf(o)) {{
    for (const k of Object.getOwnPropertyNames(o)) {{
      const d = Object.getOwnPropertyDescriptor(o, k);
      if (d && typeof d.value === "function" && k !== "constructor") names.add(k);
    }}
  }}
  return [...names].sort();
}}
theApp.get("/api", (req, res) => {{
  const out = {{}};
{reach}  out.Request = fns(req);
  out.Response = fns(res);
  return res.json(out);
}});
"#
    )
}

/// What the catalog says `lang` exposes, by module specifier (and
/// `Request`/`Response` for the handler's objects).
fn declared(lang: Lang) -> BTreeMap<String, BTreeSet<String>> {
    let mut want = BTreeMap::new();
    for m in modules().iter().filter(|m| listed(m)) {
        let names = m
            .functions
            .iter()
            .filter_map(|s| s.name(lang))
            .map(String::from);
        want.insert(m.js.to_string(), names.collect());
        for t in m
            .types
            .iter()
            .filter(|t| matches!(t.name, "Request" | "Response"))
        {
            let names = t
                .methods
                .iter()
                .filter_map(|s| s.name(lang))
                .map(String::from);
            want.insert(t.name.to_string(), names.collect());
        }
    }
    want
}

fn exposed(file: &str, source: String) -> BTreeMap<String, BTreeSet<String>> {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = dir.path().join(file);
    std::fs::write(&app, source).expect("write app");
    let s = Server::start(&app, &["--workers", "1"]);
    let r = s.get("/api");
    assert_eq!(r.status, 200, "{}\n{}", r.text(), s.log());
    let got: BTreeMap<String, Vec<String>> = serde_json::from_value(r.json()).expect("lists");
    got.into_iter()
        .map(|(k, v)| (k, v.into_iter().collect()))
        .collect()
}

fn compare(lang: Lang, got: BTreeMap<String, BTreeSet<String>>) {
    let want = declared(lang);
    let mut wrong = Vec::new();
    for (module, names) in &want {
        let have = got.get(module).cloned().unwrap_or_default();
        let missing: Vec<_> = names.difference(&have).collect();
        let undeclared: Vec<_> = have.difference(names).collect();
        if !missing.is_empty() || !undeclared.is_empty() {
            wrong.push(format!(
                "{module}: declared but not exposed {missing:?}; exposed but not declared {undeclared:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{lang:?}:\n  {}", wrong.join("\n  "));
}

#[test]
fn lua_exposes_what_the_catalog_declares() {
    compare(Lang::Lua, exposed("app.lua", lua_app()));
}

#[test]
fn js_exposes_what_the_catalog_declares() {
    compare(Lang::Js, exposed("app.js", js_app()));
}
