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

use cove_core::AppFiles;
use cove_template::{render_into, Flavor, Host, ItemKey, Key, Shape, Template, Templates};

use crate::app_api::AppState;
use crate::globals::{fail, Outcome};
use crate::stack::encode_at;
use crate::view::stack_bytes;

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
    /// Per name id: the render (`generation`) that pushed the key string and
    /// its stack slot. Kept between renders so no render allocates it.
    slots: RefCell<Vec<(u32, c_int)>>,
    generation: Cell<u32>,
    /// The page being rendered, or the last failure's message; kept (with
    /// its capacity) from one render to the next.
    page: RefCell<Vec<u8>>,
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
    let sync = lua.create_function(|lua, ()| sync_names(&*state(lua)?))?;
    // Filled in below: the module table is made from `raw`, and the state
    // holds the module.
    let module: Table = lua.create_table()?;
    let st = Rc::new(State {
        templates: RefCell::new(Templates::new(files)),
        keys: keys.clone(),
        ready: Cell::new(0),
        slots: RefCell::new(Vec::new()),
        generation: Cell::new(0),
        page: RefCell::new(Vec::new()),
        module: module.clone(),
    });
    // SAFETY: the closure's first upvalue points at the state, which the
    // VM's app data owns for as long as the VM (and so the closure) lives.
    let render: mlua::Function = unsafe {
        lua.exec_raw((keys, sync), |state| {
            ffi::lua_pushlightuserdata(state, Rc::as_ptr(&st).cast_mut().cast());
            ffi::lua_rotate(state, -3, 1);
            ffi::lua_pushcclosure(state, render_raw, 3);
        })?
    };
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
/// arguments are read off the stack and the page is pushed from a buffer
/// kept in the state. Lua calls (the name sync, the pushes, which can
/// raise a memory error) are made only while no Rust value that needs
/// dropping is alive.
unsafe extern "C-unwind" fn render_raw(state: *mut ffi::lua_State) -> c_int {
    // SAFETY (whole function): see `module` for the state pointer; the
    // stack holds the arguments, padded to two.
    let st = &*ffi::lua_touserdata(state, ffi::lua_upvalueindex(1)).cast::<State>();
    ffi::lua_settop(state, 2);
    let mut step = render_page(state, st);
    if step == Step::Sync {
        ffi::lua_pushvalue(state, ffi::lua_upvalueindex(3));
        ffi::lua_callk(state, 0, 0, 0, None);
        step = render_page(state, st);
    }
    const BUSY: &[u8] = b"template.render: called while rendering";
    let (ptr, len) = match st.page.try_borrow() {
        Ok(page) => (page.as_ptr(), page.len()),
        Err(_) => (BUSY.as_ptr(), BUSY.len()),
    };
    ffi::lua_pushboolean(state, c_int::from(step == Step::Done));
    ffi::lua_pushlstring(state, ptr.cast(), len);
    2
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
unsafe fn render_page(state: *mut ffi::lua_State, st: &State) -> Step {
    let Ok(mut page) = st.page.try_borrow_mut() else {
        return Step::Failed;
    };
    let fail = |page: &mut Vec<u8>, msg: String| {
        page.clear();
        page.extend_from_slice(msg.as_bytes());
        Step::Failed
    };
    if ffi::lua_type(state, 1) != ffi::LUA_TSTRING {
        let got = kind_name(ffi::lua_type(state, 1));
        return fail(
            &mut page,
            format!("template.render: the template name must be a string, got {got}"),
        );
    }
    let Ok(name) = std::str::from_utf8(stack_bytes(state, 1)) else {
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
    match render_at(state, st, &t, 2, ffi::lua_upvalueindex(2), &mut page) {
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
    // SAFETY: `render_at` calls only functions that cannot raise a Lua
    // error, so no error unwinds through the renderer's frames.
    unsafe {
        lua.exec_raw::<()>((data, &st.keys), |state| {
            let top = ffi::lua_gettop(state);
            result = render_at(state, &st, t, top - 1, top, &mut page);
        })?;
    }
    match result {
        Ok(()) => Ok((true, Value::String(lua.create_string(page)?))),
        Err(e) => fail(lua, format!("template.{api}: {e}")),
    }
}

/// Render `t` with the value at stack slot `data` into `out`; `keys` is
/// the slot (or upvalue) of the table of name strings, which `sync_names`
/// has filled. Uses only functions that cannot raise a Lua error (raw
/// reads, `lua_next` on keys it got from the same table, `lua_checkstack`,
/// `lua_settop` on plain values) and strings already on the stack; the
/// stack is as it found it when it returns.
unsafe fn render_at(
    state: *mut ffi::lua_State,
    st: &State,
    t: &Template,
    data: c_int,
    keys: c_int,
    out: &mut Vec<u8>,
) -> Result<(), cove_template::Error> {
    let ready = st.ready.get();
    let Ok(mut slots) = st.slots.try_borrow_mut() else {
        return Err(cove_template::Error::bare(
            cove_template::ErrorKind::Render,
            "called while rendering",
        ));
    };
    slots.resize(ready, (0, 0));
    let mut generation = st.generation.get().wrapping_add(1);
    if generation == 0 {
        // Wrapped: entries of an old render must not look current.
        slots.fill((0, 0));
        generation = 1;
    }
    st.generation.set(generation);
    let top = ffi::lua_gettop(state);
    let mut host = LuaHost {
        state,
        data: Slot {
            idx: data,
            ty: ffi::lua_type(state, data),
        },
        keys,
        ready,
        slots: &mut slots,
        generation,
        top,
        room: top,
        kept: Vec::new(),
    };
    let result = render_into(t, &mut host, out);
    ffi::lua_settop(state, top);
    result
}

/// A value: its stack slot and its type, known from the call that pushed
/// it (so reading a value's shape needs no `lua_type` call).
#[derive(Clone, Copy)]
struct Slot {
    idx: c_int,
    ty: c_int,
}

/// A nil that has no slot.
const NIL: Slot = Slot {
    idx: 0,
    ty: ffi::LUA_TNIL,
};

/// Values are stack slots. The host keeps its own count of the stack top
/// and of the room it made, so marks, releases and most pushes need no call
/// into Lua to check.
struct LuaHost<'a> {
    state: *mut ffi::lua_State,
    data: Slot,
    keys: c_int,
    ready: usize,
    /// Name id → (generation, slot) of the key strings `prepare` pushed.
    slots: &'a mut [(u32, c_int)],
    generation: u32,
    top: c_int,
    room: c_int,
    /// Per running `{% for x in … %}`, innermost last: the list's slot and
    /// the slot below its items when `items` kept them on the stack.
    kept: Vec<Option<(c_int, c_int)>>,
}

/// The most items a loop keeps on the Lua stack.
const KEEP: usize = 1024;

impl LuaHost<'_> {
    /// Make room for `n` more slots (in steps, so most calls are a compare).
    #[inline]
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

    /// Turn a packed `db.query` result into plain rows before reading it
    /// raw (rows.rs); other values are left alone.
    #[inline]
    fn plain(&mut self, v: &Slot) {
        if v.ty == ffi::LUA_TTABLE && self.reserve(4) {
            // SAFETY: with the heap cap lifted nothing here raises; the
            // stack above `top` is scratch space, restored on return.
            unsafe { crate::rows::unpack_uncapped(self.state, v.idx) };
        }
    }

    /// Push `obj[key]`, read raw; returns its type.
    #[inline]
    fn raw_field(&mut self, obj: &Slot, key: &Key) -> c_int {
        let id = key.id as usize;
        // SAFETY: the key is a string on the stack since `prepare`, or in
        // `keys` (or, past the interner's bound, pushed here: a short
        // string), and `lua_rawget` calls no metamethod.
        unsafe {
            match self.slots.get(id) {
                Some(&(g, idx)) if g == self.generation => ffi::lua_pushvalue(self.state, idx),
                _ if id < self.ready => {
                    ffi::lua_rawgeti(self.state, self.keys, id as ffi::lua_Integer + 1);
                }
                _ => {
                    ffi::lua_pushlstring(self.state, key.name.as_ptr().cast(), key.name.len());
                }
            }
            ffi::lua_rawget(self.state, obj.idx)
        }
    }

    /// A field read found nil (pushed): if `obj` is a req table, its fields
    /// built on first read are set and the field is read again. Out of
    /// line: only a missing field pays for the check.
    #[cold]
    #[inline(never)]
    fn missing_field(&mut self, obj: &Slot, key: &Key) -> c_int {
        if !self.reserve(4) {
            return ffi::LUA_TNIL;
        }
        // SAFETY: the nil just pushed is popped; `fill` keeps the stack
        // and, with the heap cap lifted, raises nothing.
        unsafe {
            ffi::lua_settop(self.state, -2);
            if crate::req::fill_if_req(self.state, obj.idx) {
                return self.raw_field(obj, key);
            }
            ffi::lua_pushnil(self.state);
        }
        ffi::LUA_TNIL
    }

    /// The value of type `ty` just pushed (a nil keeps its slot too: the
    /// next release pops it with the rest, one `lua_settop` less).
    #[inline]
    fn pushed(&mut self, ty: c_int) -> Slot {
        self.top += 1;
        Slot { idx: self.top, ty }
    }
}

fn kind_name(ty: c_int) -> &'static str {
    match ty {
        ffi::LUA_TNIL | ffi::LUA_TNONE => "nil",
        ffi::LUA_TSTRING => "a string",
        ffi::LUA_TNUMBER => "a number",
        ffi::LUA_TBOOLEAN => "a boolean",
        ffi::LUA_TFUNCTION => "a function",
        ffi::LUA_TTABLE => "a table",
        _ => "a userdata",
    }
}

impl Host for LuaHost<'_> {
    type Value = Slot;

    fn flavor(&self) -> Flavor {
        Flavor::Lua
    }

    fn data(&mut self) -> Slot {
        self.data
    }

    #[inline]
    fn field(&mut self, obj: &Slot, key: &Key) -> Slot {
        // No `plain` here: a name read from a packed result finds nothing,
        // as it would in the plain array (only integer keys), and this is
        // the renderer's hottest read.
        if obj.ty != ffi::LUA_TTABLE || !self.reserve(1) {
            return NIL;
        }
        let mut ty = self.raw_field(obj, key);
        if ty == ffi::LUA_TNIL {
            ty = self.missing_field(obj, key);
        }
        self.pushed(ty)
    }

    fn prepare(&mut self, keys: &[Key]) {
        // A `lua_pushvalue` from a slot per read instead of a `lua_rawgeti`
        // from the keys table (~35 instructions less a read).
        if !self.reserve(keys.len() as c_int) {
            return;
        }
        for k in keys {
            let id = k.id as usize;
            if id >= self.ready || id >= self.slots.len() {
                continue;
            }
            // SAFETY: a raw integer read from the keys table, room reserved.
            unsafe { ffi::lua_rawgeti(self.state, self.keys, id as ffi::lua_Integer + 1) };
            self.top += 1;
            self.slots[id] = (self.generation, self.top);
        }
    }

    #[inline]
    fn shape(&mut self, v: &Slot) -> Shape<'_> {
        let (state, idx) = (self.state, v.idx);
        // The type was read when the slot was pushed, so the value is read
        // here directly: mapped through view.rs's `View` this cost ~1k
        // instructions on the template benchmark's `/full` (+1.3%).
        // SAFETY: reads of a value on the stack; `lua_tolstring` only on
        // strings (no conversion, no allocation); the bytes live as long as
        // the slot, which outlives this borrow of the host.
        unsafe {
            match v.ty {
                ffi::LUA_TNIL | ffi::LUA_TNONE => Shape::Nil,
                ffi::LUA_TBOOLEAN => Shape::Bool(ffi::lua_toboolean(state, idx) != 0),
                ffi::LUA_TNUMBER if ffi::lua_isinteger(state, idx) != 0 => {
                    Shape::Int(ffi::lua_tointegerx(state, idx, std::ptr::null_mut()))
                }
                ffi::LUA_TNUMBER => {
                    Shape::Float(ffi::lua_tonumberx(state, idx, std::ptr::null_mut()))
                }
                ffi::LUA_TSTRING => Shape::Str(stack_bytes(state, idx).into()),
                _ => Shape::Table,
            }
        }
    }
    fn items(&mut self, v: &Slot) -> Result<usize, String> {
        if v.ty != ffi::LUA_TTABLE {
            return Err(format!("cannot loop over {}", kind_name(v.ty)));
        }
        self.plain(v);
        // `ipairs`: up to the first nil. The items counted stay on the stack
        // for `item` (one read per item, no pop per count), up to `KEEP`.
        let base = self.top;
        let mut n = 0;
        while n < KEEP && self.reserve(1) {
            // SAFETY: a raw integer read, room reserved.
            let ty = unsafe { ffi::lua_rawgeti(self.state, v.idx, n as ffi::lua_Integer + 1) };
            self.top += 1;
            if ty == ffi::LUA_TNIL {
                self.kept.push(Some((v.idx, base)));
                return Ok(n);
            }
            n += 1;
        }
        self.release(base as usize);
        self.kept.push(None);
        if !self.reserve(1) {
            return Err("Lua stack exhausted".into());
        }
        // Too long to keep: counted, each popped at once.
        // SAFETY: raw integer reads, each popped at once.
        unsafe {
            while ffi::lua_rawgeti(self.state, v.idx, n as ffi::lua_Integer + 1) != ffi::LUA_TNIL {
                ffi::lua_settop(self.state, self.top);
                n += 1;
            }
            ffi::lua_settop(self.state, self.top);
        }
        Ok(n)
    }

    #[inline]
    fn item(&mut self, v: &Slot, i: usize) -> Slot {
        if let Some(&Some((table, base))) = self.kept.last() {
            if table == v.idx {
                let idx = base + 1 + i as c_int;
                // SAFETY: the item's slot, kept since `items` (the
                // renderer releases nothing below a loop while it runs).
                let ty = unsafe { ffi::lua_type(self.state, idx) };
                return Slot { idx, ty };
            }
        }
        if !self.reserve(1) {
            return NIL;
        }
        // SAFETY: a raw integer read from a table.
        let ty = unsafe { ffi::lua_rawgeti(self.state, v.idx, i as ffi::lua_Integer + 1) };
        self.pushed(ty)
    }

    fn end_items(&mut self, _v: &Slot) {
        self.kept.pop();
    }

    fn entries(&mut self, v: &Slot) -> Result<Vec<(ItemKey, Slot)>, String> {
        if v.ty != ffi::LUA_TTABLE {
            return Err(format!("cannot loop over {}", kind_name(v.ty)));
        }
        self.plain(v);
        if self.reserve(4) {
            // SAFETY: `fill` keeps the stack and, uncapped, raises nothing.
            unsafe { crate::req::fill_if_req(self.state, v.idx) };
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
                if ffi::lua_next(state, v.idx) == 0 {
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
                    let ty = ffi::lua_type(state, value);
                    out.push((key, Slot { idx: value, ty }));
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

    fn count(&mut self, v: &Slot) -> usize {
        if v.ty != ffi::LUA_TTABLE {
            return 0;
        }
        self.plain(v);
        // SAFETY: `#t` without metamethods.
        unsafe { ffi::lua_rawlen(self.state, v.idx) as usize }
    }

    fn json(&mut self, v: &Slot, out: &mut Vec<u8>) -> Result<(), String> {
        if v.idx == 0 || v.ty == ffi::LUA_TNIL {
            out.extend_from_slice(b"null");
            return Ok(());
        }
        // SAFETY: the JSON walker only reads (stack.rs).
        let bytes = unsafe { encode_at(self.state, v.idx) }.map_err(|e| e.to_string())?;
        out.extend_from_slice(&bytes);
        Ok(())
    }

    fn display(&mut self, v: &Slot, out: &mut Vec<u8>) {
        // `tostring` of a table or function (no `__tostring`: it could raise).
        // SAFETY: reading the pointer identity of a value.
        let ptr = unsafe { ffi::lua_topointer(self.state, v.idx) };
        let kind = kind_name(v.ty).trim_start_matches("a ");
        out.extend_from_slice(format!("{kind}: {ptr:p}").as_bytes());
    }

    const RELEASES: bool = true;

    #[inline]
    fn mark(&mut self) -> usize {
        self.top as usize
    }

    #[inline]
    fn release(&mut self, mark: usize) {
        let mark = mark as c_int;
        if mark != self.top {
            // SAFETY: popping plain values this host pushed above `mark`.
            unsafe { ffi::lua_settop(self.state, mark) };
            self.top = mark;
        }
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
