//! Handlers that misbehave on purpose (tests/fixtures/hostile, app.lua and
//! its twin app.js): each gets a 500 and the worker serves on; memory comes
//! back after allocation storms; one instruction budget buys about the same
//! work in both runtimes. Every check runs against both apps (`both!`).

mod budget;
mod errors;
mod memory;

use std::path::PathBuf;

use crate::util::{fixture, Lang, Server};

/// The hostile app in `lang`.
fn app(lang: Lang) -> PathBuf {
    fixture("hostile").with_extension(lang.ext())
}

/// One worker, so the request after a hostile one meets the same VM.
fn one_worker(lang: Lang, extra: &[&str]) -> Server {
    let mut args = vec!["--workers", "1"];
    args.extend_from_slice(extra);
    Server::start(&app(lang), &args)
}
