//! All of cove-js's `unsafe` code: QuickJS's C API and the few of its
//! internals Cove reads, behind safe interfaces. Every other module of the
//! crate is declared `#[forbid(unsafe_code)]` in lib.rs.
//!
//! - [`value`]: the one read-only view of a script value ([`value::Val`],
//!   [`value::View`]) that the JSON encoder, the template host, `db`
//!   parameters and the capability converter read through.
//! - [`layout`]: the QuickJS internals read in place (reference counts, an
//!   ASCII string's characters, shapes and property slots), each checked
//!   by a start-up probe with a C-API fallback.
//! - [`shapes`]: object shapes kept alive per runtime, and the members of
//!   kept key lists (the JSON encoder's fast path).
//! - [`fields`]: `req`'s objects (`params`, `query`, `headers`) and the
//!   fields its getters define.
//! - [`rows`]: `db.query` rows built as objects.
//! - [`bytes`]: bytes out of `ArrayBuffer`s, typed arrays and `DataView`s.
//! - [`held`]: values kept across requests and handler calls on them.
//! - [`fastfn`]: native methods as plain QuickJS C functions, dispatched
//!   to safe Rust functions through a [`fastfn::Table`].
//! - [`userdata`]: plain Rust data as runtime userdata.
//!
//! # Soundness contract
//!
//! Safe code outside this module cannot cause undefined behaviour through
//! it: every raw `JSValue` it hands out is owned by a guard that frees its
//! one reference on drop ([`value::Val`], [`value::Keys`],
//! [`value::Utf8`], [`rows::Rows`]) or borrowed from one for as long as it
//! is borrowed ([`value::View`], [`value::Str`], [`value::Obj`],
//! [`value::Lent`], [`held::Raw`]), so a value cannot be leaked, freed
//! twice or read after its last reference went, whatever JS a getter
//! runs meanwhile. A value read without a reference (an object's property
//! slot) is lent only to a plain `fn` of a byte buffer, which reaches no
//! context and so runs no JS while it holds it (the crate keeps no
//! context where a plain function could find one). An exception is
//! reported as [`value::Thrown`], pending in the context for the caller
//! to catch. Layout reads happen only after the
//! start-up probe confirmed them, and a kept shape is read only while an
//! object still has it.
//!
//! What the types do not check, and the crate relies on: values, atoms
//! ([`value::Atom`]`<'static>`, held until the runtime is freed), kept
//! shapes ([`shapes::Known`]) and held values ([`held::Raw`]) are used
//! only with the runtime that made them (each runtime keeps its own, in
//! its userdata or its engine), and a [`shapes::Known`] is not kept past
//! the encode that looked it up.

pub(crate) mod bytes;
pub(crate) mod fastfn;
pub(crate) mod fields;
pub(crate) mod held;
pub(crate) mod layout;
pub(crate) mod object;
pub(crate) mod rows;
pub(crate) mod shapes;
pub(crate) mod userdata;
pub(crate) mod value;
