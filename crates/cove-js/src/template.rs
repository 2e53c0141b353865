//! `hull:template`: cove-template bound to JavaScript.
//!
//! The renderer reads the data object in place through the value view
//! (raw/value.rs): values are owned `Val`s, field names are atoms made
//! once per interned name and kept for the context's lifetime, arrays are
//! read by index. A getter that throws ends the render with its message.

use std::cell::RefCell;
use std::rc::Rc;

use rquickjs::function::Opt;
use rquickjs::{Ctx, Function, Object, Persistent, Value};

use cove_core::AppFiles;
use cove_template::{render, Flavor, Host, ItemKey, Key, Shape, Template, Templates};

use crate::bind::{set_fn, throw};
use crate::host::{if_call, Rendered};
use crate::raw::fastfn::{fast_table, install, Args, Method};
use crate::raw::userdata::Static;
use crate::raw::value::{new_string, string_id, Atom, Obj, Thrown, Val, View};

/// Per-context state: the template cache and one atom per interned name.
pub(crate) struct State {
    templates: RefCell<Templates>,
    /// `atoms[id]` is name `id`; never freed (the runtime frees its atoms).
    atoms: RefCell<Vec<Atom<'static>>>,
}

/// Kept as context userdata, filled in when the app's files are known.
type TemplateState = Static<Rc<State>>;

/// Make the cache for this context (the module loader knows the files).
pub(crate) fn prepare(ctx: &Ctx<'_>, files: &AppFiles) {
    if ctx.userdata::<TemplateState>().is_none() {
        let state = State {
            templates: RefCell::new(Templates::new(files.clone())),
            atoms: RefCell::new(Vec::new()),
        };
        let _ = ctx.store_userdata(Static(Rc::new(state)));
    }
}

impl crate::JsEngine {
    /// Compile every template of `files` (the app's) into this context's
    /// cache, making the cache if the app has not imported `hull:template`.
    /// `cove dev` does it in each VM it builds: a template that does not
    /// parse fails the load, and the VM renders the templates it was built
    /// with, whatever is saved over them later.
    pub fn compile_templates(&self, files: &AppFiles) -> Result<usize, Vec<cove_template::Error>> {
        self.context.with(|ctx| {
            prepare(&ctx, files);
            match ctx.userdata::<TemplateState>() {
                Some(st) => st.0.templates.borrow_mut().compile_all(),
                None => Ok(0),
            }
        })
    }
}

fn state(ctx: &Ctx<'_>) -> rquickjs::Result<Rc<State>> {
    ctx.userdata::<TemplateState>()
        .map(|s| s.0.clone())
        .ok_or_else(|| throw(ctx, "hull:template is not ready"))
}

/// The `template` object of `hull:template`.
pub(crate) fn module<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
    let obj = Object::new(ctx.clone())?;
    install::<TemplateMethods>(&obj)?;
    set_fn(
        &obj,
        "renderString",
        |ctx: Ctx<'js>, source: String, data: Opt<Value<'js>>| {
            let st = state(&ctx)?;
            let t = st.templates.borrow_mut().compile_str(&source);
            let t = t.map_err(|e| throw(&ctx, &format!("template.renderString: {e}")))?;
            run(&ctx, &st, &t, data.0, "renderString")
        },
    )?;
    set_fn(&obj, "compile", |ctx: Ctx<'js>, name: String| {
        let st = state(&ctx)?;
        let t = st.templates.borrow_mut().get(&name);
        let t = t.map_err(|e| throw(&ctx, &format!("template.compile: {e}")))?;
        Function::new(ctx.clone(), move |ctx: Ctx<'js>, data: Opt<Value<'js>>| {
            let st = state(&ctx)?;
            run(&ctx, &st, &t, data.0, "render")
        })
    })?;
    set_fn(&obj, "clearCache", |ctx: Ctx<'js>| {
        state(&ctx)?.templates.borrow_mut().clear();
        Ok::<_, rquickjs::Error>(())
    })?;
    Ok(obj)
}

fast_table!(
    TemplateMethods,
    [Method {
        name: "template.render",
        arity: 2,
        chains: false,
        run: render_fast
    }]
);

/// `template.render(name, data)`, called on every page: a fast method
/// (rquickjs's closure wrapper and argument conversion cost ~1k
/// instructions a call).
fn render_fast<'js>(ctx: &Ctx<'js>, args: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    let name = args.get(ctx, 0);
    let Some(name) = name.as_string() else {
        let got = crate::bind::type_name(&name);
        let msg = format!("template.render: the template name must be a string, got {got}");
        return Err(throw(ctx, &msg));
    };
    let name = name.to_string()?;
    let st = state(ctx)?;
    let t = st.templates.borrow_mut().get(&name);
    let t = t.map_err(|e| throw(ctx, &format!("template.render: {e}")))?;
    let data = args.get(ctx, 1);
    run(ctx, &st, &t, Some(data), "render").map(|page| page.into_value())
}

fn run<'js>(
    ctx: &Ctx<'js>,
    st: &State,
    t: &Template,
    data: Option<Value<'js>>,
    api: &str,
) -> rquickjs::Result<rquickjs::String<'js>> {
    // Atoms for names compiled since the last render.
    {
        let templates = st.templates.borrow();
        let names = templates.names();
        let mut atoms = st.atoms.borrow_mut();
        for id in atoms.len()..names.len() {
            let name = names.get(id as u32).unwrap_or("");
            atoms.push(Atom::interned(ctx, name));
        }
    }
    let atoms = st.atoms.borrow();
    let data = match &data {
        Some(v) => Val::of(v),
        None => Val::undefined(ctx),
    };
    let mut host = JsHost {
        ctx,
        data,
        atoms: &atoms,
        error: None,
        held: None,
        buf: Vec::new(),
    };
    let result = render(t, &mut host);
    let error = host.error.take();
    drop(host);
    match (result, error) {
        (_, Some(e)) => Err(throw(ctx, &format!("template.{api}: {}: {e}", t.file()))),
        (Ok(out), None) => {
            // QuickJS decodes the UTF-8 itself (invalid bytes become U+FFFD);
            // a second check on the Rust side cost ~6 instructions a byte.
            let page = new_string(ctx, &out)?;
            remember(ctx, &page, out);
            Ok(page)
        }
        (Err(e), None) => Err(throw(ctx, &format!("template.{api}: {e}"))),
    }
}

/// Keep `page` and its bytes for `res.html`, when a call is in progress
/// and the bytes are valid UTF-8 (then the string converts back to exactly
/// them; QuickJS made U+FFFD of anything else).
fn remember<'js>(ctx: &Ctx<'js>, page: &rquickjs::String<'js>, out: Vec<u8>) {
    let Ok(text) = String::from_utf8(out) else {
        return;
    };
    let Some(ptr) = string_id(page.as_value()) else {
        return;
    };
    let kept = Rendered {
        _page: Persistent::save(ctx, page.clone()),
        ptr,
        text,
    };
    if_call(|c| c.rendered = Some(kept));
}

/// `v`'s text if it is the page [`remember`] kept (taken: a second use
/// converts the string as usual).
pub(crate) fn take_rendered(v: &Value<'_>) -> Option<String> {
    let ptr = string_id(v)?;
    if_call(|c| c.rendered.take_if(|r| r.ptr == ptr).map(|r| r.text)).flatten()
}

struct JsHost<'a, 'js> {
    ctx: &'a Ctx<'js>,
    data: Val<'js>,
    atoms: &'a [Atom<'static>],
    /// The first exception a getter or `toString` threw.
    error: Option<String>,
    /// The string whose bytes the last [`JsHost::string_bytes`] returned in
    /// place (an ASCII string needs no conversion).
    held: Option<Val<'js>>,
    /// The bytes the last [`JsHost::string_bytes`] returned when QuickJS
    /// converted them.
    buf: Vec<u8>,
}

impl<'js> JsHost<'_, 'js> {
    fn undefined(&self) -> Val<'js> {
        Val::undefined(self.ctx)
    }

    /// The value read; an exception becomes `undefined` and is remembered.
    #[inline]
    fn checked(&mut self, v: Result<Val<'js>, Thrown>) -> Val<'js> {
        match v {
            Ok(v) => v,
            Err(_) => self.caught(),
        }
    }

    /// The exception just thrown, remembered; `undefined` in its place.
    #[cold]
    #[inline(never)]
    fn caught(&mut self) -> Val<'js> {
        let e = self.ctx.catch();
        if self.error.is_none() {
            self.error = Some(exception_text(&e));
        }
        self.undefined()
    }

    /// A string value as UTF-8, valid until the next call: an ASCII
    /// string's own bytes, read in place, else QuickJS's conversion.
    #[inline]
    fn string_bytes(&mut self, v: &Val<'js>) -> &[u8] {
        if let Some(bytes) = v.ascii_kept(&mut self.held) {
            return bytes;
        }
        self.buf.clear();
        let converted = match v.view() {
            View::Str(s) => s.utf8().map(|b| self.buf.extend_from_slice(&b)),
            _ => Ok(()),
        };
        if converted.is_err() {
            // Not `caught`: `self.held` may still be lent (the branch above).
            let e = self.ctx.catch();
            self.error.get_or_insert_with(|| exception_text(&e));
        }
        &self.buf
    }

    fn length(&mut self, v: &Val<'js>) -> usize {
        let n = match v.view() {
            View::Object(o) => o.len(),
            _ => Ok(0),
        };
        match n {
            Ok(n) => n as usize,
            Err(_) => {
                let _ = self.caught();
                0
            }
        }
    }

    /// Own enumerable string keys (Object.keys order), with their values.
    fn own_entries(&mut self, v: &Val<'js>, with_values: bool) -> Vec<(String, Val<'js>)> {
        let View::Object(o) = v.view() else {
            return Vec::new();
        };
        let keys = match o.own_keys(true) {
            Ok(keys) => keys,
            Err(_) => {
                let _ = self.caught();
                return Vec::new();
            }
        };
        let mut out = Vec::with_capacity(keys.len());
        for (atom, _) in keys.iter() {
            let Some(key) = keys.name(atom) else {
                continue;
            };
            let value = if with_values {
                let v = o.get(atom);
                self.checked(v)
            } else {
                self.undefined()
            };
            out.push((key, value));
        }
        out
    }
}

fn exception_text(e: &Value<'_>) -> String {
    if let Some(obj) = e.as_object() {
        let name: String = obj.get("name").unwrap_or_else(|_| "Error".into());
        let msg: String = obj.get("message").unwrap_or_default();
        return format!("{name}: {msg}");
    }
    e.as_string()
        .and_then(|s| s.to_string().ok())
        .unwrap_or_else(|| "exception".into())
}

impl<'js> Host for JsHost<'_, 'js> {
    type Value = Val<'js>;

    fn flavor(&self) -> Flavor {
        Flavor::Js
    }

    fn data(&mut self) -> Val<'js> {
        self.data.clone()
    }

    // Inlined into the renderer's loops: called for every field of every
    // item (a call cost ~20 instructions more than the read).
    #[inline(always)]
    fn field(&mut self, obj: &Val<'js>, key: &Key) -> Val<'js> {
        let View::Object(o) = obj.view() else {
            return self.undefined();
        };
        let v = match self.atoms.get(key.id as usize) {
            Some(&atom) => o.get(atom),
            None => field_named(o, key),
        };
        self.checked(v)
    }

    #[inline]
    fn shape(&mut self, v: &Val<'js>) -> Shape<'_> {
        match v.view() {
            View::Undefined | View::Null => Shape::Nil,
            View::Bool(b) => Shape::Bool(b),
            View::Int(n) => Shape::Int(i64::from(n)),
            View::Float(f) => Shape::Float(f),
            View::Str(_) => Shape::Str(std::borrow::Cow::Borrowed(self.string_bytes(v))),
            View::Symbol | View::Object(_) | View::Other => Shape::Table,
        }
    }

    fn items(&mut self, v: &Val<'js>) -> Result<usize, String> {
        if is_array(v) {
            return Ok(self.length(v));
        }
        Err("cannot loop over an object with {% for x in … %}: it is not an array; use {% for k, v in … %}".into())
    }

    fn item(&mut self, v: &Val<'js>, i: usize) -> Val<'js> {
        let View::Object(o) = v.view() else {
            return self.undefined();
        };
        let item = o.index(i as u32);
        self.checked(item)
    }

    fn entries(&mut self, v: &Val<'js>) -> Result<Vec<(ItemKey, Val<'js>)>, String> {
        if is_array(v) {
            let n = self.length(v);
            return Ok((0..n)
                .map(|i| (ItemKey::Str(i.to_string()), self.item(v, i)))
                .collect());
        }
        crate::req::fill(self.ctx, v);
        Ok(self
            .own_entries(v, true)
            .into_iter()
            .map(|(k, v)| (ItemKey::Str(k), v))
            .collect())
    }

    fn count(&mut self, v: &Val<'js>) -> usize {
        if is_array(v) {
            self.length(v)
        } else if matches!(v.view(), View::Object(_)) {
            self.own_entries(v, false).len()
        } else {
            0
        }
    }

    fn json(&mut self, v: &Val<'js>, out: &mut Vec<u8>) -> Result<(), String> {
        match crate::json::encode_val(self.ctx, v, out) {
            Ok(true) => return Ok(()),
            Ok(false) => out.clear(),
            Err(_) => return Err(exception_text(&self.ctx.catch())),
        }
        match self.ctx.json_stringify(v.clone().into_value(self.ctx)) {
            Ok(Some(s)) => {
                out.extend_from_slice(s.to_string().map_err(|e| e.to_string())?.as_bytes());
                Ok(())
            }
            Ok(None) => {
                out.extend_from_slice(b"null");
                Ok(())
            }
            Err(_) => Err(exception_text(&self.ctx.catch())),
        }
    }

    fn display(&mut self, v: &Val<'js>, out: &mut Vec<u8>) {
        let s = v.to_js_string();
        let s = self.checked(s);
        out.extend_from_slice(self.string_bytes(&s));
    }
}

/// A field past the interner's bound, through a temporary atom.
#[cold]
#[inline(never)]
fn field_named<'js>(o: Obj<'_, 'js>, key: &Key) -> Result<Val<'js>, Thrown> {
    o.get_named(&key.name)
}

fn is_array(v: &Val<'_>) -> bool {
    matches!(v.view(), View::Object(o) if o.is_array())
}
