//! `res.json`'s serializer: JSON text straight from QuickJS values, without
//! `JSON.stringify`'s wrapper objects, key arrays and intermediate JS string
//! (which made it a third of a JSON route's instructions).
//!
//! It handles what API responses are made of: plain objects, arrays,
//! strings, numbers, booleans and null, with `JSON.stringify`'s rules
//! (insertion order, integer keys first; `undefined`, functions and symbols
//! skipped in objects and `null` in arrays). Anything else (a `toJSON`
//! method, Date, Map, boxed primitives, Proxy, BigInt, lone surrogates, very
//! deep nesting or cycles) returns [`Step::Unsupported`] and the caller uses
//! `JSON.stringify` for the whole value, so results never differ.
#![allow(unsafe_code)]

use std::rc::Rc;

use rquickjs::{qjs, Ctx, Value};

use cove_caps::json::write_utf8;
use cove_core::append;

use crate::shapes::Member;

/// Deeper than this is handed to `JSON.stringify` (which reports cycles).
const MAX_DEPTH: u32 = 128;

const CLASS_OBJECT: u32 = 1;
const CLASS_ARRAY: u32 = 2;

/// What happened to one value.
#[derive(PartialEq, Eq)]
enum Step {
    Written,
    /// `undefined`, a function or a symbol: no JSON of its own.
    Skip,
    Unsupported,
}

struct Encoder<'a, 'js> {
    ctx: &'a Ctx<'js>,
    raw: *mut qjs::JSContext,
    out: &'a mut Vec<u8>,
    depth: u32,
    protos: Option<Protos>,
    /// Whether Object.prototype / Array.prototype lack `toJSON`, once known.
    clean: [Option<bool>; 2],
    /// The last known shape looked up, and its members: the rows of an
    /// array share one shape, so they share one lookup.
    last_known: Option<(usize, Rc<[Member]>)>,
    /// A known shape (0: none) whose prototype was found standard and
    /// without `toJSON` in this encode.
    clean_shape: usize,
}

/// Where this thread's context keeps `Object.prototype` and
/// `Array.prototype` (pointers compared, never dereferenced).
#[derive(Clone, Copy)]
struct Protos {
    ctx: usize,
    object: usize,
    array: usize,
}

thread_local! {
    static PROTOS: std::cell::Cell<Option<Protos>> = const { std::cell::Cell::new(None) };
}

/// Note `ctx`'s standard prototypes, so plain objects skip the `toJSON`
/// lookup along their prototype chain.
pub(crate) fn register_protos(ctx: &Ctx<'_>) -> rquickjs::Result<()> {
    let ptr = |o: Option<rquickjs::Object<'_>>| {
        // SAFETY: reading the pointer of a live object (compared only).
        o.map_or(0, |o| unsafe { qjs::JS_VALUE_GET_PTR(o.as_raw()) } as usize)
    };
    let object = ptr(rquickjs::Object::new(ctx.clone())?.get_prototype());
    let array = ptr(rquickjs::Array::new(ctx.clone())?
        .into_object()
        .get_prototype());
    let ctx = ctx.as_raw().as_ptr() as usize;
    PROTOS.with(|p| p.set(Some(Protos { ctx, object, array })));
    Ok(())
}

/// Frees a property list from `JS_GetOwnPropertyNames` on every path.
struct PropList {
    raw: *mut qjs::JSContext,
    tab: *mut qjs::JSPropertyEnum,
    len: u32,
}

impl Drop for PropList {
    fn drop(&mut self) {
        // SAFETY: `tab`/`len` came from a successful JS_GetOwnPropertyNames
        // on this context and are freed exactly once.
        unsafe { qjs::JS_FreePropertyEnum(self.raw, self.tab, self.len) }
    }
}

/// A reference returned by the C API, freed on drop (without the context
/// reference count traffic of wrapping it in a `Value`).
struct Owned {
    raw: *mut qjs::JSContext,
    v: qjs::JSValue,
}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: we own this reference and free it once.
        unsafe { crate::layout::free(self.raw, self.v) }
    }
}

impl Encoder<'_, '_> {
    /// Take ownership of a value returned by the C API.
    fn owned(&self, v: qjs::JSValue) -> rquickjs::Result<Owned> {
        // SAFETY: reading the tag of a value just returned.
        if unsafe { qjs::JS_VALUE_GET_TAG(v) } == qjs::JS_TAG_EXCEPTION {
            return Err(rquickjs::Error::Exception);
        }
        Ok(Owned { raw: self.raw, v })
    }

    fn value(&mut self, raw: qjs::JSValue) -> rquickjs::Result<Step> {
        // SAFETY: reading the tag of a live value.
        let tag = unsafe { qjs::JS_VALUE_GET_TAG(raw) };
        match tag {
            qjs::JS_TAG_INT | qjs::JS_TAG_FLOAT64 | qjs::JS_TAG_BOOL | qjs::JS_TAG_NULL => {
                self.scalar(tag, raw);
            }
            qjs::JS_TAG_UNDEFINED | qjs::JS_TAG_SYMBOL => return Ok(Step::Skip),
            qjs::JS_TAG_STRING | qjs::JS_TAG_STRING_ROPE => return self.string(raw),
            qjs::JS_TAG_OBJECT => return self.object(raw),
            _ => return Ok(Step::Unsupported),
        }
        Ok(Step::Written)
    }

    /// Write a number, boolean or null (`tag` is one of theirs).
    #[inline(always)]
    fn scalar(&mut self, tag: i32, raw: qjs::JSValue) {
        // SAFETY: reading the payload of a live value of this tag.
        match tag {
            qjs::JS_TAG_INT => {
                let n = unsafe { qjs::JS_VALUE_GET_INT(raw) };
                // i32 digits directly: `write_int` formats an i64, slower.
                append(self.out, itoa::Buffer::new().format(n).as_bytes());
            }
            qjs::JS_TAG_FLOAT64 => {
                let f = unsafe { qjs::JS_VALUE_GET_FLOAT64(raw) };
                if f.is_finite() {
                    append(self.out, ryu_js::Buffer::new().format_finite(f).as_bytes());
                } else {
                    self.out.extend_from_slice(b"null");
                }
            }
            qjs::JS_TAG_BOOL => {
                let b = unsafe { qjs::JS_VALUE_GET_BOOL(raw) };
                self.out
                    .extend_from_slice(if b { b"true" } else { b"false" });
            }
            _ => self.out.extend_from_slice(b"null"),
        }
    }

    /// Write `prefix` and then `v`, if `v` is a number, boolean, null or a
    /// string read in place: values whose writing runs no script, so they
    /// need no reference of their own while written. False, with nothing
    /// written, for any other value.
    #[inline(always)]
    fn primitive(&mut self, prefix: &[u8], v: qjs::JSValue) -> bool {
        // SAFETY: reading the tag of a live value.
        let tag = unsafe { qjs::JS_VALUE_GET_TAG(v) };
        match tag {
            qjs::JS_TAG_INT | qjs::JS_TAG_FLOAT64 | qjs::JS_TAG_BOOL | qjs::JS_TAG_NULL => {
                append(self.out, prefix);
                self.scalar(tag, v);
                true
            }
            // SAFETY: `v` is live while it is written (nothing runs meanwhile).
            qjs::JS_TAG_STRING => match unsafe { crate::layout::ascii_bytes(v) } {
                Some(bytes) => {
                    append(self.out, prefix);
                    // ASCII is UTF-8: always written.
                    write_utf8(self.out, bytes);
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    fn string(&mut self, raw: qjs::JSValue) -> rquickjs::Result<Step> {
        // SAFETY: `raw` is a live string for the whole call.
        if let Some(bytes) = unsafe { crate::layout::ascii_bytes(raw) } {
            write_utf8(self.out, bytes);
            return Ok(Step::Written);
        }
        let mut len = 0;
        // SAFETY: `raw` is a live string; the buffer is freed below.
        let ptr = unsafe { qjs::JS_ToCStringLen2(self.raw, &mut len, raw, false) };
        if ptr.is_null() {
            return Err(rquickjs::Error::Exception);
        }
        let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len as usize) };
        // Lone surrogates come out as invalid UTF-8; JSON.stringify escapes them.
        let step = if write_utf8(self.out, bytes) {
            Step::Written
        } else {
            Step::Unsupported
        };
        unsafe { qjs::JS_FreeCString(self.raw, ptr) };
        Ok(step)
    }

    /// Whether `obj` may have a `toJSON` method. Objects straight from
    /// `Object.prototype`/`Array.prototype` (checked once per encode) only if
    /// they have their own (seen while listing their keys); others are
    /// looked up along their prototype chain. Also whether `obj`'s
    /// prototype is the standard one.
    fn inherits_to_json(
        &mut self,
        obj: qjs::JSValue,
        class: u32,
    ) -> rquickjs::Result<(bool, bool)> {
        // SAFETY: the prototype of a live object; the result is owned.
        let proto = self.owned(unsafe { qjs::JS_GetPrototype(self.raw, obj) })?;
        let proto_ptr = unsafe { qjs::JS_VALUE_GET_PTR(proto.v) } as usize;
        let standard = self
            .protos
            .filter(|p| p.ctx == self.raw as usize)
            .and_then(|p| {
                let (ptr, slot) = if class == CLASS_ARRAY {
                    (p.array, 1)
                } else {
                    (p.object, 0)
                };
                (ptr == proto_ptr).then_some(slot)
            });
        let Some(slot) = standard else {
            return Ok((self.has_to_json(obj)?, false));
        };
        if self.clean[slot].is_none() {
            self.clean[slot] = Some(!self.has_to_json(proto.v)?);
        }
        Ok((self.clean[slot] == Some(false), true))
    }

    fn has_to_json(&self, obj: qjs::JSValue) -> rquickjs::Result<bool> {
        // SAFETY: property read on a live object; the result is owned.
        let f = self.owned(unsafe {
            qjs::JS_GetProperty(self.raw, obj, qjs::JS_ATOM_toJSON as qjs::JSAtom)
        })?;
        Ok(unsafe { qjs::JS_VALUE_GET_TAG(f.v) } != qjs::JS_TAG_UNDEFINED)
    }

    fn object(&mut self, raw: qjs::JSValue) -> rquickjs::Result<Step> {
        // SAFETY: class id of a live object.
        let class = unsafe { qjs::JS_GetClassID(raw) };
        if class != CLASS_OBJECT && class != CLASS_ARRAY {
            let is_fn = unsafe { qjs::JS_IsFunction(self.raw, raw) };
            return Ok(if is_fn { Step::Skip } else { Step::Unsupported });
        }
        if self.depth >= MAX_DEPTH {
            return Ok(Step::Unsupported);
        }
        // A plain object of a known shape whose prototype (the shape's)
        // was found standard and clean in this encode: the rows of an
        // array after the first skip the prototype lookup.
        // SAFETY: `raw` is a live plain object.
        let checked = class == CLASS_OBJECT
            && self.clean_shape != 0
            && unsafe { crate::layout::shape_of(raw) } == Some(self.clean_shape);
        let standard = if checked {
            true
        } else {
            let (inherits, standard) = self.inherits_to_json(raw, class)?;
            if inherits {
                return Ok(Step::Unsupported);
            }
            standard
        };
        self.depth += 1;
        let step = if class == CLASS_ARRAY {
            self.array(raw)
        } else {
            self.members(raw, standard)
        };
        self.depth -= 1;
        step
    }

    fn array(&mut self, raw: qjs::JSValue) -> rquickjs::Result<Step> {
        let mut len: i64 = 0;
        // SAFETY: length of a live array.
        if unsafe { qjs::JS_GetLength(self.raw, raw, &mut len) } < 0 {
            return Err(rquickjs::Error::Exception);
        }
        self.out.push(b'[');
        for i in 0..len {
            if i > 0 {
                self.out.push(b',');
            }
            let item = self.owned(unsafe { qjs::JS_GetPropertyUint32(self.raw, raw, i as u32) })?;
            match self.value(item.v)? {
                Step::Written => {}
                Step::Skip => self.out.extend_from_slice(b"null"),
                Step::Unsupported => return Ok(Step::Unsupported),
            }
        }
        self.out.push(b']');
        Ok(Step::Written)
    }

    /// A plain object's members; `standard`: its prototype is the
    /// standard one, without `toJSON`.
    fn members(&mut self, raw: qjs::JSValue, standard: bool) -> rquickjs::Result<Step> {
        // SAFETY: `raw` is a live plain object.
        let shape = unsafe { crate::layout::shape_of(raw) };
        if let Some((shape, known)) = shape.and_then(|s| Some((s, self.known_shape(s)?))) {
            // A known shape is kept for the runtime's life: its address
            // names no other shape meanwhile, and its prototype is fixed.
            if standard {
                self.clean_shape = shape;
            }
            return self.known_members(raw, shape, &known);
        }
        let mut tab = std::ptr::null_mut();
        let mut len = 0;
        // Non-enumerable keys too: an own `toJSON` must send us to JSON.stringify.
        let flags = (qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_SET_ENUM) as i32;
        // SAFETY: own string keys of a live object.
        if unsafe { qjs::JS_GetOwnPropertyNames(self.raw, &mut tab, &mut len, raw, flags) } < 0 {
            return Err(rquickjs::Error::Exception);
        }
        let props = PropList {
            raw: self.raw,
            tab,
            len,
        };
        // SAFETY: `tab` holds `len` entries until `props` drops.
        let entries = unsafe { std::slice::from_raw_parts(props.tab, props.len as usize) };
        if self.depth == 1 {
            // The object handed to res.json, usually a literal the handler
            // builds on every request: keep its shape (shapes.rs).
            let keys: Vec<qjs::JSAtom> = entries
                .iter()
                .filter(|e| e.is_enumerable)
                .map(|e| e.atom)
                .collect();
            crate::shapes::keep(self.ctx, &keys);
        }
        self.out.push(b'{');
        let mut first = true;
        for entry in entries {
            if entry.atom == qjs::JS_ATOM_toJSON as qjs::JSAtom {
                return Ok(Step::Unsupported);
            }
            if !entry.is_enumerable {
                continue;
            }
            let read = |e: &Self| e.get(raw, entry.atom);
            if !self.member(&mut first, |e| e.key(entry.atom), read)? {
                return Ok(Step::Unsupported);
            }
        }
        self.out.push(b'}');
        Ok(Step::Written)
    }

    fn known_shape(&mut self, shape: usize) -> Option<Rc<[Member]>> {
        match &self.last_known {
            Some((last, members)) if *last == shape => Some(members.clone()),
            _ => {
                let members = crate::shapes::known_members(self.ctx, shape)?;
                self.last_known = Some((shape, members.clone()));
                Some(members)
            }
        }
    }

    /// An object whose shape is a kept key list's (shapes.rs): the same
    /// own properties, all enumerable plain values, none named `toJSON`,
    /// so no listing is needed and the names are written from the cache.
    /// Each value is read from its slot (layout.rs) when the layout is known
    /// and the object still has `shape`.
    fn known_members(
        &mut self,
        raw: qjs::JSValue,
        shape: usize,
        known: &[Member],
    ) -> rquickjs::Result<Step> {
        self.out.push(b'{');
        let mut first = true;
        for (i, m) in known.iter().enumerate() {
            // Encoding a member may call a getter further down that changes
            // `raw` itself: a property deleted (its slots compacted, the
            // array shrunk), added, or made an accessor (its slot then
            // holds a getter/setter pair, not a value). The shape changes
            // with each, so it is checked before every slot read; once it
            // changed, the rest are read by name, as JSON.stringify reads
            // the keys it listed at the start (issue 38).
            // SAFETY: `raw` is a live object; while it has the kept shape,
            // its entries are plain data properties, in `known`'s order.
            let slot = unsafe { crate::layout::slot_of_shape(raw, shape, i) };
            // A primitive is written at once, without a reference: nothing
            // runs while it is.
            if let Some(v) = slot {
                if self.primitive(m.prefix(first), v) {
                    first = false;
                    continue;
                }
            }
            if !self.known_member(raw, slot, m, &mut first)? {
                return Ok(Step::Unsupported);
            }
        }
        self.out.push(b'}');
        Ok(Step::Written)
    }

    /// Member `m` of `raw` (an object of a known shape) that is not a
    /// primitive read from its slot: `slot` is its value if it was read
    /// from the slot, else it is read by name. False if the value is not
    /// ours to write.
    #[inline(never)]
    fn known_member(
        &mut self,
        raw: qjs::JSValue,
        slot: Option<qjs::JSValue>,
        m: &Member,
        first: &mut bool,
    ) -> rquickjs::Result<bool> {
        let cached = |e: &mut Self| {
            append(e.out, m.json());
            Ok(true)
        };
        // The value is dup'd: encoding it may call a getter further down,
        // which could replace it in `raw`.
        let read = |e: &Self| match slot {
            // SAFETY: `v` is live (read from `raw` just now).
            Some(v) => Ok(Owned {
                raw: e.raw,
                v: unsafe { crate::layout::dup(e.raw, v) },
            }),
            None => e.get(raw, m.atom),
        };
        self.member(first, cached, read)
    }

    /// Property `atom` of `obj`, owned.
    fn get(&self, obj: qjs::JSValue, atom: qjs::JSAtom) -> rquickjs::Result<Owned> {
        // SAFETY: a property read on a live object; the result is owned.
        self.owned(unsafe { qjs::JS_GetProperty(self.raw, obj, atom) })
    }

    /// Write a member: a comma unless `first`, the name (by `key`), `:` and
    /// the value (by `read`); nothing if the value is skipped. False if the
    /// name or the value is not ours to write.
    fn member(
        &mut self,
        first: &mut bool,
        key: impl FnOnce(&mut Self) -> rquickjs::Result<bool>,
        read: impl FnOnce(&Self) -> rquickjs::Result<Owned>,
    ) -> rquickjs::Result<bool> {
        let mark = self.out.len();
        if !*first {
            self.out.push(b',');
        }
        if !key(self)? {
            return Ok(false);
        }
        let item = read(self)?;
        self.out.push(b':');
        match self.value(item.v)? {
            Step::Written => *first = false,
            Step::Skip => self.out.truncate(mark),
            Step::Unsupported => return Ok(false),
        }
        Ok(true)
    }

    /// Write a property name; false if it is not valid UTF-8.
    fn key(&mut self, atom: qjs::JSAtom) -> rquickjs::Result<bool> {
        let raw = self.raw;
        crate::shapes::write_key(self.ctx, atom, self.out, |out| {
            Ok(match crate::shapes::atom_json(raw, atom) {
                Some(json) => {
                    append(out, &json);
                    true
                }
                None => false,
            })
        })
    }
}

/// Append `v` as JSON to `out`. `Ok(false)`: not handled here (`out` is then
/// in an unspecified state); use `JSON.stringify`. A top-level `undefined`,
/// function or symbol is written as `null`.
pub(crate) fn encode<'js>(
    ctx: &Ctx<'js>,
    v: &Value<'js>,
    out: &mut Vec<u8>,
) -> rquickjs::Result<bool> {
    let mut enc = Encoder {
        ctx,
        raw: ctx.as_raw().as_ptr(),
        out,
        depth: 0,
        protos: PROTOS.with(|p| p.get()),
        clean: [None; 2],
        last_known: None,
        clean_shape: 0,
    };
    Ok(match enc.value(v.as_raw())? {
        Step::Written => true,
        Step::Skip => {
            enc.out.extend_from_slice(b"null");
            true
        }
        Step::Unsupported => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rquickjs::{Context, Runtime};

    /// `encode(v)`, or None when it hands the value to JSON.stringify.
    fn ours<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<String> {
        let mut out = Vec::new();
        let handled = encode(ctx, v, &mut out).expect("no exception");
        handled.then(move || String::from_utf8(out).expect("utf-8"))
    }

    fn with_ctx(f: impl FnOnce(&Ctx<'_>)) {
        let rt = Runtime::new().unwrap();
        let context = Context::full(&rt).unwrap();
        context.with(|ctx| {
            register_protos(&ctx).unwrap();
            f(&ctx)
        });
    }

    #[test]
    fn matches_json_stringify() {
        let cases = [
            "({message: 'Hello, World!'})",
            "({b: 1, a: [1, 2.5, -0, 1e21, 1.5e-7, 0.1 + 0.2, NaN, Infinity], c: null, d: true})",
            "({2: 'two', 1: 'one', z: 'zed', a: 'ay'})",
            "({u: undefined, f() {}, s: Symbol('x'), kept: 1})",
            "[undefined, function () {}, Symbol('y'), , 3]",
            "({nested: {deep: {er: [[], {}]}}, empty: {}, list: []})",
            "({text: 'quote \" backslash \\\\ nl \\n tab \\t ctl \\u0001 del \\u007f é 日本 😀 </script>'})",
            "(() => { class P { constructor() { this.x = 1; } get y() { return 2; } } return new P(); })()",
            "Object.create(null, {a: {value: 1, enumerable: true}, hidden: {value: 2}})",
            "({big: 2 ** 53 + 2, neg: -12345678901234567890, int: 2147483647, over: 2147483648})",
            "'top-level string'",
            "42",
            "null",
        ];
        with_ctx(|ctx| {
            for src in cases {
                assert_stringify(ctx, src);
            }
        });
    }

    /// `encode` of `src` writes what JSON.stringify does.
    fn assert_stringify(ctx: &Ctx<'_>, src: &str) {
        let v: Value = ctx.eval(src).unwrap();
        let expected = ctx
            .json_stringify(v.clone())
            .unwrap()
            .unwrap()
            .to_string()
            .unwrap();
        assert_eq!(ours(ctx, &v).as_deref(), Some(expected.as_str()), "{src}");
    }

    /// Objects whose shape was kept (the second encode of each key list)
    /// are written from the known members; they must still match
    /// JSON.stringify, and look-alikes with other flags must not match.
    #[test]
    fn kept_shapes_match_json_stringify() {
        let cases = [
            "({runtime: 'js', status: 'ok', uptime: 1.5})",
            "({a: 1, u: undefined, f() {}, z: [{a: 1, u: undefined, f() {}, z: 2}]})",
            "({a: 1, u: 2, f: 3, z: 4})",
            "Object.defineProperty({a: 1, u: 2, f: 3, z: 4}, 'u', {enumerable: false})",
            "Object.defineProperty({a: 1, u: 2, f: 3, z: 4}, 'f', {get() { return 'got'; }, enumerable: true})",
            "(() => { const o = {a: 1, u: 2, f: 3, z: 4}; delete o.u; return o; })()",
            "(() => { const o = {a: 1, u: 2, f: 3, z: 4}; o.extra = 5; return o; })()",
            "Object.freeze({a: 1, u: 2, f: 3, z: 4})",
            "({b: 'b', 0: 'zero'})",
            "(() => { const o = {b: 'b'}; o['0'] = 'zero'; return o; })()",
        ];
        with_ctx(|ctx| {
            crate::layout::probe(ctx.as_raw().as_ptr());
            crate::shapes::init(ctx, &[]).unwrap();
            // Rows as db.query makes them: keys in column order.
            crate::shapes::keep_names(ctx, ["b", "0"]);
            for _round in 0..2 {
                for src in cases {
                    assert_stringify(ctx, src);
                }
            }
        });
    }

    /// A getter inside a member replaces that member (its last other
    /// reference) and the next one while the member is being written: the
    /// member read from its slot must stay alive until it is written.
    #[test]
    fn a_member_replaced_while_it_is_written_stays_alive() {
        let src = "(() => { const o = {a: 1, u: 2, f: 3, z: 4}; \
            o.u = {get g() { o.u = null; o.f = 'x'.repeat(3); return {n: [1, 'two']}; }}; \
            return o; })()";
        with_ctx(|ctx| {
            crate::layout::probe(ctx.as_raw().as_ptr());
            crate::shapes::init(ctx, &[]).unwrap();
            for round in 0..3 {
                let v: Value = ctx.eval(src).unwrap();
                let got = ours(ctx, &v);
                let want = r#"{"a":1,"u":{"g":{"n":[1,"two"]}},"f":"xxx","z":4}"#;
                assert_eq!(got.as_deref(), Some(want), "round {round}");
            }
        });
    }

    #[test]
    fn hands_over_what_it_does_not_handle() {
        let cases = [
            "({d: new Date(0)})",
            "({toJSON() { return 1; }})",
            "Object.defineProperty({a: 1}, 'toJSON', {value: () => 2})",
            "(() => { class T { toJSON() { return 'T'; } } return [new T()]; })()",
            "({m: new Map()})",
            "({b: new Boolean(false)})",
            "({p: new Proxy({}, {})})",
            "({lone: '\\ud800'})",
            "(() => { const o = {}; o.self = o; return o; })()",
            "({n: 10n})",
        ];
        with_ctx(|ctx| {
            for src in cases {
                let v: Value = ctx.eval(src).unwrap();
                assert_eq!(ours(ctx, &v), None, "{src}");
            }
        });
    }

    #[test]
    fn undefined_and_functions_at_the_top_are_null() {
        with_ctx(|ctx| {
            for src in ["undefined", "(function () {})"] {
                let v: Value = ctx.eval(src).unwrap();
                assert_eq!(ours(ctx, &v).as_deref(), Some("null"), "{src}");
            }
        });
    }

    #[test]
    fn a_to_json_on_the_standard_prototypes_is_honoured() {
        with_ctx(|ctx| {
            let v: Value = ctx
                .eval("Object.prototype.toJSON = () => 'patched'; ({a: 1})")
                .unwrap();
            assert_eq!(ours(ctx, &v), None);
            let v: Value = ctx
                .eval("delete Object.prototype.toJSON; Array.prototype.toJSON = () => 'x'; [1]")
                .unwrap();
            assert_eq!(ours(ctx, &v), None);
        });
    }
}
