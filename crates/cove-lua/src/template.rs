//! `require("hull.template")`: cove-template bound to Lua.
//!
//! The renderer reads the data table where it lies, on the Lua stack: each
//! value is a stack slot, fields are read with `lua_rawget` using keys kept
//! ready as Lua strings (one per interned name, in a table indexed by the
//! name's id), and the slots made for one output or loop item are popped
//! right after it. Through mlua's handles each field read cost ~1k
//! instructions; here it is a few dozen. Reads are raw: an `__index`
//! metamethod on template data is not consulted.
#![allow(unsafe_code)]

use std::cell::{Cell, RefCell};
use std::ffi::c_int;
use std::rc::Rc;

use mlua::{ffi, AnyUserData, Lua, Table, UserData, Value};

use cove_template::{render, Flavor, Host, ItemKey, Key, Shape, Template, Templates};

use crate::app_api::AppState;
use crate::globals::{fail, Outcome};
use crate::stack::{encode_at, stack_bytes};

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

/// Per-VM state: the template cache and the names made into Lua strings.
struct State {
    templates: RefCell<Templates>,
    /// `keys[id + 1]` is name `id` as a Lua string.
    keys: Table,
    /// How many names `keys` holds.
    ready: Cell<usize>,
    module: Table,
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
    let raw = lua.create_table()?;
    raw.raw_set(
        "render",
        lua.create_function(|lua, (name, data): (mlua::LuaString, Value)| {
            let name = name.to_str()?.to_string();
            let t = match state(lua)?.templates.borrow_mut().get(&name) {
                Ok(t) => t,
                Err(e) => return fail(lua, format!("template.render: {e}")),
            };
            run(lua, &t, data, "render")
        })?,
    )?;
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
    let module: Table = lua.load(WRAPPER).set_name("=[cove template]").call(raw)?;
    lua.set_app_data(Rc::new(State {
        templates: RefCell::new(Templates::new(files)),
        keys: lua.create_table()?,
        ready: Cell::new(0),
        module: module.clone(),
    }));
    Ok(Value::Table(module))
}

fn state(lua: &Lua) -> mlua::Result<Rc<State>> {
    lua.app_data_ref::<Rc<State>>()
        .map(|s| s.clone())
        .ok_or_else(|| mlua::Error::RuntimeError("hull.template is not loaded".into()))
}

/// Render `t` with `data`; `ok, html` or `false, message`.
fn run(lua: &Lua, t: &Template, data: Value, api: &str) -> mlua::Result<Outcome> {
    let st = state(lua)?;
    // Names compiled since the last render become Lua strings first, so the
    // renderer itself never allocates on the Lua side.
    {
        let templates = st.templates.borrow();
        let names = templates.names();
        for id in st.ready.get()..names.len() {
            if let Some(name) = names.get(id as u32) {
                st.keys.raw_set(id + 1, name)?;
            }
        }
        st.ready.set(names.len());
    }
    let mut result = Ok(Vec::new());
    let ready = st.ready.get();
    // SAFETY: the closure uses only functions that cannot raise a Lua
    // error (raw reads, `lua_next` on keys it got from the same table,
    // `lua_checkstack`, `lua_settop` on plain values) and strings already
    // on the stack, so no error unwinds through the renderer's frames.
    unsafe {
        lua.exec_raw::<()>((data, &st.keys), |state| {
            let top = ffi::lua_gettop(state);
            let mut host = LuaHost {
                state,
                data: top - 1,
                keys: top,
                ready,
                top,
                room: top,
            };
            result = render(t, &mut host);
            ffi::lua_settop(state, top);
        })?;
    }
    match result {
        Ok(out) => Ok((true, Value::String(lua.create_string(out)?))),
        Err(e) => fail(lua, format!("template.{api}: {e}")),
    }
}

/// Values are stack slots; slot 0 stands for a nil that has no slot.
/// The host keeps its own count of the stack top and of the room it made,
/// so marks, releases and most pushes need no call into Lua to check.
struct LuaHost {
    state: *mut ffi::lua_State,
    data: c_int,
    keys: c_int,
    ready: usize,
    top: c_int,
    room: c_int,
}

const NIL: c_int = 0;

impl LuaHost {
    fn is_table(&self, v: c_int) -> bool {
        // SAFETY: type checks read the stack only.
        v != NIL && unsafe { ffi::lua_type(self.state, v) } == ffi::LUA_TTABLE
    }

    /// Make room for `n` more slots (in steps, so most calls are a compare).
    fn reserve(&mut self, n: c_int) -> bool {
        if self.top + n <= self.room {
            return true;
        }
        // SAFETY: growing the stack reports failure instead of raising.
        if unsafe { ffi::lua_checkstack(self.state, n + 32) } == 0 {
            return false;
        }
        self.room = self.top + n + 32;
        true
    }

    /// The value of type `ty` just pushed, as a slot (NIL, popped, if nil).
    fn pushed(&mut self, ty: c_int) -> c_int {
        if ty == ffi::LUA_TNIL {
            // SAFETY: popping the nil this host just pushed.
            unsafe { ffi::lua_settop(self.state, self.top) };
            NIL
        } else {
            self.top += 1;
            self.top
        }
    }

    fn kind_name(&self, v: c_int) -> &'static str {
        // SAFETY: reading a type tag.
        match unsafe { ffi::lua_type(self.state, v) } {
            ffi::LUA_TSTRING => "a string",
            ffi::LUA_TNUMBER => "a number",
            ffi::LUA_TBOOLEAN => "a boolean",
            ffi::LUA_TFUNCTION => "a function",
            ffi::LUA_TTABLE => "a table",
            _ => "a userdata",
        }
    }
}

impl Host for LuaHost {
    type Value = c_int;

    fn flavor(&self) -> Flavor {
        Flavor::Lua
    }

    fn data(&mut self) -> c_int {
        self.data
    }

    fn field(&mut self, obj: &c_int, key: &Key) -> c_int {
        if !self.is_table(*obj) {
            return NIL;
        }
        // SAFETY: the key is a string already in `keys` (or, past the
        // interner's bound, pushed here: a short string), and `lua_rawget`
        // calls no metamethod.
        if !self.reserve(1) {
            return NIL;
        }
        let ty = unsafe {
            if (key.id as usize) < self.ready {
                ffi::lua_rawgeti(self.state, self.keys, key.id as ffi::lua_Integer + 1);
            } else {
                ffi::lua_pushlstring(self.state, key.name.as_ptr().cast(), key.name.len());
            }
            ffi::lua_rawget(self.state, *obj)
        };
        self.pushed(ty)
    }

    fn shape(&mut self, v: &c_int) -> Shape<'_> {
        if *v == NIL {
            return Shape::Nil;
        }
        let (state, v) = (self.state, *v);
        // SAFETY: reads of a value on the stack; `lua_tolstring` only on
        // strings (no conversion, no allocation); the bytes live as long as
        // the slot, which outlives this borrow of the host.
        unsafe {
            match ffi::lua_type(state, v) {
                ffi::LUA_TNIL | ffi::LUA_TNONE => Shape::Nil,
                ffi::LUA_TBOOLEAN => Shape::Bool(ffi::lua_toboolean(state, v) != 0),
                ffi::LUA_TNUMBER if ffi::lua_isinteger(state, v) != 0 => {
                    Shape::Int(ffi::lua_tointegerx(state, v, std::ptr::null_mut()))
                }
                ffi::LUA_TNUMBER => {
                    Shape::Float(ffi::lua_tonumberx(state, v, std::ptr::null_mut()))
                }
                ffi::LUA_TSTRING => Shape::Str(stack_bytes(state, v).into()),
                _ => Shape::Table,
            }
        }
    }

    fn items(&mut self, v: &c_int) -> Result<usize, String> {
        if !self.is_table(*v) {
            return Err(format!("cannot loop over {}", self.kind_name(*v)));
        }
        // `ipairs`: up to the first nil.
        let mut n = 0;
        if !self.reserve(1) {
            return Err("Lua stack exhausted".into());
        }
        // SAFETY: raw integer reads, each popped at once.
        unsafe {
            while ffi::lua_rawgeti(self.state, *v, n as ffi::lua_Integer + 1) != ffi::LUA_TNIL {
                ffi::lua_settop(self.state, -2);
                n += 1;
            }
            ffi::lua_settop(self.state, -2);
        }
        Ok(n)
    }

    fn item(&mut self, v: &c_int, i: usize) -> c_int {
        if !self.reserve(1) {
            return NIL;
        }
        // SAFETY: a raw integer read from a table.
        let ty = unsafe { ffi::lua_rawgeti(self.state, *v, i as ffi::lua_Integer + 1) };
        self.pushed(ty)
    }

    fn entries(&mut self, v: &c_int) -> Result<Vec<(ItemKey, c_int)>, String> {
        if !self.is_table(*v) {
            return Err(format!("cannot loop over {}", self.kind_name(*v)));
        }
        let state = self.state;
        let mut out = Vec::new();
        // SAFETY: `lua_next` with the key it returned last (copied, so the
        // original and its value stay on the stack as the entry's slots);
        // keys are read without conversion.
        unsafe {
            ffi::lua_pushnil(state);
            loop {
                if ffi::lua_checkstack(state, 3) == 0 {
                    return Err("table too large for the Lua stack".into());
                }
                if ffi::lua_next(state, *v) == 0 {
                    break;
                }
                let value = ffi::lua_gettop(state);
                let key = match ffi::lua_type(state, value - 1) {
                    ffi::LUA_TNUMBER if ffi::lua_isinteger(state, value - 1) != 0 => Some(
                        ItemKey::Int(ffi::lua_tointegerx(state, value - 1, std::ptr::null_mut())),
                    ),
                    ffi::LUA_TSTRING => Some(ItemKey::Str(
                        String::from_utf8_lossy(stack_bytes(state, value - 1)).into_owned(),
                    )),
                    _ => None,
                };
                if let Some(key) = key {
                    out.push((key, value));
                }
                ffi::lua_pushvalue(state, value - 1);
            }
            self.top = ffi::lua_gettop(state);
            self.room = self.top;
        }
        // `pairs` has no order; integer keys ascending, then names sorted,
        // so a page renders the same on every worker and every run.
        out.sort_by(|(a, _), (b, _)| match (a, b) {
            (ItemKey::Int(x), ItemKey::Int(y)) => x.cmp(y),
            (ItemKey::Int(_), ItemKey::Str(_)) => std::cmp::Ordering::Less,
            (ItemKey::Str(_), ItemKey::Int(_)) => std::cmp::Ordering::Greater,
            (ItemKey::Str(x), ItemKey::Str(y)) => x.cmp(y),
        });
        Ok(out)
    }

    fn count(&mut self, v: &c_int) -> usize {
        if !self.is_table(*v) {
            return 0;
        }
        // SAFETY: `#t` without metamethods.
        unsafe { ffi::lua_rawlen(self.state, *v) as usize }
    }

    fn json(&mut self, v: &c_int, out: &mut Vec<u8>) -> Result<(), String> {
        if *v == NIL {
            out.extend_from_slice(b"null");
            return Ok(());
        }
        // SAFETY: the JSON walker only reads (stack.rs).
        let bytes = unsafe { encode_at(self.state, *v) }.map_err(|e| e.to_string())?;
        out.extend_from_slice(&bytes);
        Ok(())
    }

    fn display(&mut self, v: &c_int, out: &mut Vec<u8>) {
        // `tostring` of a table or function (no `__tostring`: it could raise).
        // SAFETY: reading the pointer identity of a value.
        let ptr = unsafe { ffi::lua_topointer(self.state, *v) };
        let kind = self.kind_name(*v).trim_start_matches("a ");
        out.extend_from_slice(format!("{kind}: {ptr:p}").as_bytes());
    }

    fn mark(&mut self) -> usize {
        self.top as usize
    }

    fn release(&mut self, mark: usize) {
        let mark = mark as c_int;
        if mark != self.top {
            // SAFETY: popping plain values this host pushed above `mark`.
            unsafe { ffi::lua_settop(self.state, mark) };
            self.top = mark;
        }
    }
}
