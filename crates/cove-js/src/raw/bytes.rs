//! Bytes out of JS values: an `ArrayBuffer`, a typed array (`Uint8Array`,
//! …) or a `DataView`, each as the bytes it covers. Used by `db` (BLOB
//! parameters) and capability arguments (caps.rs: crypto data, http bodies).
#![allow(unsafe_code)]

use std::ptr::NonNull;

use rquickjs::{qjs, ArrayBuffer, Ctx, Value};

use super::value::{Val, View};

/// The bytes `v` holds if it is binary; `None` for any other value.
pub(crate) fn binary_of(v: &Val<'_>) -> rquickjs::Result<Option<Vec<u8>>> {
    if !matches!(v.view(), View::Object(_)) {
        return Ok(None);
    }
    let Some(raw) = NonNull::new(v.raw_ctx()) else {
        return Ok(None);
    };
    // SAFETY: `v`'s context is live while `v` is; the Ctx takes a
    // reference to it of its own.
    let ctx = unsafe { Ctx::from_raw(raw) };
    binary_of_value(&v.clone().into_value(&ctx))
}

/// [`binary_of`] of an rquickjs value.
fn binary_of_value(v: &Value<'_>) -> rquickjs::Result<Option<Vec<u8>>> {
    // Asked first: `ArrayBuffer::from_value` of any other object throws a
    // TypeError inside QuickJS (JS_GetArrayBuffer), and building that
    // error, its stack included, cost ~9,000 instructions a call
    // (measured: `db.exec` with an array of parameters).
    // SAFETY: reads only the class of a live value.
    if unsafe { qjs::JS_IsArrayBuffer(v.as_raw()) } {
        if let Some(buf) = ArrayBuffer::from_value(v.clone()) {
            return Ok(Some(copy_bytes(&buf, 0, buf.len())));
        }
    }
    let Some(view) = v.as_object().filter(|_| is_view(v)) else {
        return Ok(None);
    };
    // The window is read before the bytes are borrowed: the getters are JS.
    let buf: ArrayBuffer<'_> = view.get("buffer")?;
    let (start, len): (usize, usize) = (view.get("byteOffset")?, view.get("byteLength")?);
    Ok(Some(copy_bytes(&buf, start, len)))
}

/// Whether `v` is a typed array or a `DataView` (`ArrayBuffer.isView`).
fn is_view(v: &Value<'_>) -> bool {
    let raw = v.as_raw();
    // SAFETY: both only read the class of a live value.
    unsafe { qjs::JS_GetTypedArrayType(raw) >= 0 || qjs::JS_IsDataView(raw) }
}

/// Copy `len` bytes at `start` out of an ArrayBuffer (empty if detached or
/// out of range).
fn copy_bytes(buf: &ArrayBuffer<'_>, start: usize, len: usize) -> Vec<u8> {
    // SAFETY: the slice is copied at once; no JS runs (so nothing can
    // detach or resize the buffer) while it is borrowed.
    let bytes = unsafe { buf.as_bytes() };
    bytes
        .and_then(|b| b.get(start..start.saturating_add(len)))
        .unwrap_or_default()
        .to_vec()
}
