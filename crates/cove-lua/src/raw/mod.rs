//! All of cove-lua's `unsafe` code: Lua's C API and the few of its
//! internals Cove reads, behind safe interfaces. Each file here that needs
//! it allows `unsafe_code`; every other module of the crate is declared
//! `#[forbid(unsafe_code)]` (lib.rs).
//!
//! # What the safe API guarantees
//!
//! A [`Stack`] is only made here, on entry to a C function (the
//! trampoline of a [`CFn`], [`CText`] or [`CFnWith`]) or to an `exec_raw`
//! closure ([`exec`]), and does not outlive that call. It keeps its own count of
//! the top and of the free slots checked with `lua_checkstack`: every index
//! is checked against them (a misuse panics, and the trampoline turns the
//! panic into a Lua error at the caller's line), table operations check
//! that they are given a table of the frame (never the registry or an
//! upvalue, whose contents raw code relies on), light-userdata keys are
//! addresses of the caller's own statics, and the frame's arguments are
//! never popped or replaced. So the bytes of a string read from a slot
//! ([`Stack::view`]) are borrowed from the handle and are held only while
//! nothing can pop or replace a slot (that takes `&mut`); an argument's
//! ([`Stack::arg`]) live for the whole call.
//!
//! No operation offered raises a Lua error, which would `longjmp` over
//! Rust frames and skip their destructors: reads and table operations are
//! raw (no metamethod runs), pushes grow the stack with `lua_checkstack`
//! (which reports failure), and what allocates is offered only by
//! [`Lifted`], while the heap cap is lifted ([`Stack::lifted`]): then an
//! allocation cannot fail on the cap, and a real out-of-memory aborts. A
//! failure is raised by the trampoline alone, once every Rust value of the
//! call is dropped; so are results that allocate under the cap (a
//! [`CText`]'s short text, a [`CFnWith`]'s bytes).
//!
//! A [`CFnWith`] closes over Rust data in a userdata only it can reach (its
//! upvalue 1), tagged with the data's type (checked on every call) and
//! dropped by its finalizer.
//!
//! # The files
//!
//! - `stack.rs`, `view.rs`: [`Stack`], [`Lifted`] and [`View`], the one
//!   read of a Lua value.
//! - `cfn.rs`: the C function trampolines ([`CFn`], [`CText`],
//!   [`CFnWith`]), closures over upvalues, [`exec`].
//! - `json.rs`: the JSON encoder walking the stack (`json.encode`,
//!   `res:json`, the templates' `json` filter).
//! - `layout.rs`: a plain table's entries read from Lua's own structs.
//! - `rows.rs`, `rows_json.rs`: packed `db.query` results (a userdata
//!   block) and their JSON.
//! - `template.rs`: the template renderer's host over stack slots.
//! - `coroutine.rs`: a handler call run as a coroutine by hand.
//! - `budget.rs`, `watchdog.rs`: the instruction budget's count hook,
//!   signal handler and coroutine functions; the watchdog thread.
//!
//! Those past `cfn.rs` work on the raw stack and state their reasons at
//! each `unsafe` block; what they offer the rest of the crate is safe.

pub(crate) mod budget;
pub(crate) mod cfn;
pub(crate) mod coroutine;
pub(crate) mod json;
pub(crate) mod layout;
pub(crate) mod rows;
mod rows_json;
mod stack;
pub(crate) mod template;
mod view;
mod watchdog;

pub(crate) use cfn::{exec, function, upvalue, CFn, CFnWith, CText, FlagAndBytes, ShortText};
pub(crate) use stack::{Lifted, Stack};
pub(crate) use view::View;
