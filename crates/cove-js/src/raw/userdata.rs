//! Runtime userdata of plain Rust data.
#![allow(unsafe_code)]

use rquickjs::JsLifetime;

/// `T` as context userdata: `T: 'static` holds no `'js` value, so the
/// lifetime it is stored under changes nothing.
pub(crate) struct Static<T: 'static>(pub(crate) T);

// SAFETY: `T` is 'static: it borrows nothing from any context, so it is
// the same type under every `'js` (JsLifetime's requirement).
unsafe impl<'js, T: 'static> JsLifetime<'js> for Static<T> {
    type Changed<'to> = Static<T>;
}
