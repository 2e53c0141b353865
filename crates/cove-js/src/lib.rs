//! The JavaScript runtime: QuickJS (quickjs-ng, through rquickjs) bound to
//! Cove's capabilities with Hull's JS API (`hull:app`, `hull:db`, …).
//! Value conversion and error mapping live here; behaviour lives in
//! cove-core, cove-db and cove-caps, shared with the Lua runtime.

#[forbid(unsafe_code)]
mod bind;
#[forbid(unsafe_code)]
mod caps;
#[forbid(unsafe_code)]
mod db;
#[forbid(unsafe_code)]
mod engine;
#[forbid(unsafe_code)]
mod error;
#[forbid(unsafe_code)]
mod globals;
#[forbid(unsafe_code)]
mod host;
#[forbid(unsafe_code)]
mod json;
#[forbid(unsafe_code)]
mod modules;
mod raw;
#[forbid(unsafe_code)]
mod req;
#[forbid(unsafe_code)]
mod template;
#[forbid(unsafe_code)]
pub mod testing;
#[cfg(test)]
#[forbid(unsafe_code)]
mod tests;
#[forbid(unsafe_code)]
mod typescript;
#[forbid(unsafe_code)]
mod vm;
#[forbid(unsafe_code)]
mod ws;

pub use engine::{JsApp, JsConfig, JsEngine};
pub use vm::POLL_WEIGHT;
