//! Commands for coding agents (docs/agents.md): `cove status` and `cove
//! errors`, reading what `cove dev` keeps in `.cove/` (`state.rs`), and
//! `cove agent …`, Hull's spellings of these and of `cove routes`, `cove
//! db` and `cove test` (hull-api §1.4). Each prints one JSON line.

pub mod state;

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::cli::{AgentCommand, AppDirArgs, StatusArgs};

/// `cove status`: always exit 0, as Hull's.
pub fn status(args: &StatusArgs) -> Result<i32> {
    println!(
        "{}",
        state::status(&app_dir(args.dir.as_deref()), args.port)
    );
    Ok(0)
}

/// `cove errors`.
pub fn errors(args: &AppDirArgs) -> Result<i32> {
    println!("{}", state::last_error(&app_dir(args.dir.as_deref())));
    Ok(0)
}

pub fn run(command: AgentCommand) -> Result<i32> {
    match command {
        AgentCommand::Routes(args) => crate::inspect::routes(&args),
        AgentCommand::Db(args) => crate::inspect::db(&args),
        AgentCommand::Status(args) => status(&args),
        AgentCommand::Request(args) => crate::request::run(&args, crate::request::Shape::Hull),
        AgentCommand::Errors(args) => errors(&args),
        AgentCommand::Test(args) => crate::testing::agent_test(args.dir.as_deref()),
    }
}

/// The app directory named (an entry file names its directory), else the
/// current one.
pub fn app_dir(given: Option<&Path>) -> PathBuf {
    let dir = given.unwrap_or(Path::new("."));
    let dir = match dir
        .parent()
        .filter(|p| dir.is_file() && !p.as_os_str().is_empty())
    {
        Some(parent) => parent,
        None if dir.is_file() => Path::new("."),
        None => dir,
    };
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}
