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

use rquickjs::{qjs, Ctx, Value};

use cove_caps::json::write_string;

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

struct Encoder<'a> {
    raw: *mut qjs::JSContext,
    out: &'a mut Vec<u8>,
    depth: u32,
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
        unsafe { qjs::JS_FreeValue(self.raw, self.v) }
    }
}

impl Encoder<'_> {
    /// Take ownership of a value returned by the C API.
    fn owned(&self, v: qjs::JSValue) -> rquickjs::Result<Owned> {
        // SAFETY: reading the tag of a value just returned.
        if unsafe { qjs::JS_VALUE_GET_TAG(v) } == qjs::JS_TAG_EXCEPTION {
            return Err(rquickjs::Error::Exception);
        }
        Ok(Owned { raw: self.raw, v })
    }

    fn value(&mut self, raw: qjs::JSValue) -> rquickjs::Result<Step> {
        // SAFETY: reading the tag and payload of a live value.
        let tag = unsafe { qjs::JS_VALUE_GET_TAG(raw) };
        match tag {
            qjs::JS_TAG_INT => {
                let n = unsafe { qjs::JS_VALUE_GET_INT(raw) };
                self.out
                    .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
            }
            qjs::JS_TAG_FLOAT64 => {
                let f = unsafe { qjs::JS_VALUE_GET_FLOAT64(raw) };
                if f.is_finite() {
                    self.out
                        .extend_from_slice(ryu_js::Buffer::new().format_finite(f).as_bytes());
                } else {
                    self.out.extend_from_slice(b"null");
                }
            }
            qjs::JS_TAG_BOOL => {
                let b = unsafe { qjs::JS_VALUE_GET_BOOL(raw) };
                self.out
                    .extend_from_slice(if b { b"true" } else { b"false" });
            }
            qjs::JS_TAG_NULL => self.out.extend_from_slice(b"null"),
            qjs::JS_TAG_UNDEFINED | qjs::JS_TAG_SYMBOL => return Ok(Step::Skip),
            qjs::JS_TAG_STRING | qjs::JS_TAG_STRING_ROPE => return self.string(raw),
            qjs::JS_TAG_OBJECT => return self.object(raw),
            _ => return Ok(Step::Unsupported),
        }
        Ok(Step::Written)
    }

    fn string(&mut self, raw: qjs::JSValue) -> rquickjs::Result<Step> {
        let mut len = 0;
        // SAFETY: `raw` is a live string; the buffer is freed below.
        let ptr = unsafe { qjs::JS_ToCStringLen2(self.raw, &mut len, raw, false) };
        if ptr.is_null() {
            return Err(rquickjs::Error::Exception);
        }
        let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len as usize) };
        // Lone surrogates come out as invalid UTF-8; JSON.stringify escapes them.
        let step = if std::str::from_utf8(bytes).is_ok() {
            write_string(self.out, bytes);
            Step::Written
        } else {
            Step::Unsupported
        };
        unsafe { qjs::JS_FreeCString(self.raw, ptr) };
        Ok(step)
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
        // SAFETY: property read on a live object; the result is owned.
        let to_json = self.owned(unsafe {
            qjs::JS_GetProperty(self.raw, raw, qjs::JS_ATOM_toJSON as qjs::JSAtom)
        })?;
        if unsafe { qjs::JS_VALUE_GET_TAG(to_json.v) } != qjs::JS_TAG_UNDEFINED {
            return Ok(Step::Unsupported);
        }
        self.depth += 1;
        let step = if class == CLASS_ARRAY {
            self.array(raw)
        } else {
            self.members(raw)
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

    fn members(&mut self, raw: qjs::JSValue) -> rquickjs::Result<Step> {
        let mut tab = std::ptr::null_mut();
        let mut len = 0;
        let flags = (qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_ENUM_ONLY) as i32;
        // SAFETY: own enumerable string keys of a live object.
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
        self.out.push(b'{');
        let mut first = true;
        for entry in entries {
            let item = self.owned(unsafe { qjs::JS_GetProperty(self.raw, raw, entry.atom) })?;
            let mark = self.out.len();
            if !first {
                self.out.push(b',');
            }
            if !self.key(entry.atom)? {
                return Ok(Step::Unsupported);
            }
            self.out.push(b':');
            match self.value(item.v)? {
                Step::Written => first = false,
                Step::Skip => self.out.truncate(mark),
                Step::Unsupported => return Ok(Step::Unsupported),
            }
        }
        self.out.push(b'}');
        Ok(Step::Written)
    }

    /// Write a property name; false if it is not valid UTF-8.
    fn key(&mut self, atom: qjs::JSAtom) -> rquickjs::Result<bool> {
        let mut len = 0;
        // SAFETY: the atom is alive (held by the property list).
        let ptr = unsafe { qjs::JS_AtomToCStringLen(self.raw, &mut len, atom) };
        if ptr.is_null() {
            return Err(rquickjs::Error::Exception);
        }
        let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len as usize) };
        let ok = std::str::from_utf8(bytes).is_ok();
        if ok {
            write_string(self.out, bytes);
        }
        unsafe { qjs::JS_FreeCString(self.raw, ptr) };
        Ok(ok)
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
        raw: ctx.as_raw().as_ptr(),
        out,
        depth: 0,
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
