//! What Cove reads of QuickJS's internals, each checked at start-up.
//!
//! The template renderer and the JSON encoder touch a few values per loop
//! item; two C calls per reference drop and per string read are a large
//! share of that. [`probe`] makes values of known shape and checks that
//! the layouts below hold for them; if one does not (a QuickJS upgrade
//! changed it), every operation takes the exported C function instead,
//! and `the_layout_probe_passes_on_the_bundled_quickjs` fails.
//!
//! Object shapes. An object's `JSShape` pointer (its prototype and
//! property list, shared by every object built with the same keys in the
//! same order) sits 24 bytes into the object; [`shape_of`] reads it so the
//! JSON encoder can recognise an object whose keys it already knows.
//!
//! Property slots. The object's `JSProperty` array follows the shape
//! pointer (32 bytes in), one 16-byte slot per entry of the shape, a plain
//! data property's slot holding its `JSValue`. For an object of a kept shape
//! (shapes.rs: plain data properties, in a known order) [`slot_of_shape`] reads a
//! member where `JS_GetProperty` would look its name up in the shape again.
//!
//! Reference counts. The QuickJS that rquickjs bundles keeps a counted
//! value's reference count in its allocator's block header, the `i32` just
//! before what the value points to, but exports only
//! `JS_DupValue`/`JS_FreeValue` (two nested calls each). With the layout
//! known, a drop that leaves other holders is a plain decrement; the last
//! reference still goes through `JS_FreeValue`, which frees.
//!
//! Strings. A `JSString` starts with two 32-bit words: the length (31
//! bits) and a wide-characters flag, then the hash (28 bits) and the
//! storage kind (2 bits); a plain ("normal") string's characters follow
//! the 24-byte header (QuickJS built with `NDEBUG`, rquickjs's
//! `disable-assertions` feature, which Cargo.toml sets: a debug build puts
//! a leak-list link there too). An ASCII string of 8-bit characters is its
//! own UTF-8, so [`ascii_bytes`] reads it in place where `JS_ToCStringLen2`
//! would scan it the same way behind two calls and a reference.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

use rquickjs::qjs;

static COUNT_KNOWN: AtomicBool = AtomicBool::new(false);
static STRING_KNOWN: AtomicBool = AtomicBool::new(false);
static SHAPE_KNOWN: AtomicBool = AtomicBool::new(false);
static SLOTS_KNOWN: AtomicBool = AtomicBool::new(false);
static PROBED: Once = Once::new();

/// Check the layout once per process with a fresh string and object.
pub(crate) fn probe(ctx: &rquickjs::Ctx<'_>) {
    let raw = ctx.as_raw().as_ptr();
    PROBED.call_once(|| {
        // SAFETY: values made, dup'd and freed here; the count is read
        // only while they are alive.
        let ok = unsafe {
            let s = qjs::JS_NewStringLen(raw, PROBE.as_ptr().cast(), PROBE.len() as _);
            let wide = qjs::JS_NewStringLen(raw, WIDE.as_ptr().cast(), WIDE.len() as _);
            let o = qjs::JS_NewObject(raw);
            let counts = counts_before(raw, s) && counts_before(raw, o);
            let strings = string_reads(s, PROBE.as_bytes()) && string_reads(wide, b"");
            for v in [s, wide, o] {
                qjs::JS_FreeValue(raw, v);
            }
            (counts, strings, shapes_read(raw), slots_read(raw))
        };
        COUNT_KNOWN.store(ok.0, Ordering::Relaxed);
        STRING_KNOWN.store(ok.1, Ordering::Relaxed);
        SHAPE_KNOWN.store(ok.2, Ordering::Relaxed);
        SLOTS_KNOWN.store(ok.2 && ok.3, Ordering::Relaxed);
    });
}

const PROBE: &str = "cove probe";
/// Characters past Latin-1: QuickJS stores this string 16-bit wide.
const WIDE: &str = "co\u{20ac}e";

/// Whether [`string_header`] reads `v` as `expect` (empty: as wide).
unsafe fn string_reads(v: qjs::JSValue, expect: &[u8]) -> bool {
    if qjs::JS_VALUE_GET_TAG(v) != qjs::JS_TAG_STRING {
        return false;
    }
    let (len, wide, kind) = string_header(v);
    if expect.is_empty() {
        return wide && len == 4;
    }
    !wide && kind == 0 && len == expect.len() && string_chars(v, len) == expect
}

/// Length, wide flag and storage kind of a string value.
#[inline]
unsafe fn string_header(v: qjs::JSValue) -> (usize, bool, u32) {
    let head = qjs::JS_VALUE_GET_PTR(v).cast::<u32>();
    let (w0, w1) = (*head, *head.add(1));
    ((w0 & 0x7fff_ffff) as usize, w0 >> 31 == 1, (w1 >> 28) & 3)
}

/// A normal string's characters, after its 24-byte header.
#[inline]
unsafe fn string_chars<'a>(v: qjs::JSValue, len: usize) -> &'a [u8] {
    let chars = qjs::JS_VALUE_GET_PTR(v).cast::<u8>().add(24);
    std::slice::from_raw_parts(chars, len)
}

/// A string value's bytes read in place when it is plain 8-bit ASCII
/// (its UTF-8 then); `None` for every other string, which the caller
/// converts with `JS_ToCStringLen2`.
///
/// # Safety
/// `v` is a live value and outlives the slice.
#[inline]
pub(super) unsafe fn ascii_bytes<'a>(v: qjs::JSValue) -> Option<&'a [u8]> {
    // A rope (`JS_TAG_STRING_ROPE`) has another layout: converted.
    if qjs::JS_VALUE_GET_TAG(v) != qjs::JS_TAG_STRING || !STRING_KNOWN.load(Ordering::Relaxed) {
        return None;
    }
    let (len, wide, kind) = string_header(v);
    if wide || kind != 0 {
        return None;
    }
    let bytes = string_chars(v, len);
    bytes.is_ascii().then_some(bytes)
}

/// Whether [`shape_word`] is equal for two objects with key `a`, and
/// different for an object with key `b` and for an empty object.
unsafe fn shapes_read(raw: *mut qjs::JSContext) -> bool {
    let with = |name: &std::ffi::CStr| {
        let obj = qjs::JS_NewObject(raw);
        if !name.is_empty() {
            let atom = qjs::JS_NewAtom(raw, name.as_ptr());
            qjs::JS_DefinePropertyValue(raw, obj, atom, qjs::JS_NULL, qjs::JS_PROP_C_W_E as i32);
            qjs::JS_FreeAtom(raw, atom);
        }
        obj
    };
    let objects = [with(c"a"), with(c"a"), with(c"b"), with(c"")];
    let ok = objects
        .iter()
        .all(|&o| qjs::JS_VALUE_GET_TAG(o) == qjs::JS_TAG_OBJECT)
        && {
            let [a1, a2, b, empty] = objects.map(|o| shape_word(o));
            a1 != 0 && a1 == a2 && a1 != b && a1 != empty && b != empty
        };
    for o in objects {
        qjs::JS_FreeValue(raw, o);
    }
    ok
}

/// Whether [`slot_at`] reads back the values of `{a: 7, b: "cove probe"}`.
unsafe fn slots_read(raw: *mut qjs::JSContext) -> bool {
    let obj = qjs::JS_NewObject(raw);
    if qjs::JS_VALUE_GET_TAG(obj) != qjs::JS_TAG_OBJECT {
        return false;
    }
    let s = qjs::JS_NewStringLen(raw, PROBE.as_ptr().cast(), PROBE.len() as _);
    let flags = qjs::JS_PROP_C_W_E as i32;
    for (name, v) in [
        (c"a", qjs::JS_MKVAL(qjs::JS_TAG_INT, 7)),
        (c"b", dup(raw, s)),
    ] {
        let atom = qjs::JS_NewAtom(raw, name.as_ptr());
        qjs::JS_DefinePropertyValue(raw, obj, atom, v, flags);
        qjs::JS_FreeAtom(raw, atom);
    }
    let (a, b) = (slot_at(obj, 0), slot_at(obj, 1));
    let ok = qjs::JS_VALUE_GET_TAG(a) == qjs::JS_TAG_INT
        && qjs::JS_VALUE_GET_INT(a) == 7
        && qjs::JS_VALUE_GET_TAG(b) == qjs::JS_TAG_STRING
        && qjs::JS_VALUE_GET_PTR(b) == qjs::JS_VALUE_GET_PTR(s);
    qjs::JS_FreeValue(raw, s);
    qjs::JS_FreeValue(raw, obj);
    ok
}

/// Slot `i` of an object's property array, as a value (not owned).
#[inline]
unsafe fn slot_at(obj: qjs::JSValue, i: usize) -> qjs::JSValue {
    let props = *qjs::JS_VALUE_GET_PTR(obj)
        .cast::<u8>()
        .add(32)
        .cast::<*const qjs::JSValue>();
    *props.add(i)
}

/// Property `i` of `obj` while it has `shape` (an address [`shape_of`]
/// returned for an object of a kept shape, shapes.rs), not owned: the
/// caller dups it before anything can run that might replace it; `None` if
/// the shape changed or the layout is unknown.
///
/// # Safety
/// `obj` is a live object; objects of `shape` have a plain data property
/// at entry `i`.
#[inline(always)]
pub(super) unsafe fn slot_of_shape(
    obj: qjs::JSValue,
    shape: usize,
    i: usize,
) -> Option<qjs::JSValue> {
    (SLOTS_KNOWN.load(Ordering::Relaxed) && shape_word(obj) == shape).then(|| slot_at(obj, i))
}

/// The pointer-sized word where a `JSObject` keeps its shape.
#[inline]
unsafe fn shape_word(obj: qjs::JSValue) -> usize {
    *qjs::JS_VALUE_GET_PTR(obj)
        .cast::<u8>()
        .add(24)
        .cast::<usize>()
}

/// The address of a plain object's shape, to compare (never dereferenced);
/// `None` if the layout is unknown.
///
/// # Safety
/// `obj` is a live object (`JS_TAG_OBJECT`).
#[inline]
pub(super) unsafe fn shape_of(obj: qjs::JSValue) -> Option<usize> {
    SHAPE_KNOWN.load(Ordering::Relaxed).then(|| shape_word(obj))
}

/// Where the count is: `JSMallocBlockHeader.ref_count`, 4 bytes before
/// the block's user data.
#[inline]
unsafe fn count(v: qjs::JSValue) -> *mut i32 {
    qjs::JS_VALUE_GET_PTR(v).cast::<i32>().sub(1)
}

/// Whether dup and free move the `i32` at [`count`] by one.
unsafe fn counts_before(raw: *mut qjs::JSContext, v: qjs::JSValue) -> bool {
    if !counted(v) {
        return false;
    }
    let head = count(v);
    let before = *head;
    let d = qjs::JS_DupValue(raw, v);
    let up = *head == before + 1;
    qjs::JS_FreeValue(raw, d);
    before == 1 && up && *head == before
}

/// Only values with a negative tag (strings, objects, …) are reference
/// counted; numbers, booleans, null and undefined skip the C calls.
#[inline]
pub(super) fn counted(v: qjs::JSValue) -> bool {
    // SAFETY: reading the tag of a live value.
    unsafe { qjs::JS_VALUE_GET_TAG(v) < 0 }
}

/// Drop one reference to `v`.
///
/// # Safety
/// The caller owns a reference to `v`, a value of `raw`'s runtime.
#[inline]
pub(super) unsafe fn free(raw: *mut qjs::JSContext, v: qjs::JSValue) {
    if !counted(v) {
        return;
    }
    let head = count(v);
    if COUNT_KNOWN.load(Ordering::Relaxed) && *head > 1 {
        *head -= 1;
    } else {
        qjs::JS_FreeValue(raw, v);
    }
}

/// Add a reference to `v`.
///
/// # Safety
/// `v` is a live value of `raw`'s runtime.
#[inline]
pub(super) unsafe fn dup(raw: *mut qjs::JSContext, v: qjs::JSValue) -> qjs::JSValue {
    if !counted(v) {
        return v;
    }
    if COUNT_KNOWN.load(Ordering::Relaxed) {
        *count(v) += 1;
        v
    } else {
        qjs::JS_DupValue(raw, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run `f` in a fresh context after the probe.
    fn probed(f: impl FnOnce(&rquickjs::Ctx<'_>)) {
        let rt = rquickjs::Runtime::new().unwrap();
        let ctx = rquickjs::Context::full(&rt).unwrap();
        ctx.with(|ctx| {
            probe(&ctx);
            f(&ctx)
        });
    }

    #[test]
    fn the_layout_probe_passes_on_the_bundled_quickjs() {
        probed(|ctx| {
            assert!(COUNT_KNOWN.load(Ordering::Relaxed));
            assert!(STRING_KNOWN.load(Ordering::Relaxed));
            assert!(SHAPE_KNOWN.load(Ordering::Relaxed));
            assert!(SLOTS_KNOWN.load(Ordering::Relaxed));
            // SAFETY: a string made, shared, and released to its last reference.
            unsafe {
                let raw = ctx.as_raw().as_ptr();
                let s = qjs::JS_NewStringLen(raw, c"x".as_ptr(), 1);
                let d = dup(raw, s);
                assert_eq!(*count(s), 2);
                free(raw, d);
                assert_eq!(*count(s), 1);
                free(raw, s);
            }
        });
    }

    #[test]
    fn only_plain_ascii_strings_are_read_in_place() {
        probed(|ctx| {
            let read = |src: &str| {
                let v: rquickjs::Value = ctx.eval(src).unwrap();
                // SAFETY: `v` is a live string while its bytes are copied out.
                unsafe { ascii_bytes(v.as_raw()).map(<[u8]>::to_vec) }
            };
            assert_eq!(read("'Item ' + 12"), Some(b"Item 12".to_vec()));
            assert_eq!(read("''"), Some(Vec::new()));
            assert_eq!(read("'caf\\u00e9'"), None, "Latin-1, not UTF-8");
            assert_eq!(read("'\\u20ac'"), None, "wide");
            // A slice of a long string may be stored as one (not read in
            // place) or copied (read): either way, never wrong bytes.
            let long = "x".repeat(300);
            let sliced = read(&format!("'{long}'.slice(1, 299)"));
            assert!(sliced.is_none() || sliced == Some(vec![b'x'; 298]));
        });
    }
}
