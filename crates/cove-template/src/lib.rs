//! Hull-syntax templates (`hull.template` / `hull:template`), written once in
//! Rust for both runtimes.
//!
//! A template is lexed ([`lexer`]), parsed into nodes ([`parser`], [`expr`])
//! and resolved against its parent and partials ([`cache`]) once; the
//! result is cached per VM by name. Rendering ([`render`]) walks the nodes
//! and reads the data straight from the Lua table or JS object through the
//! small [`Host`] trait each binding implements, so no value is converted to
//! JSON or copied into a Rust tree first. Where Hull's Lua and JavaScript
//! engines differ (truthiness, number formatting, escaping of `` ` ``) the
//! renderer follows the [`Flavor`] of the runtime it serves.
//!
//! Syntax and the additions over Hull are described in docs/templates.md.

mod ascii;
mod ast;
mod cache;
mod check;
mod error;
mod expr;
mod filters;
mod format;
mod host;
mod lexer;
mod names;
mod parser;
mod render;
pub mod testing;

pub use cache::{Limits, Loader, Template, Templates};
pub use error::{Error, ErrorKind};
pub use host::{Flavor, Host, ItemKey, Shape};
pub use names::{Key, Names};
pub use render::{render, render_into};
