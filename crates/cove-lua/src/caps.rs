//! Every capability function of cove-caps' table (`cove_caps::cap`) under
//! its Lua name, with one converter each way: a Lua value to a
//! [`CapValue`] (read through the one view of a Lua value, raw/view.rs)
//! and back.
//!
//! A function that returns at once is a plain C function closing over its
//! index in the table ([`Now`]): its arguments read from the frame, its
//! results pushed on it, its failure raised at the caller's line by the
//! trampoline; a reading (`time.now`: no arguments, no scope) returns
//! before any conversion, and `res`'s and `ws`'s methods and `app.publish`
//! read their arguments where they lie ([`InPlace`]: a method's from slot
//! 2, its object being slot 1; one that chains returns that object). One
//! taking JSON (`json.encode`) gets each argument as raw/json.rs encodes
//! it (Hull's rules), and a JSON result
//! (`json.decode`) is decoded onto the frame by json.rs. Through mlua
//! closures go only the functions that can wait (the network, Redis,
//! PBKDF2: made with suspend.rs, so a handler suspends on them) and those
//! taking text (`log.info`: each argument as `tostring` writes it, which
//! may run a metamethod).
//! Modules with a Lua global are installed as globals; the others (`kv`)
//! are made when required (modules.rs).

use std::ffi::c_int;

use mlua::{Lua, MultiValue, Table, Value};
use smallvec::SmallVec;

use cove_caps::cap::res::{ArgReader, Scalar};
use cove_caps::cap::{self, ArgForm, CapFn, CapValue, Reading, Runtime, Scope, Started};
use cove_caps::json::{JsonError, JsonOp};
use cove_caps::kv::Kv;
use cove_caps::response::WEBSOCKET;
use cove_core::{CapError, JobOutput};
use cove_db::{DbError, Origin, Row};

use crate::app_api::AppState;
use crate::bind::raising;
use crate::error::coded;
use crate::raw::{upvalue, CFn, CText, Lifted, ShortText, Stack, View};
use crate::suspend::{slow_function, Start};
use crate::vm::unlimited;

/// How deep a table argument is read (deeper: its type name only).
const MAX_DEPTH: usize = 32;

/// The value at `idx`, read through the one view of a Lua value.
fn to_cap(s: &mut Stack<'_>, idx: c_int, depth: usize) -> CapValue {
    match s.view(idx) {
        View::Nil => CapValue::Nothing,
        View::Bool(b) => CapValue::Bool(b),
        View::Int(n) => CapValue::Int(n),
        View::Float(n) => CapValue::Num(n),
        View::Str(b) => CapValue::Str(b.to_vec()),
        View::Table if depth < MAX_DEPTH => {
            // A query's result kept packed (raw/rows.rs) is read as its rows.
            crate::raw::rows::unpack(s, idx);
            table_to_cap(s, idx, depth + 1)
        }
        View::Table => CapValue::Other("table"),
        View::Function => CapValue::Other("function"),
        View::Thread => CapValue::Other("thread"),
        View::Userdata => CapValue::Other("userdata"),
    }
}

/// A table whose keys are all positive integers is a list, up to its
/// largest key, a missing item `nil`: `{a, nil, c}` as written, whatever
/// border `#` picks (a table sparser than that, `{[1000] = x}`, is a
/// record). Any other table is a record of its string and integer keys.
/// Each value is read once (reading a sequence's items again would make
/// nesting cost twice per level).
fn table_to_cap(s: &mut Stack<'_>, t: c_int, depth: usize) -> CapValue {
    let len = s.raw_len(t);
    // Each value, and apart its integer key or its name (a name is made
    // only for a string key: a list's keys need no text, and its values
    // are the list as read, in order).
    let mut keys: SmallVec<[Result<i64, String>; 8]> = SmallVec::new();
    let mut values = Vec::with_capacity(len);
    let mut other_keys = false;
    let _ = s.entries(t, |s, k, v| {
        let key = match s.view(k) {
            View::Int(n) => Ok(n),
            View::Str(b) => Err(String::from_utf8_lossy(b).into_owned()),
            _ => {
                other_keys = true;
                return Ok::<(), ()>(());
            }
        };
        keys.push(key);
        values.push(to_cap(s, v, depth));
        Ok(())
    });
    let count = values.len();
    let mut last = 0;
    let positive = keys.iter().all(|k| match k {
        Ok(n) if *n >= 1 => {
            last = last.max(*n as usize);
            true
        }
        _ => false,
    });
    if count == 0 || other_keys || !positive || last > len.max(4 * count + 16) {
        let named = |k: Result<i64, String>| k.map_or_else(|name| name, |n| n.to_string());
        let fields = keys.into_iter().map(named).zip(values);
        return CapValue::Record(fields.collect());
    }
    if last == count && keys.iter().enumerate().all(|(i, k)| *k == Ok(i as i64 + 1)) {
        return CapValue::List(values);
    }
    let mut items = vec![CapValue::Nothing; last];
    for (k, v) in keys.into_iter().zip(values) {
        if let Ok(n) = k {
            items[n as usize - 1] = v;
        }
    }
    CapValue::List(items)
}

/// A scalar argument as it is (strings, numbers, booleans, nil); `None`
/// for a table or anything else, which the view reads.
fn scalar(v: &Value) -> Option<CapValue> {
    Some(match v {
        Value::Nil => CapValue::Nothing,
        Value::Boolean(b) => CapValue::Bool(*b),
        Value::Integer(n) => CapValue::Int(*n),
        Value::Number(n) => CapValue::Num(*n),
        Value::String(s) => CapValue::Str(s.as_bytes().to_vec()),
        _ => return None,
    })
}

/// The arguments as capability values: scalars as they are, and when a
/// table is among them, all read on a raw frame (pushing them there first
/// cost a one-string call ~1,060 instructions more, measured).
fn args_of(lua: &Lua, args: MultiValue) -> mlua::Result<Vec<CapValue>> {
    if let Some(all) = args.iter().map(scalar).collect::<Option<Vec<_>>>() {
        return Ok(all);
    }
    let mut out = Vec::with_capacity(args.len());
    crate::raw::exec::<()>(lua, args, |s| {
        for i in 1..=s.top() {
            out.push(to_cap(s, i, 0));
        }
    })?;
    Ok(out)
}

/// Each argument as `tostring` writes it.
fn texts_of(args: &MultiValue) -> mlua::Result<Vec<CapValue>> {
    args.iter()
        .map(|v| match v {
            Value::String(s) => Ok(CapValue::Str(s.as_bytes().to_vec())),
            other => Ok(CapValue::Str(other.to_string()?.into_bytes())),
        })
        .collect()
}

/// The arguments in the form `f` takes them (through mlua: the functions
/// that can wait, and those taking text, whose `tostring` may run a
/// metamethod).
fn args_in_form(lua: &Lua, f: &CapFn, args: MultiValue) -> mlua::Result<Vec<CapValue>> {
    match f.arg_form() {
        ArgForm::Values => args_of(lua, args),
        ArgForm::Text => texts_of(&args),
        ArgForm::Json => args
            .iter()
            .map(|v| {
                json_arg(unlimited(lua, || Ok(crate::json::encode(lua, v)))?)
                    .map_err(|e| mlua::Error::runtime(coded(lua, e)))
            })
            .collect(),
    }
}

/// An argument encoded as JSON, as the entry takes it.
fn json_arg(encoded: Result<Vec<u8>, JsonError>) -> Result<CapValue, CapError> {
    encoded
        .map(CapValue::Str)
        .map_err(|e| cap::json_failed(JsonOp::Encode, e))
}

/// A result as the function's Lua results (several results spread),
/// pushed by the C functions' converter ([`push_results`]).
fn results(lua: &Lua, v: CapValue) -> mlua::Result<MultiValue> {
    let mut failed = None;
    let values = crate::raw::exec::<MultiValue>(lua, (), |s| {
        if let Err(e) = push_results(s, v) {
            failed = Some(e);
        }
    })?;
    match failed {
        Some(e) => Err(mlua::Error::runtime(coded(lua, e))),
        None => Ok(values),
    }
}

/// A job's output as the function's results, or the message to raise.
fn finish(lua: &Lua, out: JobOutput) -> mlua::Result<Result<MultiValue, String>> {
    match cap::job_result(out) {
        Ok(v) => results(lua, v).map(Ok),
        Err(e) => Ok(Err(coded(lua, e))),
    }
}

/// Calls `f` with the manifest's hosts and allow-list as the app set them,
/// the shared kv store, and the worker's database connection, its
/// statements run as `origin`: all from the one app-data entry (each
/// lookup of one costs ~120 instructions; three did, measured).
fn with_scope<R>(lua: &Lua, origin: Origin, f: impl FnOnce(&Scope) -> R) -> R {
    let state = lua.app_data_ref::<AppState>();
    let scope = Scope {
        runtime: Runtime::Lua,
        hosts: state.as_ref().map_or(&[], |s| s.registry.hosts()),
        env_allow: state.as_ref().and_then(|s| s.registry.env_allow()),
        kv: state.as_ref().map_or(&*LOCAL, |s| &s.kv),
        db: state.as_ref().and_then(|s| s.db.as_ref()),
        origin,
        is_async: false,
    };
    f(&scope)
}

/// Upvalue 1 of a C function: its entry's index in `cap::functions()`,
/// with the stdlib's origin as bit 32.
const STDLIB_BIT: i64 = 1 << 32;

/// The entry and origin upvalue 1 names.
fn entry_of(s: &Stack<'_>) -> Option<(&'static CapFn, Origin)> {
    let i = s.int_at(upvalue(1))?;
    let f = cap::functions().get(usize::try_from(i & (STDLIB_BIT - 1)).ok()?)?;
    Some((f, cap::origin(i & STDLIB_BIT != 0)))
}

/// The reading whose index in `cap::functions()` is upvalue 1.
fn reading_of(s: &Stack<'_>) -> Option<Reading> {
    entry_of(s)?.0.reading()
}

/// A reading of a number.
struct ReadInt;
impl CFn for ReadInt {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        match reading_of(s) {
            Some(Reading::Int(read)) => s.push_int(read()),
            _ => return Err("internal error: not a reading".into()),
        }
        Ok(1)
    }
}

/// A reading of text (a date): pushed once no Rust value is live.
struct ReadText;
impl CText for ReadText {
    fn call(s: &mut Stack<'_>) -> Result<ShortText, String> {
        match reading_of(s) {
            Some(Reading::Text(read)) => Ok(ShortText::new(read().as_bytes())),
            _ => Err("internal error: not a reading".into()),
        }
    }
}

/// Every function that returns at once: its arguments read from the frame
/// through the view, its results pushed with the heap cap lifted (as a
/// hand-bound raw function pushes them), its failure raised at the
/// caller's line by the trampoline. (The same call made through an mlua
/// closure, its arguments and results as `MultiValue`s, cost ~1,800
/// instructions more: `env.get` 4,470 against 2,600, measured.)
struct Now;
impl CFn for Now {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let (f, origin) = entry_of(s).ok_or("internal error: not a capability")?;
        if f.skips() {
            return Ok(0);
        }
        let lua = s.lua();
        let args: Vec<CapValue> = match f.arg_form() {
            ArgForm::Json => (1..=s.top())
                .map(|i| json_arg(crate::raw::json::encode_slot(s, i)).map_err(|e| coded(lua, e)))
                .collect::<Result<_, _>>()?,
            _ => (1..=s.top()).map(|i| to_cap(s, i, 0)).collect(),
        };
        // Past the heap cap, the call's name says which one it was.
        let over = |e: String| format!("{}.{}: {e}", module_name(f), f.lua.unwrap_or_default());
        if f.returns_rows() {
            return s
                .lifted(|s| push_rows_of(s, f, origin, args))
                .map_err(over)?
                .map_err(|e| coded(lua, e));
        }
        match with_scope(lua, origin, |scope| f.call(scope, args)) {
            // A number or a boolean takes a slot a C function has (Lua
            // keeps 20 free for it) and allocates nothing: no need to lift
            // the cap (~200 instructions, measured on `db.exec`).
            Ok(CapValue::Int(n)) => {
                s.push_int(n);
                Ok(1)
            }
            Ok(CapValue::Bool(b)) => {
                s.push_bool(b);
                Ok(1)
            }
            Ok(v) => s
                .lifted(|s| push_results(s, v))
                .map_err(over)?
                .map_err(|e| coded(lua, e)),
            Err(e) => Err(coded(lua, e)),
        }
    }
}

/// A function that reads its arguments where they lie (`res:json`,
/// `ws:send`, `app.publish`): no value is made for them, and no app state
/// looked up. A `ws` method closes over the key `"id"` too (upvalue 2,
/// interned: reading its object's field pushes no new string).
struct InPlace;
impl CFn for InPlace {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let (f, _) = entry_of(s).ok_or("internal error: not a capability")?;
        let first = if f.method_of().is_some() { 2 } else { 1 };
        match f.run_in_place(Runtime::Lua, &mut Frame { s, first }) {
            Ok(()) if f.chains() => {
                s.push_value(1);
                Ok(1)
            }
            Ok(()) => Ok(0),
            Err(e) => Err(coded(s.lua(), e)),
        }
    }
}

/// The arguments of a call on its frame, from slot `first`.
struct Frame<'a, 'l> {
    s: &'a mut Stack<'l>,
    first: c_int,
}

impl Frame<'_, '_> {
    fn slot(&self, i: usize) -> c_int {
        self.first + i as c_int
    }
}

impl ArgReader for Frame<'_, '_> {
    #[inline]
    fn scalar(&mut self, i: usize) -> Scalar<'_> {
        match self.s.arg(self.slot(i)) {
            View::Nil => Scalar::Absent,
            View::Bool(b) => Scalar::Bool(b),
            View::Int(n) => Scalar::Int(n),
            View::Float(n) => Scalar::Num(n),
            View::Str(b) => Scalar::Str(b.into()),
            other => Scalar::Other(other.type_name()),
        }
    }

    fn json(&mut self, i: usize) -> Result<Vec<u8>, String> {
        let slot = self.slot(i);
        crate::raw::json::encode_slot(self.s, slot).map_err(|e| e.to_string())
    }

    fn data(&mut self, i: usize) -> Result<(Vec<u8>, bool), String> {
        let text = match self.s.arg(self.slot(i)) {
            View::Str(b) => b.to_vec(),
            View::Int(n) => n.to_string().into_bytes(),
            View::Float(f) => cove_core::lua_float(f).into_bytes(),
            _ => self.json(i)?,
        };
        Ok((text, false))
    }

    /// The `id` field of the object (slot 1), read raw: no metamethod runs.
    fn connection(&mut self) -> Option<u64> {
        if self.first < 2 || !self.s.is_table(1) {
            return None;
        }
        self.s.push_value(upvalue(2));
        self.s.raw_get(1);
        let id = self.s.int_at(-1);
        self.s.pop(1);
        id.and_then(|n| u64::try_from(n).ok())
    }
}

/// The module's name as scripts write it (`db`, `json`).
fn module_name(f: &CapFn) -> &'static str {
    f.module.trim_start_matches("hull:")
}

/// Call `f`, which returns a query's rows, writing them through the packed
/// result's builder (raw/rows.rs) as the database reads them.
fn push_rows_of(
    s: &mut Lifted<'_, '_>,
    f: &'static CapFn,
    origin: Origin,
    args: Vec<CapValue>,
) -> Result<c_int, CapError> {
    let lua = s.lua();
    let mut refused = None;
    let outcome = crate::raw::rows::query(s, |each_row| {
        match with_scope(lua, origin, |scope| f.start_into(scope, args, each_row)) {
            Ok(Started::Done(_)) => Ok(()),
            Ok(Started::Job(_)) => Err(DbError::Callback("a query that waits, called here".into())),
            Err(e) => {
                refused = Some(e);
                Err(DbError::Callback(String::new()))
            }
        }
    });
    match (outcome, refused) {
        (Ok(()), _) => Ok(1),
        (Err(_), Some(e)) => Err(e),
        (Err(e), None) => Err(e.cap("db.query failed")),
    }
}

/// The store a VM made without the server's uses (unit tests).
static LOCAL: std::sync::LazyLock<Kv> = std::sync::LazyLock::new(Kv::default);

/// Push `v`; several results spread. How many were pushed.
fn push_results(s: &mut Lifted<'_, '_>, v: CapValue) -> Result<c_int, CapError> {
    match v {
        CapValue::Results(fields) => {
            let n = fields.len() as c_int;
            for (_, v) in fields {
                push_cap(s, v)?;
            }
            Ok(n)
        }
        v => push_cap(s, v).map(|()| 1),
    }
}

fn push_cap(s: &mut Lifted<'_, '_>, v: CapValue) -> Result<(), CapError> {
    match v {
        CapValue::Rows(set) => {
            let names: Vec<&str> = set.columns.iter().map(String::as_str).collect();
            crate::raw::rows::query(s, |each_row| {
                set.rows
                    .iter()
                    .try_for_each(|r| each_row(&names, &Row::of_values(r)))
            })
            .map_err(|e| e.cap("db.query failed"))?
        }
        CapValue::Json(text) => {
            crate::json::decode_onto(s, &text).map_err(|e| cap::json_failed(JsonOp::Decode, e))?
        }
        CapValue::Nothing | CapValue::Null | CapValue::Other(_) => s.push_nil(),
        CapValue::Bool(b) => s.push_bool(b),
        CapValue::Int(n) => s.push_int(n),
        CapValue::Num(n) => s.push_float(n),
        CapValue::Str(b) | CapValue::Bytes(b) => s.push_bytes(&b),
        CapValue::List(items) => {
            s.new_table(items.len(), 0);
            let t = s.top();
            for (i, item) in items.into_iter().enumerate() {
                push_cap(s, item)?;
                s.raw_seti(t, i as i64 + 1);
            }
        }
        CapValue::Record(fields) => push_record(s, fields)?,
        CapValue::Results(fields) => push_record(s, fields)?,
    }
    Ok(())
}

/// A table of these fields.
fn push_record<K: AsRef<str>>(
    s: &mut Lifted<'_, '_>,
    fields: Vec<(K, CapValue)>,
) -> Result<(), CapError> {
    s.new_table(0, fields.len());
    let t = s.top();
    for (k, v) in fields {
        s.push_bytes(k.as_ref().as_bytes());
        push_cap(s, v)?;
        s.raw_set(t);
    }
    Ok(())
}

/// A plain C function closing over the entry's index and origin.
fn c_function(lua: &Lua, f: &'static CapFn, origin: Origin) -> mlua::Result<mlua::Function> {
    let stdlib = if origin == Origin::Stdlib {
        STDLIB_BIT
    } else {
        0
    };
    let index = f.index() as i64 | stdlib;
    crate::raw::exec(lua, (), |s| {
        s.push_int(index);
        match f.reading() {
            Some(Reading::Int(_)) => s.push_closure::<ReadInt>(1),
            Some(Reading::Text(_)) => s.push_text_closure::<ReadText>(1),
            None if f.method_of() == Some(WEBSOCKET) => {
                s.push_bytes(b"id");
                s.push_closure::<InPlace>(2)
            }
            None if f.reads_in_place() => s.push_closure::<InPlace>(1),
            None => s.push_closure::<Now>(1),
        }
    })
}

/// A function of the app's registry: one that registers a handler
/// (`app.get`, `app.use`, `app.ws`), its arguments as values and the
/// handler handed over as itself (`app.ws`: the dispatcher the prelude
/// makes of its handlers, ws.rs); or one of the manifest's.
fn registering(
    lua: &Lua,
    f: &'static CapFn,
    handler_arg: Option<usize>,
) -> mlua::Result<mlua::Function> {
    raising(lua, move |lua, args| {
        let handler = match handler_arg.and_then(|i| args.get(i)) {
            Some(Value::Table(t)) if f.takes_handlers() => {
                Some(crate::ws::dispatcher(lua, t.clone())?)
            }
            Some(Value::Function(h)) if !f.takes_handlers() => Some(h.clone()),
            _ => None,
        };
        let values = args_of(lua, args)?;
        let done = match lua.app_data_mut::<AppState>() {
            Some(mut st) => f.register(Runtime::Lua, &values, handler, &mut st.registry),
            None => return Err(mlua::Error::runtime("app state missing")),
        };
        match done {
            Ok(v) => results(lua, v),
            Err(e) => Err(mlua::Error::runtime(coded(lua, e))),
        }
    })
}

/// A function whose result is an object of a type with methods
/// (`metrics.counter`): the table it returns gets a metatable, made once,
/// whose `__index` is the type's methods and `__name` the type's name.
fn object_maker(
    lua: &Lua,
    f: &'static CapFn,
    type_name: &'static str,
) -> mlua::Result<mlua::Function> {
    let meta = lua.create_table()?;
    meta.raw_set("__index", methods(lua, type_name)?)?;
    meta.raw_set("__name", type_name)?;
    raising(lua, move |lua, args| {
        let args = args_of(lua, args)?;
        let made = match with_scope(lua, Origin::App, |s| f.call(s, args)) {
            Ok(v) => results(lua, v)?,
            Err(e) => return Err(mlua::Error::runtime(coded(lua, e))),
        };
        if let Some(Value::Table(t)) = made.front() {
            t.set_metatable(Some(meta.clone()))?;
        }
        Ok(made)
    })
}

fn function(lua: &Lua, f: &'static CapFn, origin: Origin) -> mlua::Result<mlua::Function> {
    if f.uses_registry() {
        registering(lua, f, f.handler_arg())
    } else if let Some(type_name) = f.returns_object() {
        object_maker(lua, f, type_name)
    } else if with_scope(lua, origin, |s| f.can_wait(s)) {
        slow_function(lua, move |lua, args| {
            let args = args_in_form(lua, f, args)?;
            match with_scope(lua, origin, |s| f.start(s, args)) {
                Ok(Started::Done(v)) => results(lua, v).map(Start::Done),
                Ok(Started::Job(job)) => Ok(Start::Job(job, finish)),
                Err(e) => Err(mlua::Error::runtime(coded(lua, e))),
            }
        })
    } else if f.arg_form() == ArgForm::Text {
        // `tostring` may run a metamethod: through mlua, which protects it.
        raising(lua, move |lua, args| {
            if f.skips() {
                return Ok(MultiValue::new());
            }
            let args = args_in_form(lua, f, args)?;
            match with_scope(lua, origin, |s| f.call(s, args)) {
                Ok(v) => results(lua, v),
                Err(e) => Err(mlua::Error::runtime(coded(lua, e))),
            }
        })
    } else {
        c_function(lua, f, origin)
    }
}

/// The methods of one type (`Response`: what `res` indexes; `WebSocket`:
/// what a connection's `ws` indexes), as a table.
pub(crate) fn methods(lua: &Lua, type_name: &str) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    for f in cap::methods_of(type_name) {
        if let Some(name) = f.lua {
            t.raw_set(name, c_function(lua, f, Origin::App)?)?;
        }
    }
    Ok(t)
}

/// The table of one module (its JS specifier: `hull:kv`).
pub(crate) fn module(lua: &Lua, spec: &str) -> mlua::Result<Table> {
    module_as(lua, spec, Origin::App)
}

/// The table of one module whose `db` statements run as `origin` (the
/// stdlib's `db`: modules.rs).
pub(crate) fn module_as(lua: &Lua, spec: &str, origin: Origin) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    for f in cap::module_functions(spec) {
        if let Some(name) = f.lua {
            t.raw_set(name, function(lua, f, origin)?)?;
        }
    }
    Ok(t)
}

/// The table a `require` name gives, if a capability module has that name.
pub(crate) fn required(lua: &Lua, name: &str) -> mlua::Result<Option<Table>> {
    match cove_caps::api::module_by_lua(name) {
        Some(m) if cap::modules().contains(&m.js) => module(lua, m.js).map(Some),
        _ => Ok(None),
    }
}

/// Every capability module with a Lua global, as that global.
pub(crate) fn install(lua: &Lua) -> mlua::Result<()> {
    for spec in cap::modules() {
        let global = cove_caps::api::module_by_js(spec).and_then(|m| m.lua_global);
        if let Some(global) = global {
            lua.globals().raw_set(global, module(lua, spec)?)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_read_through_the_view() {
        let lua = Lua::new();
        let args: MultiValue = lua
            .load(r#"return "s", 7, 1.5, nil, true, {1, 2, {a = {b = "deep"}}}, {x = 1, [2] = "two"}, {}, print"#)
            .eval()
            .unwrap();
        let got = args_of(&lua, args).unwrap();
        let rec = |f: Vec<(&str, CapValue)>| {
            CapValue::Record(f.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
        };
        let deep = rec(vec![(
            "a",
            rec(vec![("b", CapValue::Str(b"deep".to_vec()))]),
        )]);
        assert_eq!(
            got[..6],
            [
                CapValue::Str(b"s".to_vec()),
                CapValue::Int(7),
                CapValue::Num(1.5),
                CapValue::Nothing,
                CapValue::Bool(true),
                CapValue::List(vec![CapValue::Int(1), CapValue::Int(2), deep]),
            ]
        );
        let CapValue::Record(mut fields) = got[6].clone() else {
            panic!("{:?}", got[6])
        };
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            fields,
            [
                ("2".to_string(), CapValue::Str(b"two".to_vec())),
                ("x".to_string(), CapValue::Int(1))
            ]
        );
        assert_eq!(got[7], CapValue::Record(vec![]));
        assert_eq!(got[8], CapValue::Other("function"));
    }

    /// A table whose keys are all positive integers is a list up to its
    /// largest key, holes `nil`, whatever border `#` picks; one sparser
    /// than that, or with a key of another kind, is a record.
    #[test]
    fn integer_keyed_tables_are_lists_with_holes() {
        let lua = Lua::new();
        let args: MultiValue = lua
            .load(
                r#"local t = {}; t[3] = "c"; t[1] = "a"
                return {"x", nil, "z", nil, nil}, t, {[1000] = 1}, {[1] = 1, [1.5] = 2}"#,
            )
            .eval()
            .unwrap();
        let got = args_of(&lua, args).unwrap();
        let s = |v: &str| CapValue::Str(v.as_bytes().to_vec());
        assert_eq!(
            got[0],
            CapValue::List(vec![s("x"), CapValue::Nothing, s("z")])
        );
        assert_eq!(
            got[1],
            CapValue::List(vec![s("a"), CapValue::Nothing, s("c")])
        );
        assert_eq!(
            got[2],
            CapValue::Record(vec![("1000".into(), CapValue::Int(1))])
        );
        assert!(matches!(got[3], CapValue::Record(_)), "{:?}", got[3]);
    }

    /// Scalars alone take the short path; the values are what the view
    /// reads (a float stays a float, a string's bytes as they are).
    #[test]
    fn scalar_arguments_read_as_the_view_reads_them() {
        let lua = Lua::new();
        let load = |src: &str| -> MultiValue { lua.load(src).eval().unwrap() };
        let want = [
            CapValue::Str(b"s\0\xff".to_vec()),
            CapValue::Int(7),
            CapValue::Num(2.0),
            CapValue::Nothing,
            CapValue::Bool(false),
        ];
        let short = args_of(&lua, load(r#"return "s\0\xff", 7, 2.0, nil, false"#)).unwrap();
        assert_eq!(short, want);
        // With a table among them, the same scalars through the view.
        let viewed = args_of(&lua, load(r#"return "s\0\xff", 7, 2.0, nil, false, {}"#)).unwrap();
        assert_eq!(viewed[..5], want);
    }

    /// A VM with the capability globals, as a handler sees them.
    fn vm() -> Lua {
        let lua = Lua::new();
        crate::error::install_codes(&lua).unwrap();
        crate::suspend::install(&lua).unwrap();
        install(&lua).unwrap();
        lua
    }

    /// The C functions push what the table returns (text, records, lists,
    /// decoded JSON with its holes) and raise a failure at the caller's
    /// line, its code kept for `err:code()`.
    #[test]
    fn c_functions_push_results_and_raise_at_the_callers_line() {
        let lua = vm();
        let (hash, text, ok): (String, String, bool) = lua
            .load(
                r#"
                local t = json.decode('{"a":[1,null,3],"b":{"c":"x","d":null},"e":9007199254740993,"f":1.5}')
                local ok = t.a[1] == 1 and t.a[2] == nil and t.a[3] == 3 and #t.b == 0
                  and t.b.c == "x" and t.b.d == nil and math.type(t.e) == "integer"
                  and t.e == 9007199254740993 and t.f == 1.5 and json.decode("null") == nil
                return crypto.sha256("abc"), json.encode({ b = 1, a = { 1, 2 } }), ok
                "#,
            )
            .eval()
            .unwrap();
        assert!(hash.starts_with("ba7816bf"), "{hash}");
        assert_eq!(text, r#"{"a":[1,2],"b":1}"#);
        assert!(ok);
        let (bad, bad_code, arg, arg_code, cycle): (String, String, String, String, String) = lua
            .load(
                "local _, bad = pcall(function() return json.decode('{x') end)
                 local _, arg = pcall(function() return json.decode(5) end)
                 local t = {} t.t = t
                 local _, cycle = pcall(function() return json.encode(t) end)
                 return bad, bad:code(), arg, arg:code(), cycle",
            )
            .set_name("@app.lua")
            .eval()
            .unwrap();
        assert!(
            bad.starts_with("app.lua:1: json.decode: key must be a string"),
            "{bad}"
        );
        assert_eq!(bad_code, "json.decode");
        assert_eq!(arg, "app.lua:2: json.decode: expected a string, got number");
        assert_eq!(arg_code, "json.argument");
        assert!(cycle.starts_with("app.lua:4: json.encode: "), "{cycle}");
    }

    /// A result pushed past the heap cap raises the out-of-heap error
    /// (the push itself runs with the cap lifted, and nothing is left).
    #[test]
    fn a_result_past_the_heap_cap_raises_out_of_heap() {
        let lua = vm();
        let big = format!(
            "[{}1]",
            "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\",".repeat(20_000)
        );
        lua.globals().set("big", big).unwrap();
        lua.set_memory_limit(lua.used_memory() + 256 * 1024)
            .unwrap();
        let (ok, err): (bool, String) = lua
            .load("local ok, e = pcall(json.decode, big) return ok, tostring(e)")
            .eval()
            .unwrap();
        assert!(!ok);
        assert!(err.contains(cove_core::OUT_OF_HEAP), "{err}");
        lua.set_memory_limit(0).unwrap();
    }

    #[test]
    fn nesting_past_the_depth_is_named_not_read() {
        let lua = Lua::new();
        let args: MultiValue = lua
            .load("local t = {} for i = 1, 40 do t = {t} end return t")
            .eval()
            .unwrap();
        let mut v = &args_of(&lua, args).unwrap()[0];
        let mut depth = 0;
        while let CapValue::List(items) = v {
            v = &items[0];
            depth += 1;
        }
        assert_eq!((depth, v), (MAX_DEPTH, &CapValue::Other("table")));
    }
}
