//! `require("hull.template")`: cove-template bound to Lua.
//!
//! The renderer reads the data table where it lies, on the Lua stack
//! (raw/template.rs): through mlua's handles each field read cost ~1k
//! instructions; there it is a few dozen. Reads are raw: an `__index`
//! metamethod on template data is not consulted.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use mlua::{AnyUserData, Lua, Table, UserData, Value};

use cove_core::AppFiles;
use cove_template::{Template, Templates};

use crate::app_api::AppState;
use crate::globals::{fail, Outcome};
use crate::raw::template::{kind_name, render_at, Slots};
use crate::raw::{self, upvalue, CFnWith, FlagAndBytes, Stack};

/// The module name apps require.
pub(crate) const MODULE: &str = "hull.template";

/// Raises the raw functions' failures at the caller's line, as the
/// prelude does for the other modules.
const WRAPPER: &str = r#"
local raw = ...
local error = error
local function wrap(f)
  return function(...)
    local ok, r = f(...)
    if ok then return r end
    error(r, 2)
  end
end
local render_compiled = raw.render_compiled
return {
  render = wrap(raw.render),
  render_string = wrap(raw.render_string),
  compile = function(name)
    local ok, t = raw.compile(name)
    if not ok then error(t, 2) end
    return function(data)
      local ok2, out = render_compiled(t, data)
      if ok2 then return out end
      error(out, 2)
    end
  end,
  clear_cache = raw.clear_cache,
}
"#;

/// Per-VM state: the renderer's [`Core`], the names made into Lua strings
/// and the module table.
struct State {
    core: Rc<Core>,
    /// `keys[id + 1]` is name `id` as a Lua string.
    keys: Table,
    module: Table,
}

/// What `template.render` reads on every call (it holds it: no Lua
/// handles, so it can be dropped while the VM closes).
struct Core {
    templates: RefCell<Templates>,
    /// How many names `keys` holds.
    ready: Cell<usize>,
    /// The renderer's key slots, kept between renders.
    slots: Slots,
    /// The page being rendered, or the last failure's message; kept (with
    /// its capacity) from one render to the next.
    page: RefCell<Vec<u8>>,
}

impl std::ops::Deref for State {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.core
    }
}

/// A compiled template handed to Lua by `template.compile`.
struct Compiled(Rc<Template>);
impl UserData for Compiled {}

/// The module table (made once per VM).
pub(crate) fn module(lua: &Lua) -> mlua::Result<Value> {
    if let Some(st) = lua.app_data_ref::<Rc<State>>() {
        return Ok(Value::Table(st.module.clone()));
    }
    let files = lua
        .app_data_ref::<AppState>()
        .map(|s| s.files.clone())
        .ok_or_else(|| mlua::Error::RuntimeError("hull.template: no app files".into()))?;
    build(lua, files)
}

impl crate::LuaEngine {
    /// Compile every template of `files` (the app's) into this VM's cache,
    /// making the cache if the app has not required `hull.template` (yet).
    /// `cove dev` does it in each VM it builds: a template that does not
    /// parse fails the load, and the VM renders the templates it was built
    /// with, whatever is saved over them later.
    pub fn compile_templates(&self, files: &AppFiles) -> Result<usize, Vec<cove_template::Error>> {
        let lua = &self.lua;
        if lua.app_data_ref::<Rc<State>>().is_none() {
            build(lua, files.clone()).map_err(|e| {
                vec![cove_template::Error::bare(
                    cove_template::ErrorKind::Render,
                    format!("hull.template: {e}"),
                )]
            })?;
        }
        let st = lua.app_data_ref::<Rc<State>>().map(|st| Rc::clone(&st));
        match st {
            Some(st) => st.templates.borrow_mut().compile_all(),
            None => Ok(0),
        }
    }
}

/// Make the module table and the VM's template state.
fn build(lua: &Lua, files: AppFiles) -> mlua::Result<Value> {
    let raw = lua.create_table()?;
    raw.raw_set(
        "render_string",
        lua.create_function(|lua, (source, data): (mlua::LuaString, Value)| {
            let t = match std::str::from_utf8(&source.as_bytes()) {
                Ok(src) => state(lua)?.templates.borrow_mut().compile_str(src),
                Err(_) => {
                    return fail(
                        lua,
                        "template.render_string: the template is not valid UTF-8",
                    )
                }
            };
            match t {
                Ok(t) => run(lua, &t, data, "render_string"),
                Err(e) => fail(lua, format!("template.render_string: {e}")),
            }
        })?,
    )?;
    raw.raw_set(
        "compile",
        lua.create_function(|lua, name: mlua::LuaString| {
            let name = name.to_str()?.to_string();
            match state(lua)?.templates.borrow_mut().get(&name) {
                Ok(t) => Ok((true, Value::UserData(lua.create_userdata(Compiled(t))?))),
                Err(e) => fail(lua, format!("template.compile: {e}")),
            }
        })?,
    )?;
    raw.raw_set(
        "render_compiled",
        lua.create_function(|lua, (t, data): (AnyUserData, Value)| {
            let t = t.borrow::<Compiled>()?.0.clone();
            run(lua, &t, data, "render")
        })?,
    )?;
    raw.raw_set(
        "clear_cache",
        lua.create_function(|lua, ()| {
            state(lua)?.templates.borrow_mut().clear();
            Ok(())
        })?,
    )?;
    let keys = lua.create_table()?;
    // Filled in below: the module table is made from `raw`, and the state
    // holds the module.
    let module: Table = lua.create_table()?;
    let core = Rc::new(Core {
        templates: RefCell::new(Templates::new(files)),
        ready: Cell::new(0),
        slots: Slots::default(),
        page: RefCell::new(Vec::new()),
    });
    let st = Rc::new(State {
        core: core.clone(),
        keys: keys.clone(),
        module: module.clone(),
    });
    // A closure owning the core, over the table of names.
    let (_, render): (Table, mlua::Function) = raw::exec(lua, keys, |s| {
        s.push_value(1);
        s.push_closure_with::<RenderRaw>(core, 1);
    })?;
    raw.raw_set("render", render)?;
    let made: Table = lua.load(WRAPPER).set_name("=[cove template]").call(raw)?;
    for pair in made.pairs::<Value, Value>() {
        let (k, v) = pair?;
        module.raw_set(k, v)?;
    }
    lua.set_app_data(st);
    Ok(Value::Table(module))
}

/// Make Lua strings of the names compiled since the last render (so the
/// renderer itself never allocates on the Lua side).
fn sync_names(st: &State) -> mlua::Result<()> {
    let templates = st.templates.borrow();
    let names = templates.names();
    for id in st.ready.get()..names.len() {
        if let Some(name) = names.get(id as u32) {
            st.keys.raw_set(id + 1, name)?;
        }
    }
    st.ready.set(names.len());
    Ok(())
}

/// `template.render(name, data)` as a plain C function: `true, page` or
/// `false, message`. mlua's callback machinery, argument conversion and a
/// protected call around the push cost ~5k instructions a render; here the
/// arguments are read off the stack and the page is pushed from the
/// buffer kept in the core. Upvalue 2: the table of names.
struct RenderRaw;
impl CFnWith for RenderRaw {
    type Data = Rc<Core>;

    fn call<'d>(s: &mut Stack<'_>, core: &'d Rc<Core>) -> Result<FlagAndBytes<'d>, String> {
        let mut step = render_page(s, core);
        if step == Step::Sync {
            let synced = state(s.lua()).and_then(|st| sync_names(&st));
            step = match synced {
                Ok(()) => render_page(s, core),
                Err(e) => {
                    if let Ok(mut page) = core.page.try_borrow_mut() {
                        page.clear();
                        page.extend_from_slice(format!("template.render: {e}").as_bytes());
                    }
                    Step::Failed
                }
            };
        }
        Ok(FlagAndBytes(step == Step::Done, &core.page))
    }
}

#[derive(PartialEq, Eq)]
enum Step {
    /// The page is in `State::page`.
    Done,
    /// A failure's message is in `State::page`.
    Failed,
    /// Names must become Lua strings first; then call again.
    Sync,
}

/// Render the template named by stack slot 1 with slot 2 into the state's
/// page buffer. Everything it makes is dropped when it returns.
fn render_page(s: &mut Stack<'_>, st: &Core) -> Step {
    let Ok(mut page) = st.page.try_borrow_mut() else {
        return Step::Failed;
    };
    let fail = |page: &mut Vec<u8>, msg: String| {
        page.clear();
        page.extend_from_slice(msg.as_bytes());
        Step::Failed
    };
    let Some(name) = s.arg_str(1) else {
        let got = kind_name(s.ty(1));
        return fail(
            &mut page,
            format!("template.render: the template name must be a string, got {got}"),
        );
    };
    let Ok(name) = std::str::from_utf8(name) else {
        return fail(
            &mut page,
            "template.render: the name is not valid UTF-8".into(),
        );
    };
    let t = match st.templates.borrow_mut().get(name) {
        Ok(t) => t,
        Err(e) => return fail(&mut page, format!("template.render: {e}")),
    };
    if st.templates.borrow().names().len() != st.ready.get() {
        return Step::Sync;
    }
    let ready = st.ready.get();
    match render_at(s, &st.slots, ready, &t, 2, upvalue(2), &mut page) {
        Ok(()) => Step::Done,
        Err(e) => fail(&mut page, format!("template.render: {e}")),
    }
}

fn state(lua: &Lua) -> mlua::Result<Rc<State>> {
    lua.app_data_ref::<Rc<State>>()
        .map(|s| s.clone())
        .ok_or_else(|| mlua::Error::RuntimeError("hull.template is not loaded".into()))
}

/// Render `t` with `data`; `ok, html` or `false, message`.
fn run(lua: &Lua, t: &Template, data: Value, api: &str) -> mlua::Result<Outcome> {
    let st = state(lua)?;
    sync_names(&st)?;
    let mut page = Vec::new();
    let mut result = Ok(());
    raw::exec::<()>(lua, (data, &st.keys), |s| {
        result = render_at(s, &st.slots, st.ready.get(), t, 1, 2, &mut page);
    })?;
    match result {
        Ok(()) => Ok((true, Value::String(lua.create_string(page)?))),
        Err(e) => fail(lua, format!("template.{api}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use cove_core::{AppFiles, Pack};

    use super::*;

    fn lua_with(files: &[(&str, &str)]) -> Lua {
        let files: BTreeMap<String, Vec<u8>> = files
            .iter()
            .map(|(k, v)| (format!("templates/{k}"), v.as_bytes().to_vec()))
            .collect();
        let pack = Pack {
            name: "test".into(),
            files,
        };
        let lua = Lua::new();
        lua.set_app_data(AppState::new(AppFiles::Pack(Arc::new(pack))));
        let m = module(&lua).unwrap();
        lua.globals().set("template", m).unwrap();
        lua
    }

    /// Values are held on the stack for a few nodes and released together;
    /// key strings are pushed once per render. Many outputs, nil reads,
    /// nested loops, `for k, v` and partials inside loops must come out
    /// right, render after render.
    #[test]
    fn stack_stays_balanced_across_batched_releases() {
        let row = "{{ r.n }}{{ r.missing }}{{ r.name | upper }}{% if r.on %}+{% else %}-{% end %}";
        let lua = lua_with(&[
            ("row.html", row),
            (
                "page.html",
                "{% for r in rows %}{% include \"row.html\" %}[{% for c in r.cells %}{{ c }}{{ nope.x.y }},{% end %}]{% end %}|{% for k, v in map %}{{ k }}={{ v }};{% end %}{{ title }}",
            ),
        ]);
        let check: (i64, bool) = lua
            .load(
                r#"
                local rows, map = {}, {}
                for i = 1, 300 do
                  rows[i] = { n = i, name = "r" .. i, on = i % 2 == 0, cells = { i, i + 1 } }
                end
                for i = 1, 40 do map["k" .. string.format("%02d", i)] = i end
                local want = {}
                for i = 1, 300 do
                  want[#want + 1] = i .. "R" .. i .. (i % 2 == 0 and "+" or "-") .. "[" .. i .. "," .. (i + 1) .. ",]"
                end
                want[#want + 1] = "|"
                for i = 1, 40 do want[#want + 1] = "k" .. string.format("%02d", i) .. "=" .. i .. ";" end
                want[#want + 1] = "T"
                want = table.concat(want)
                local data = { rows = rows, map = map, title = "T" }
                for _ = 1, 3 do
                  assert(template.render("page.html", data) == want)
                end
                -- Items kept on the stack by the loop: the same list nested,
                -- a list with a hole (ipairs stops there), and one longer
                -- than what is kept (counted and read the other way).
                local nested = template.render_string(
                  "{% for a in s %}{% for b in s %}{{ a }}{{ b }}{% if loop.last %};{% end %}{% end %}{{ loop.length }}|{% end %}",
                  { s = { "x", "y" } })
                assert(nested == "xxxy;2|yxyy;2|", nested)
                -- Two loops at once over the same loop variable's slot.
                local same = template.render_string(
                  "{% for r in g %}{% for a in r %}{% for b in r %}{{ a }}{{ b }}{% end %}{% if loop.last %}!{% end %};{% end %}|{% end %}",
                  { g = { { 1, 2 }, { 3 } } })
                assert(same == "1112;2122!;|33!;|", same)
                assert(template.render_string("{% for v in h %}{{ v }}{% end %}", { h = { 1, 2, nil, 4 } }) == "12")
                local big = {}
                for i = 1, 1500 do big[i] = i % 10 end
                local digits = template.render_string("{% for v in big %}{{ v }}{% end %}{{ big | length }}", { big = big })
                assert(digits == string.rep("1234567890", 150) .. "1500", #digits)
                -- Many outputs outside any loop (more than one batch).
                local src = string.rep("{{ a }}{{ b.c }}{{ zz }}", 500)
                local out = template.render_string(src, { a = 1, b = { c = 2 } })
                return #out, out == string.rep("12", 500)
                "#,
            )
            .eval()
            .unwrap();
        assert_eq!(check, (1000, true));
    }
}
