//! The JavaScript runtime: QuickJS (quickjs-ng, through rquickjs) bound to
//! Cove's capabilities with Hull's JS API (`hull:app`, `hull:db`, …).
//! Value conversion and error mapping live here; behaviour lives in
//! cove-core, cove-db and cove-caps, shared with the Lua runtime.

mod bind;
mod bytes;
mod caps;
mod db;
mod engine;
mod error;
mod fastfn;
mod globals;
mod held;
mod host;
mod json;
mod layout;
mod modules;
mod req;
mod res;
mod shapes;
mod template;
pub mod testing;
#[cfg(test)]
mod tests;
mod typescript;
mod vm;

pub use engine::{JsApp, JsConfig, JsEngine};
pub use vm::POLL_WEIGHT;
