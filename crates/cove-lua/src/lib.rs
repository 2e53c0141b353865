//! The Lua 5.4 runtime: a thin binding from Hull's Lua API to Cove's
//! capabilities. Value conversion and error mapping live here; behaviour
//! lives in cove-core, cove-db and cove-caps.
//!
//! All of the crate's `unsafe` code is in `raw`, behind safe interfaces;
//! every other module forbids it.

#[forbid(unsafe_code)]
mod app_api;
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
mod json;
#[forbid(unsafe_code)]
mod modules;
mod raw;
#[forbid(unsafe_code)]
mod req;
#[forbid(unsafe_code)]
mod suspend;
#[forbid(unsafe_code)]
mod template;
#[forbid(unsafe_code)]
pub mod testing;
#[cfg(test)]
#[forbid(unsafe_code)]
mod tests;
#[forbid(unsafe_code)]
mod vm;
#[forbid(unsafe_code)]
mod ws;

pub use engine::{LuaApp, LuaConfig, LuaEngine};
