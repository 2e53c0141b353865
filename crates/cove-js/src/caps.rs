//! Every capability function of cove-caps' table (`cove_caps::cap`) under
//! its JS name, with one converter each way: a JS value to a [`CapValue`]
//! and back. The Hull forms are synchronous: what waits (the network,
//! Redis, PBKDF2) blocks the worker, as QuickJS cannot suspend a plain
//! call. Each that can wait also comes as `…Async`, returning a promise;
//! awaiting it keeps the worker free while the job runs (engine.rs), and
//! its refusals reject the promise rather than throw.
//!
//! Each synchronous form is a plain C function whose magic number is its
//! index in the table (what each call needs is the context's userdata); a
//! reading (`time.now`: no arguments, no scope) returns at once from it,
//! as cheap as a hand-bound one. A function taking text (`log.info`) gets
//! each argument as the prelude's `console` always wrote it (`String(v)`,
//! objects as JSON, an error with its stack), one taking JSON
//! (`json.encode`) as `JSON.stringify` writes it, and a JSON result
//! (`json.decode`) is `JSON.parse`d (their failures throw as those do).
//!
//! `res`'s methods and `app.publish` read their arguments where they lie
//! ([`InPlace`]), as fast methods (a method's object is `this`; one that
//! chains returns it).
//! A metric's methods take theirs as values, `this` first; the object
//! `metrics.counter` returns gets them as its prototype.
//!
//! Argument mistakes throw `TypeError`s (`RangeError` for a count out of
//! range), as Hull's JS does, and a capability's failure a `CoveError`
//! (bind.rs); either carries the failure's `code`.

use std::rc::Rc;

use rquickjs::function::{Rest, This};
use rquickjs::{Array, ArrayBuffer, Ctx, Exception, Function, Object, Persistent, Promise, Value};

use cove_caps::cap::res::{ArgReader, Scalar};
use cove_caps::cap::{self, ArgForm, CapFn, CapValue, Reading, Runtime, Scope, Started};
use cove_caps::kv::Kv;
use cove_core::{CapError, JobOutput};
use cove_db::{DbError, Origin, Row};

use crate::host::{settled, Host};
use crate::raw::fastfn::{function_with_magic, Args, Method, Table};
use crate::raw::rows::Rows;
use crate::raw::userdata::Static;
use crate::raw::value::{Val, View};

/// How deep an object argument is read (deeper: its type name only).
const MAX_DEPTH: usize = 32;

/// Largest integer a double holds exactly (2^53 − 1).
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

fn to_cap(v: &Val<'_>, depth: usize) -> rquickjs::Result<CapValue> {
    let o = match v.view() {
        View::Undefined => return Ok(CapValue::Nothing),
        View::Null => return Ok(CapValue::Null),
        View::Bool(b) => return Ok(CapValue::Bool(b)),
        View::Int(n) => return Ok(CapValue::Int(n.into())),
        // Whole numbers below 2^53 are integers (they come back the same).
        View::Float(n) if n.fract() == 0.0 && n.abs() <= MAX_SAFE => {
            return Ok(CapValue::Int(n as i64))
        }
        View::Float(n) => return Ok(CapValue::Num(n)),
        View::Str(s) => return Ok(CapValue::Str(s.text()?.into_bytes())),
        View::Symbol | View::Other => return Ok(CapValue::Other("object")),
        View::Object(o) => o,
    };
    // An array first: the commonest object argument (`db` parameters),
    // which asking whether it is binary would cost ~200 instructions.
    if o.is_array() {
        if depth >= MAX_DEPTH {
            return Ok(CapValue::Other("array"));
        }
        let n = o.len()?;
        let mut items = Vec::with_capacity(n.min(1024) as usize);
        for i in 0..n {
            items.push(to_cap(&o.index(i as u32)?, depth + 1)?);
        }
        return Ok(CapValue::List(items));
    }
    if let Some(b) = crate::raw::bytes::binary_of(v)? {
        return Ok(CapValue::Bytes(b));
    }
    if o.is_function() {
        return Ok(CapValue::Other("function"));
    }
    if depth >= MAX_DEPTH {
        return Ok(CapValue::Other("object"));
    }
    let keys = o.own_keys(true)?;
    let mut fields = Vec::with_capacity(keys.len());
    for (atom, _) in keys.iter() {
        let Some(k) = keys.name(atom) else { continue };
        fields.push((k, to_cap(&o.get(atom)?, depth + 1)?));
    }
    Ok(CapValue::Record(fields))
}

fn to_js<'js>(ctx: &Ctx<'js>, v: CapValue) -> rquickjs::Result<Value<'js>> {
    let record = |fields: Vec<(String, CapValue)>| -> rquickjs::Result<Value<'js>> {
        let o = Object::new(ctx.clone())?;
        for (k, v) in fields {
            o.set(k, to_js(ctx, v)?)?;
        }
        Ok(o.into_value())
    };
    Ok(match v {
        CapValue::Rows(set) => {
            let names: Vec<&str> = set.columns.iter().map(String::as_str).collect();
            let mut rows = Rows::new(ctx);
            for r in &set.rows {
                rows.push(&names, &Row::of_values(r))?;
            }
            rows.finish()?
        }
        CapValue::Json(text) => ctx.json_parse(text)?,
        CapValue::Nothing | CapValue::Other(_) => Value::new_undefined(ctx.clone()),
        CapValue::Null => Value::new_null(ctx.clone()),
        CapValue::Bool(b) => Value::new_bool(ctx.clone(), b),
        CapValue::Int(n) => Value::new_number(ctx.clone(), n as f64),
        CapValue::Num(n) => Value::new_number(ctx.clone(), n),
        CapValue::Str(b) => {
            rquickjs::String::from_str(ctx.clone(), &cove_core::utf8_lossy(&b))?.into_value()
        }
        CapValue::Bytes(b) => ArrayBuffer::new(ctx.clone(), b)?.into_value(),
        CapValue::List(items) => {
            let a = Array::new(ctx.clone())?;
            for (i, item) in items.into_iter().enumerate() {
                a.set(i, to_js(ctx, item)?)?;
            }
            a.into_value()
        }
        CapValue::Record(fields) => record(fields)?,
        CapValue::Results(fields) => record(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )?,
    })
}

/// Throw `e` as the class its code calls for: argument mistakes as Hull's
/// JS throws them (`TypeError`, `RangeError`), with the code set as a
/// `CoveError` carries it.
fn throw(ctx: &Ctx<'_>, e: &CapError) -> rquickjs::Error {
    match e.code {
        "crypto.range" => Exception::throw_range(ctx, &e.message),
        "crypto.input" => Exception::throw_type(ctx, &e.message),
        code if code.ends_with(".argument") => Exception::throw_type(ctx, &e.message),
        _ => return crate::bind::throw_cap(ctx, e),
    };
    let thrown = ctx.catch();
    if let Some(o) = thrown.as_object() {
        // A fresh error object takes a new property; nothing to report.
        let _ = o.set("code", e.code);
    }
    ctx.throw(thrown)
}

fn result<'js>(ctx: &Ctx<'js>, out: Result<CapValue, CapError>) -> rquickjs::Result<Value<'js>> {
    match out {
        Ok(v) => to_js(ctx, v),
        Err(e) => Err(throw(ctx, &e)),
    }
}

/// Settles an `…Async` promise with its job's output.
fn finish<'js>(ctx: &Ctx<'js>, out: JobOutput) -> rquickjs::Result<Value<'js>> {
    result(ctx, cap::job_result(out))
}

fn args_of(args: &[Value<'_>]) -> rquickjs::Result<Vec<CapValue>> {
    args.iter().map(|v| to_cap(&Val::lend(v), 0)).collect()
}

/// A value as `console.log` writes it: strings as they are, an error with
/// its stack, other objects as JSON (`String(v)` when that fails), the
/// rest as `String(v)`.
fn text_of<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> rquickjs::Result<CapValue> {
    let string = |v: &Value<'js>| -> rquickjs::Result<String> {
        Ok(v.get::<rquickjs::convert::Coerced<String>>()?.0)
    };
    if let Some(s) = v.as_string() {
        return Ok(CapValue::Str(s.to_string()?.into_bytes()));
    }
    let text = match v.as_object() {
        Some(o) if o.is_error() => {
            let stack: Value = o.get("stack")?;
            let head = string(v)?;
            match stack.as_string() {
                Some(s) if !s.to_string()?.is_empty() => format!("{head}\n{}", s.to_string()?),
                _ => head,
            }
        }
        Some(o) if !o.is_function() => match ctx.json_stringify(v.clone()) {
            Ok(Some(s)) => s.to_string()?,
            Ok(None) => string(v)?,
            Err(_) => {
                // The thrown error is not the script's: drop it.
                let _ = ctx.catch();
                string(v)?
            }
        },
        _ => string(v)?,
    };
    Ok(CapValue::Str(text.into_bytes()))
}

/// Each argument as `JSON.stringify` writes it (`null` where it gives
/// nothing, as for `undefined`).
fn json_texts_of<'js>(ctx: &Ctx<'js>, args: &[Value<'js>]) -> rquickjs::Result<Vec<CapValue>> {
    args.iter()
        .map(|v| match ctx.json_stringify(v.clone())? {
            // Read through the view: ASCII in place, not through a C string.
            Some(s) => to_cap(&Val::lend(&s.into_value()), 0),
            None => Ok(CapValue::Str(b"null".to_vec())),
        })
        .collect()
}

fn texts_of<'js>(ctx: &Ctx<'js>, args: &[Value<'js>]) -> rquickjs::Result<Vec<CapValue>> {
    args.iter().map(|v| text_of(ctx, v)).collect()
}

/// The one method behind every synchronous form: a plain C function whose
/// magic number is its entry's index in `cap::functions()`. (A Rust
/// closure bound by rquickjs cost ~50 instructions more a call, measured
/// on a one-argument function.)
struct Entries;
impl Table for Entries {
    const METHODS: &'static [Method] = &[Method {
        name: "capability",
        arity: 0,
        chains: false,
        run: call_entry,
    }];

    fn method(_: usize) -> Option<&'static Method> {
        Self::METHODS.first()
    }
}

/// The function behind `res`'s methods and `app.publish`: reads its
/// arguments in place ([`Reader`]), makes no value for them and looks no
/// app state up. A method that chains (`res.status(201).json(x)`) returns
/// its object: the second method of the table, picked by [`CHAINS_BIT`]
/// of the magic number (looking the entry up on each call to ask cost
/// ~30 instructions).
struct InPlace;
impl Table for InPlace {
    const METHODS: &'static [Method] = &[
        Method {
            name: "res",
            arity: 0,
            chains: false,
            run: call_in_place,
        },
        Method {
            name: "res",
            arity: 0,
            chains: true,
            run: call_in_place,
        },
    ];

    fn method(magic: usize) -> Option<&'static Method> {
        Self::METHODS.get(usize::from(magic & CHAINS_BIT != 0))
    }
}

/// In an [`InPlace`] function's magic number, beside its entry's index:
/// the method chains.
const CHAINS_BIT: usize = 1 << 14;

fn call_in_place<'js>(ctx: &Ctx<'js>, args: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    let Some(f) = cap::functions().get(args.magic() & !CHAINS_BIT) else {
        return Err(Exception::throw_internal(ctx, "no such capability"));
    };
    let mut reader = Reader {
        ctx,
        args,
        thrown: false,
    };
    match f.run_in_place(Runtime::Js, &mut reader) {
        Ok(()) => Ok(Value::new_undefined(ctx.clone())),
        // What `JSON.stringify` threw (a cycle) is still pending: it is
        // the error, as it always was.
        Err(_) if reader.thrown => Err(rquickjs::Error::Exception),
        Err(e) => Err(throw(ctx, &e)),
    }
}

/// A call's arguments, read where QuickJS lent them.
struct Reader<'a, 'b, 'js> {
    ctx: &'a Ctx<'js>,
    args: &'a Args<'b>,
    /// Encoding threw a JS exception, left pending.
    thrown: bool,
}

impl Reader<'_, '_, '_> {
    fn caught<T>(&mut self, r: rquickjs::Result<T>) -> Result<T, String> {
        r.map_err(|e| {
            self.thrown = matches!(e, rquickjs::Error::Exception);
            e.to_string()
        })
    }
}

impl ArgReader for Reader<'_, '_, '_> {
    fn scalar(&mut self, i: usize) -> Scalar<'_> {
        let Some(v) = self.args.lend(self.ctx, i) else {
            return Scalar::Absent;
        };
        match v.view() {
            View::Undefined => Scalar::Absent,
            View::Null => Scalar::Null,
            View::Bool(b) => Scalar::Bool(b),
            View::Int(n) => Scalar::Int(n.into()),
            View::Float(n) => Scalar::Num(n),
            View::Str(s) => match s.text() {
                Ok(text) => Scalar::Str(text.into_bytes().into()),
                Err(_) => Scalar::Other("string"),
            },
            View::Object(o) if o.is_array() => Scalar::Other("array"),
            View::Object(o) if o.is_function() => Scalar::Other("function"),
            View::Object(_) | View::Symbol | View::Other => Scalar::Other("object"),
        }
    }

    fn json(&mut self, i: usize) -> Result<Vec<u8>, String> {
        let v = self.args.get(self.ctx, i);
        let text = crate::json::json_text(self.ctx, v);
        self.caught(text)
    }

    fn data(&mut self, i: usize) -> Result<(Vec<u8>, bool), String> {
        let v = self.args.get(self.ctx, i);
        let data = crate::ws::data_arg(self.ctx, v);
        self.caught(data)
    }

    fn page(&mut self, i: usize) -> Option<String> {
        crate::template::take_rendered(&self.args.get(self.ctx, i))
    }

    /// `this.id` (ws.js's connection objects), a whole number from 1.
    fn connection(&mut self) -> Option<u64> {
        let this = self.args.this(self.ctx).into_object()?;
        match this.get::<_, Value>("id").ok()?.as_number() {
            Some(id) if id >= 1.0 && id.fract() == 0.0 => Some(id as u64),
            _ => None,
        }
    }
}

/// What every call of the context's capability functions needs, kept as
/// its userdata.
struct Calls {
    host: Rc<Host>,
    kv: Kv,
}

type CallsData = Static<Rc<Calls>>;

fn call_entry<'js>(ctx: &Ctx<'js>, args: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    let Some(f) = cap::functions().get(args.magic() & (STDLIB_BIT - 1)) else {
        return Err(Exception::throw_internal(ctx, "no such capability"));
    };
    match f.reading() {
        // Seconds and milliseconds do not fit an int32: doubles hold them exactly.
        Some(Reading::Int(read)) => return Ok(Value::new_float(ctx.clone(), read() as f64)),
        Some(Reading::Text(read)) => {
            return rquickjs::String::from_str(ctx.clone(), &read()).map(|s| s.into_value())
        }
        None => {}
    }
    let calls = ctx
        .userdata::<CallsData>()
        .ok_or_else(|| Exception::throw_internal(ctx, "capabilities not installed"))?;
    let values: Vec<Value<'js>> = (0..args.len()).map(|i| args.get(ctx, i)).collect();
    let origin = cap::origin(args.magic() & STDLIB_BIT != 0);
    Bound {
        calls: &calls.0,
        f,
        origin,
    }
    .call(ctx, &values)
}

/// In a function's magic number, beside its entry's index: it is the
/// stdlib's `db` (its statements may use the reserved tables). QuickJS
/// keeps a magic number in 16 bits.
const STDLIB_BIT: usize = 1 << 14;

/// One function as bound: what each of its calls needs.
struct Bound<'c> {
    calls: &'c Calls,
    f: &'static CapFn,
    origin: Origin,
}

impl Bound<'_> {
    /// Convert the arguments and start the call with the manifest's hosts
    /// and allow-list as the app set them. A function that returns a
    /// query's rows writes those read now through `rows`, returning
    /// [`CapValue::Nothing`].
    fn start<'a, 'js>(
        &self,
        ctx: &'a Ctx<'js>,
        args: &[Value<'js>],
        is_async: bool,
        rows: &mut Option<Rows<'a, 'js>>,
    ) -> rquickjs::Result<Result<Started, CapError>> {
        if self.f.skips() {
            return Ok(Ok(Started::Done(CapValue::Nothing)));
        }
        let args = match self.f.arg_form() {
            ArgForm::Values => args_of(args)?,
            ArgForm::Text => texts_of(ctx, args)?,
            ArgForm::Json => json_texts_of(ctx, args)?,
        };
        let host = &self.calls.host;
        let registry = host.registry.borrow();
        let scope = Scope {
            runtime: Runtime::Js,
            hosts: registry.hosts(),
            env_allow: registry.env_allow(),
            kv: &self.calls.kv,
            db: Some(&host.db),
            origin: self.origin,
            is_async,
        };
        if !self.f.returns_rows() {
            return Ok(self.f.start(&scope, args));
        }
        let built = rows.insert(Rows::new(ctx));
        let mut js_error = None;
        let started = self.f.start_into(&scope, args, &mut |cols, row| {
            built.push(cols, row).map_err(|e| {
                js_error = Some(e);
                DbError::Callback("building the result failed".into())
            })
        });
        match js_error {
            Some(e) => Err(e),
            None => Ok(started),
        }
    }

    /// What a call that returned at once gives: the rows it wrote, or its value.
    fn done<'js>(
        ctx: &Ctx<'js>,
        v: CapValue,
        rows: Option<Rows<'_, 'js>>,
    ) -> rquickjs::Result<Value<'js>> {
        match rows {
            Some(rows) if v == CapValue::Nothing => rows.finish(),
            _ => to_js(ctx, v),
        }
    }

    /// Hull's synchronous form: a job runs here, blocking the worker.
    fn call<'js>(&self, ctx: &Ctx<'js>, args: &[Value<'js>]) -> rquickjs::Result<Value<'js>> {
        let mut rows = None;
        match self.start(ctx, args, false, &mut rows)? {
            Ok(Started::Done(v)) => Self::done(ctx, v, rows),
            Ok(Started::Job(job)) => result(ctx, cap::job_result(job.run())),
            Err(e) => Err(throw(ctx, &e)),
        }
    }

    /// `…Async`: a promise, settled when the job is done.
    fn call_async<'js>(
        &self,
        ctx: &Ctx<'js>,
        args: &[Value<'js>],
    ) -> rquickjs::Result<Promise<'js>> {
        let mut rows = None;
        match self.start(ctx, args, true, &mut rows) {
            Ok(Ok(Started::Done(v))) => settled(ctx, Self::done(ctx, v, rows)),
            Ok(Ok(Started::Job(job))) => self.calls.host.await_job(ctx, job, finish),
            Ok(Err(e)) => settled(ctx, Err(throw(ctx, &e))),
            Err(e) => settled(ctx, Err(e)),
        }
    }
}

/// A function of the app's registry: one that registers a handler
/// (`app.get`, `app.use`, `app.ws`), its arguments as values and the
/// handler saved as itself (`app.ws`: the dispatcher the prelude makes of
/// its handlers, ws.js); or one of the manifest's.
fn register<'js>(
    ctx: &Ctx<'js>,
    calls: &Calls,
    f: &'static CapFn,
    args: &[Value<'js>],
) -> rquickjs::Result<Value<'js>> {
    let arg = f.handler_arg().and_then(|i| args.get(i));
    let handler = match arg.and_then(|v| v.as_object()) {
        Some(handlers) if f.takes_handlers() && !handlers.is_function() => {
            let maker = calls.host.ws_dispatcher.borrow().clone();
            let maker = maker
                .ok_or_else(|| Exception::throw_internal(ctx, "app.ws: no dispatcher"))?
                .restore(ctx)?;
            let dispatcher: Function = maker.call((handlers.clone(),))?;
            Some(Persistent::save(ctx, dispatcher))
        }
        _ if f.takes_handlers() => None,
        _ => arg
            .and_then(|v| v.as_function())
            .map(|h| Persistent::save(ctx, h.clone())),
    };
    let values = args_of(args)?;
    let mut registry = calls.host.registry.borrow_mut();
    let done = f.register(Runtime::Js, &values, handler, &mut registry);
    drop(registry);
    result(ctx, done)
}

/// The object of one module (its specifier: `hull:kv`), whose `db`
/// statements run as `origin`.
fn module<'js>(
    ctx: &Ctx<'js>,
    calls: &Rc<Calls>,
    spec: &str,
    origin: Origin,
) -> rquickjs::Result<Object<'js>> {
    let obj = Object::new(ctx.clone())?;
    let stdlib = if origin == Origin::Stdlib {
        STDLIB_BIT
    } else {
        0
    };
    for f in cap::module_functions(spec) {
        let Some(name) = f.js else { continue };
        let qualified = format!("{}.{name}", spec.trim_start_matches("hull:"));
        let func = if f.uses_registry() {
            let calls = calls.clone();
            Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
                register(&ctx, &calls, f, &args.0)
            })?
            .with_name(&qualified)?
            .into_value()
        } else if let Some(type_name) = f.returns_object() {
            object_maker(ctx, calls, f, type_name, &qualified)?
        } else if f.reads_in_place() {
            function_with_magic::<InPlace>(ctx, &qualified, f.index())?
        } else {
            function_with_magic::<Entries>(ctx, &qualified, f.index() | stdlib)?
        };
        obj.set(name, func)?;
        if f.js_async {
            let calls = calls.clone();
            let name = format!("{name}Async");
            let func = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
                Bound {
                    calls: &calls,
                    f,
                    origin,
                }
                .call_async(&ctx, &args.0)
            })?
            .with_name(&name)?;
            obj.set(name, func)?;
        }
    }
    Ok(obj)
}

/// The methods of one type (`Response`: the prototype of every `res`;
/// `WebSocket`: ws.js puts them on its connections' prototype), their
/// functions named as the object is (`res.json`, `ws.send`).
pub(crate) fn methods<'js>(
    ctx: &Ctx<'js>,
    type_name: &str,
    object: &str,
) -> rquickjs::Result<Object<'js>> {
    let obj = Object::new(ctx.clone())?;
    for f in cap::methods_of(type_name) {
        let Some(name) = f.js else { continue };
        let qualified = format!("{object}.{name}");
        if !f.reads_in_place() {
            obj.set(name, method_on_this(ctx, f, &qualified)?)?;
            continue;
        }
        let chains = if f.chains() { CHAINS_BIT } else { 0 };
        obj.set(
            name,
            function_with_magic::<InPlace>(ctx, &qualified, f.index() | chains)?,
        )?;
    }
    Ok(obj)
}

/// A method that takes its arguments as values (a metric's `inc`): its
/// object, `this`, comes first.
fn method_on_this<'js>(
    ctx: &Ctx<'js>,
    f: &'static CapFn,
    qualified: &str,
) -> rquickjs::Result<Value<'js>> {
    let func = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, this: This<Value<'js>>, args: Rest<Value<'js>>| {
            let calls = ctx
                .userdata::<CallsData>()
                .ok_or_else(|| Exception::throw_internal(&ctx, "capabilities not installed"))?;
            let mut values = Vec::with_capacity(args.0.len() + 1);
            values.push(this.0);
            values.extend(args.0);
            Bound {
                calls: &calls.0,
                f,
                origin: Origin::App,
            }
            .call(&ctx, &values)
        },
    )?;
    Ok(func.with_name(qualified)?.into_value())
}

/// A function whose result is an object of a type with methods
/// (`metrics.counter`): the object it returns gets the type's methods as
/// its prototype.
fn object_maker<'js>(
    ctx: &Ctx<'js>,
    calls: &Rc<Calls>,
    f: &'static CapFn,
    type_name: &'static str,
    qualified: &str,
) -> rquickjs::Result<Value<'js>> {
    let calls = calls.clone();
    let func = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
        let made = Bound {
            calls: &calls,
            f,
            origin: Origin::App,
        }
        .call(&ctx, &args.0)?;
        if let Some(o) = made.as_object() {
            let proto = methods(&ctx, type_name, &type_name.to_ascii_lowercase())?;
            o.set_prototype(Some(&proto))?;
        }
        Ok::<_, rquickjs::Error>(made)
    })?;
    Ok(func.with_name(qualified)?.into_value())
}

/// Every capability module's object, under its export name, into
/// `objects`; what their calls need, into the context's userdata.
pub(crate) fn install<'js>(
    ctx: &Ctx<'js>,
    host: &Rc<Host>,
    kv: &Kv,
    objects: &Object<'js>,
) -> rquickjs::Result<()> {
    let calls = Rc::new(Calls {
        host: host.clone(),
        kv: kv.clone(),
    });
    ctx.store_userdata(Static(calls.clone()))
        .map_err(|_| rquickjs::Error::new_from_js("userdata", "capabilities"))?;
    for spec in cap::modules() {
        let name = cove_caps::api::module_by_js(spec)
            .map(|m| m.object_name())
            .unwrap_or(spec);
        objects.set(name, module(ctx, &calls, spec, Origin::App)?)?;
    }
    Ok(())
}

/// `hull:db`'s functions whose statements may use the reserved tables:
/// the `db` stdlib modules import (prelude.js makes the app's `db`, with
/// its `batch` and `dialect`, its prototype).
pub(crate) fn stdlib_db<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
    let calls = ctx
        .userdata::<CallsData>()
        .ok_or_else(|| Exception::throw_internal(ctx, "capabilities not installed"))?;
    module(ctx, &calls.0, "hull:db", Origin::Stdlib)
}

/// `console.log/info/debug/warn/error`: `log`'s functions (`console.log`
/// is `log.info`).
pub(crate) fn install_console<'js>(ctx: &Ctx<'js>, objects: &Object<'js>) -> rquickjs::Result<()> {
    let log: Object = objects.get("log")?;
    let console = Object::new(ctx.clone())?;
    for (name, level) in [
        ("log", "info"),
        ("info", "info"),
        ("debug", "debug"),
        ("warn", "warn"),
        ("error", "error"),
    ] {
        console.set(name, log.get::<_, Value>(level)?)?;
    }
    ctx.globals().set("console", console)
}
