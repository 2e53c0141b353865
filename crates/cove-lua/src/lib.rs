//! The Lua 5.4 runtime: a thin binding from Hull's Lua API to Cove's
//! capabilities. Value conversion and error mapping live here; behaviour
//! lives in cove-core, cove-db and cove-caps.

mod app_api;
mod bind;
mod budget;
mod caps;
mod coroutine;
mod db;
mod db_wait;
mod engine;
mod error;
mod globals;
mod json;
mod layout;
mod modules;
mod req;
mod res;
mod rows;
mod stack;
mod suspend;
mod template;
pub mod testing;
#[cfg(test)]
mod tests;
mod view;
mod vm;

pub use engine::{LuaApp, LuaConfig, LuaEngine};
