//! `hull:template`: cove-template bound to JavaScript.
//!
//! The renderer reads the data object in place through QuickJS's C API:
//! values are raw `JSValue`s (reference counted by hand), field names are
//! atoms made once per interned name and kept for the context's lifetime,
//! arrays are read by index. A getter that throws ends the render with
//! its message.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::rc::Rc;

use rquickjs::function::Opt;
use rquickjs::{qjs, Ctx, Function, JsLifetime, Object, Persistent, Value};

use cove_core::AppFiles;
use cove_template::{render, Flavor, Host, ItemKey, Key, Shape, Template, Templates};

use crate::bind::{set_fn, throw};
use crate::fastfn::{fast_table, install, Args, Method};
use crate::host::{if_call, Rendered};
use crate::layout;

/// Per-context state: the template cache and one atom per interned name.
pub(crate) struct State {
    templates: RefCell<Templates>,
    /// `atoms[id]` is name `id`; never freed (the runtime frees its atoms).
    atoms: RefCell<Vec<qjs::JSAtom>>,
}

/// Kept as context userdata, filled in when the app's files are known.
pub(crate) struct TemplateState(Rc<State>);

// SAFETY: holds no JS values with a lifetime (atoms are plain numbers).
unsafe impl<'js> JsLifetime<'js> for TemplateState {
    type Changed<'to> = TemplateState;
}

/// Make the cache for this context (the module loader knows the files).
pub(crate) fn prepare(ctx: &Ctx<'_>, files: &AppFiles) {
    if ctx.userdata::<TemplateState>().is_none() {
        let state = State {
            templates: RefCell::new(Templates::new(files.clone())),
            atoms: RefCell::new(Vec::new()),
        };
        let _ = ctx.store_userdata(TemplateState(Rc::new(state)));
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
    install(&obj, &TEMPLATE, template_entry)?;
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
    TEMPLATE,
    template_entry,
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
    let raw = ctx.as_raw().as_ptr();
    // Atoms for names compiled since the last render.
    {
        let templates = st.templates.borrow();
        let names = templates.names();
        let mut atoms = st.atoms.borrow_mut();
        for id in atoms.len()..names.len() {
            let name = names.get(id as u32).unwrap_or("");
            // SAFETY: making an atom from a string; freed with the runtime.
            atoms.push(unsafe { qjs::JS_NewAtomLen(raw, name.as_ptr().cast(), name.len() as _) });
        }
    }
    let atoms = st.atoms.borrow();
    let data = data.unwrap_or_else(|| Value::new_undefined(ctx.clone()));
    let mut host = JsHost {
        ctx,
        raw,
        // SAFETY: a new reference to the data, freed by JsVal's drop.
        data: JsVal::dup(raw, data.as_raw()),
        atoms: &atoms,
        error: None,
        cstr: std::ptr::null(),
        held: None,
    };
    let result = render(t, &mut host);
    let error = host.error.take();
    drop(host);
    match (result, error) {
        (_, Some(e)) => Err(throw(ctx, &format!("template.{api}: {}: {e}", t.file()))),
        (Ok(out), None) => {
            // QuickJS decodes the UTF-8 itself (invalid bytes become U+FFFD);
            // a second check on the Rust side cost ~6 instructions a byte.
            // SAFETY: a new string from a byte buffer; an exception is checked.
            let v = unsafe { qjs::JS_NewStringLen(raw, out.as_ptr().cast(), out.len() as _) };
            // SAFETY: reading the tag of the value just returned.
            if unsafe { qjs::JS_VALUE_GET_TAG(v) } == qjs::JS_TAG_EXCEPTION {
                return Err(rquickjs::Error::Exception);
            }
            // SAFETY: the String takes over the new reference.
            let page = unsafe { Value::from_raw(ctx.clone(), v) }
                .into_string()
                .ok_or_else(|| throw(ctx, "template: output is not a string"))?;
            remember(ctx, &page, out);
            Ok(page)
        }
        (Err(e), None) => Err(throw(ctx, &format!("template.{api}: {e}"))),
    }
}

/// The address of a string value's QuickJS string.
fn string_ptr(v: &Value<'_>) -> Option<usize> {
    // SAFETY: reading the pointer of a live string value.
    v.is_string()
        .then(|| unsafe { qjs::JS_VALUE_GET_PTR(v.as_raw()) } as usize)
}

/// Keep `page` and its bytes for `res.html`, when a call is in progress
/// and the bytes are valid UTF-8 (then the string converts back to exactly
/// them; QuickJS made U+FFFD of anything else).
fn remember<'js>(ctx: &Ctx<'js>, page: &rquickjs::String<'js>, out: Vec<u8>) {
    let Ok(text) = String::from_utf8(out) else {
        return;
    };
    let Some(ptr) = string_ptr(page.as_value()) else {
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
    let ptr = string_ptr(v)?;
    if_call(|c| c.rendered.take_if(|r| r.ptr == ptr).map(|r| r.text)).flatten()
}

/// An owned reference to a JS value.
struct JsVal {
    raw: *mut qjs::JSContext,
    v: qjs::JSValue,
}

impl JsVal {
    /// Take ownership of a reference the C API returned.
    #[inline]
    fn own(raw: *mut qjs::JSContext, v: qjs::JSValue) -> JsVal {
        JsVal { raw, v }
    }

    fn dup(raw: *mut qjs::JSContext, v: qjs::JSValue) -> JsVal {
        // SAFETY: adding a reference to a live value.
        JsVal::own(raw, unsafe { layout::dup(raw, v) })
    }

    #[inline]
    fn tag(&self) -> i32 {
        // SAFETY: reading the tag of a live value.
        unsafe { qjs::JS_VALUE_GET_TAG(self.v) }
    }

    fn is_array(&self) -> bool {
        // SAFETY: a type check on a live value.
        self.tag() == qjs::JS_TAG_OBJECT && unsafe { qjs::JS_IsArray(self.v) }
    }
}

impl Clone for JsVal {
    fn clone(&self) -> JsVal {
        JsVal::dup(self.raw, self.v)
    }
}

impl Drop for JsVal {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: each JsVal owns exactly one reference.
        unsafe { layout::free(self.raw, self.v) }
    }
}

struct JsHost<'a, 'js> {
    ctx: &'a Ctx<'js>,
    raw: *mut qjs::JSContext,
    data: JsVal,
    atoms: &'a [qjs::JSAtom],
    /// The first exception a getter or `toString` threw.
    error: Option<String>,
    /// The C string the last [`JsHost::string_bytes`] returned, freed at
    /// the next call (or drop): the bytes are read in place, not copied.
    cstr: *const std::ffi::c_char,
    /// The string whose bytes the last [`JsHost::string_bytes`] returned in
    /// place (an ASCII string needs no conversion).
    held: Option<JsVal>,
}

impl Drop for JsHost<'_, '_> {
    fn drop(&mut self) {
        self.free_cstr();
    }
}

impl JsHost<'_, '_> {
    fn undefined(&self) -> JsVal {
        JsVal::own(self.raw, qjs::JS_UNDEFINED)
    }

    /// Own `v`; an exception becomes `undefined` and is remembered.
    #[inline]
    fn checked(&mut self, v: qjs::JSValue) -> JsVal {
        // SAFETY: reading the tag of a value just returned.
        if unsafe { qjs::JS_VALUE_GET_TAG(v) } == qjs::JS_TAG_EXCEPTION {
            return self.caught();
        }
        JsVal::own(self.raw, v)
    }

    /// The exception just thrown, remembered; `undefined` in its place.
    #[cold]
    #[inline(never)]
    fn caught(&mut self) -> JsVal {
        let e = self.ctx.catch();
        if self.error.is_none() {
            self.error = Some(exception_text(&e));
        }
        self.undefined()
    }

    #[inline]
    fn free_cstr(&mut self) {
        if !self.cstr.is_null() {
            // SAFETY: a C string from JS_ToCStringLen2, freed once.
            unsafe { qjs::JS_FreeCString(self.raw, self.cstr) };
            self.cstr = std::ptr::null();
        }
    }

    /// A string value as UTF-8, valid until the next call: an ASCII
    /// string's own bytes, read in place, else QuickJS's conversion.
    #[inline]
    fn string_bytes(&mut self, v: &JsVal) -> &[u8] {
        self.free_cstr();
        // SAFETY: a live value, kept alive by `self.held` until the next call.
        if let Some(bytes) = unsafe { layout::ascii_bytes(v.v) } {
            self.held = Some(v.clone());
            return bytes;
        }
        let mut len = 0;
        // SAFETY: converting a string (or any value, via toString) to a C
        // string, kept alive (and freed) by `self.cstr`.
        unsafe {
            let ptr = qjs::JS_ToCStringLen2(self.raw, &mut len, v.v, false);
            if ptr.is_null() {
                let e = self.ctx.catch();
                self.error.get_or_insert_with(|| exception_text(&e));
                return &[];
            }
            self.cstr = ptr;
            std::slice::from_raw_parts(ptr.cast::<u8>(), len as usize)
        }
    }

    fn length(&mut self, v: &JsVal) -> usize {
        let mut n: i64 = 0;
        // SAFETY: reading `length` of an array.
        let status = unsafe { qjs::JS_GetLength(self.raw, v.v, &mut n) };
        if status < 0 {
            let _ = self.checked(qjs::JS_EXCEPTION);
            return 0;
        }
        n.max(0) as usize
    }

    /// Own enumerable string keys (Object.keys order), with their values.
    fn own_entries(&mut self, v: &JsVal, with_values: bool) -> Vec<(String, JsVal)> {
        let mut tab: *mut qjs::JSPropertyEnum = std::ptr::null_mut();
        let mut len: u32 = 0;
        let flags = (qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_ENUM_ONLY) as i32;
        // SAFETY: the property list is freed below on every path.
        let status =
            unsafe { qjs::JS_GetOwnPropertyNames(self.raw, &mut tab, &mut len, v.v, flags) };
        if status < 0 {
            let _ = self.checked(qjs::JS_EXCEPTION);
            return Vec::new();
        }
        let mut out = Vec::with_capacity(len as usize);
        for i in 0..len as usize {
            // SAFETY: `i < len` entries of the list QuickJS returned.
            let atom = unsafe { (*tab.add(i)).atom };
            let mut klen = 0;
            // SAFETY: an atom's name as a C string, freed after the copy.
            let key = unsafe {
                let p = qjs::JS_AtomToCStringLen(self.raw, &mut klen, atom);
                if p.is_null() {
                    continue;
                }
                let s = String::from_utf8_lossy(std::slice::from_raw_parts(
                    p.cast::<u8>(),
                    klen as usize,
                ))
                .into_owned();
                qjs::JS_FreeCString(self.raw, p);
                s
            };
            let value = if with_values {
                // SAFETY: reading a property by an atom from the list.
                let v = unsafe { qjs::JS_GetProperty(self.raw, v.v, atom) };
                self.checked(v)
            } else {
                self.undefined()
            };
            out.push((key, value));
        }
        // SAFETY: freeing the list once.
        unsafe { qjs::JS_FreePropertyEnum(self.raw, tab, len) };
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

impl Host for JsHost<'_, '_> {
    type Value = JsVal;

    fn flavor(&self) -> Flavor {
        Flavor::Js
    }

    fn data(&mut self) -> JsVal {
        self.data.clone()
    }

    #[inline]
    fn field(&mut self, obj: &JsVal, key: &Key) -> JsVal {
        if obj.tag() != qjs::JS_TAG_OBJECT {
            return self.undefined();
        }
        let v = match self.atoms.get(key.id as usize) {
            // SAFETY: reading a property with an atom that lives as long as the runtime.
            Some(&atom) => unsafe { qjs::JS_GetProperty(self.raw, obj.v, atom) },
            // Past the interner's bound: a temporary atom.
            // SAFETY: the atom is freed right after the read.
            None => unsafe {
                let atom =
                    qjs::JS_NewAtomLen(self.raw, key.name.as_ptr().cast(), key.name.len() as _);
                let v = qjs::JS_GetProperty(self.raw, obj.v, atom);
                qjs::JS_FreeAtom(self.raw, atom);
                v
            },
        };
        self.checked(v)
    }

    #[inline]
    fn shape(&mut self, v: &JsVal) -> Shape<'_> {
        // SAFETY: reading tag and payload of a live value.
        unsafe {
            match v.tag() {
                qjs::JS_TAG_UNDEFINED | qjs::JS_TAG_NULL | qjs::JS_TAG_UNINITIALIZED => Shape::Nil,
                qjs::JS_TAG_BOOL => Shape::Bool(qjs::JS_VALUE_GET_BOOL(v.v)),
                qjs::JS_TAG_INT => Shape::Int(i64::from(qjs::JS_VALUE_GET_INT(v.v))),
                qjs::JS_TAG_FLOAT64 => Shape::Float(qjs::JS_VALUE_GET_FLOAT64(v.v)),
                qjs::JS_TAG_STRING | qjs::JS_TAG_STRING_ROPE => {
                    Shape::Str(std::borrow::Cow::Borrowed(self.string_bytes(v)))
                }
                _ => Shape::Table,
            }
        }
    }

    fn items(&mut self, v: &JsVal) -> Result<usize, String> {
        if v.is_array() {
            return Ok(self.length(v));
        }
        Err("cannot loop over an object with {% for x in … %}: it is not an array; use {% for k, v in … %}".into())
    }

    fn item(&mut self, v: &JsVal, i: usize) -> JsVal {
        // SAFETY: an indexed read (arrays take QuickJS's fast path).
        let item = unsafe { qjs::JS_GetPropertyUint32(self.raw, v.v, i as u32) };
        self.checked(item)
    }

    fn entries(&mut self, v: &JsVal) -> Result<Vec<(ItemKey, JsVal)>, String> {
        if v.is_array() {
            let n = self.length(v);
            return Ok((0..n)
                .map(|i| (ItemKey::Str(i.to_string()), self.item(v, i)))
                .collect());
        }
        // SAFETY: `v` is a live value of this context.
        unsafe { crate::req::fill(self.ctx, v.v) };
        Ok(self
            .own_entries(v, true)
            .into_iter()
            .map(|(k, v)| (ItemKey::Str(k), v))
            .collect())
    }

    fn count(&mut self, v: &JsVal) -> usize {
        if v.is_array() {
            self.length(v)
        } else if v.tag() == qjs::JS_TAG_OBJECT {
            self.own_entries(v, false).len()
        } else {
            0
        }
    }

    fn json(&mut self, v: &JsVal, out: &mut Vec<u8>) -> Result<(), String> {
        // SAFETY: the Value takes over a new reference.
        let value =
            unsafe { Value::from_raw(self.ctx.clone(), JsVal::dup(self.raw, v.v).into_raw()) };
        match crate::json::encode(self.ctx, &value, out) {
            Ok(true) => return Ok(()),
            Ok(false) => out.clear(),
            Err(_) => return Err(exception_text(&self.ctx.catch())),
        }
        match self.ctx.json_stringify(value) {
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

    fn display(&mut self, v: &JsVal, out: &mut Vec<u8>) {
        // SAFETY: `String(v)`, owned and freed by the JsVal.
        let s = unsafe { qjs::JS_ToString(self.raw, v.v) };
        let s = self.checked(s);
        out.extend_from_slice(self.string_bytes(&s));
    }
}

impl JsVal {
    /// Give up ownership (the caller now owns the reference).
    fn into_raw(self) -> qjs::JSValue {
        let v = self.v;
        std::mem::forget(self);
        v
    }
}
