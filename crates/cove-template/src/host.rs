//! What the renderer needs from a runtime's values. The Lua and JS bindings
//! each implement [`Host`] over their own values (Lua stack slots, QuickJS
//! values), so rendering reads the app's data where it lies.

use std::borrow::Cow;

use crate::names::Key;

/// Which runtime's conventions the output follows where Hull's Lua and JS
/// engines differ (see docs/compat.md, "Templates").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Only `nil` and `false` are false; floats print as `tostring` does
    /// (`3.0`, `0.1`); `length` counts bytes.
    Lua,
    /// `undefined`, `null`, `false`, `0`, `NaN` and `""` are false; numbers
    /// print as `String(n)` does (`3`); `` ` `` is escaped too; `length`
    /// counts UTF-16 units.
    Js,
}

/// A value as the renderer sees it.
#[derive(Debug, Clone, PartialEq)]
#[repr(u8)]
pub enum Shape<'a> {
    /// `nil`, `undefined` or `null`.
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Cow<'a, [u8]>),
    /// A table, object, array or anything else with fields.
    Table,
}

/// The key of a `for k, v in …` entry.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemKey {
    Int(i64),
    Str(String),
}

/// A runtime's values, read by the renderer. Methods that look things up
/// never fail: a missing field, or a field of something that has none, is
/// nil (Hull's nil-safe paths).
pub trait Host {
    /// A handle to one value. The Lua binding uses stack slots, which
    /// [`Host::mark`]/[`Host::release`] pop in stack order.
    type Value: Clone;

    fn flavor(&self) -> Flavor;

    /// The data passed to `render`.
    fn data(&mut self) -> Self::Value;

    /// `obj[key]`, or nil.
    fn field(&mut self, obj: &Self::Value, key: &Key) -> Self::Value;

    fn shape(&mut self, v: &Self::Value) -> Shape<'_>;

    /// How many items `{% for x in v %}` visits (`v` has [`Shape::Table`]):
    /// Lua `ipairs`, a JS array's length. An error says why `v` cannot be
    /// looped over.
    fn items(&mut self, v: &Self::Value) -> Result<usize, String>;

    /// Item `i` (0-based, below what [`Host::items`] returned). Only the
    /// innermost loop reads items: loops nest, and each [`Host::items`] is
    /// matched by one [`Host::end_items`] when its loop is over.
    fn item(&mut self, v: &Self::Value, i: usize) -> Self::Value;

    /// The loop over `v` that [`Host::items`] started is over (not called
    /// when rendering fails).
    fn end_items(&mut self, _v: &Self::Value) {}

    /// The entries `{% for k, v in … %}` visits, in the runtime's order.
    fn entries(&mut self, v: &Self::Value) -> Result<Vec<(ItemKey, Self::Value)>, String>;

    /// The `length` filter on a table/object.
    fn count(&mut self, v: &Self::Value) -> usize;

    /// The `json` filter: `v` as JSON, the way the runtime's `json.encode`
    /// writes it.
    fn json(&mut self, v: &Self::Value, out: &mut Vec<u8>) -> Result<(), String>;

    /// A table/object printed as text (`tostring` / `String`).
    fn display(&mut self, v: &Self::Value, out: &mut Vec<u8>);

    /// Called once per render, before any read, with every interned field
    /// name the template may read (sorted by id): a binding can make them
    /// ready (the Lua binding pushes the key strings onto its stack once
    /// instead of fetching one per read).
    fn prepare(&mut self, _keys: &[Key]) {}

    /// Whether [`Host::release`] frees anything (the renderer skips its
    /// bookkeeping of what to release for a host whose values free
    /// themselves).
    const RELEASES: bool = false;

    /// A point to return to with [`Host::release`]; values made after it
    /// are no longer used once released.
    fn mark(&mut self) -> usize {
        0
    }

    fn release(&mut self, _mark: usize) {}
}
