//! `cove`: serve a Hull-style app on every core.

mod agent;
#[cfg_attr(feature = "system-alloc", allow(dead_code))]
mod alloc;
mod app;
mod build;
mod cli;
mod dev;
mod editor_types;
mod inspect;
mod leave_out;
mod mcp;
mod migrate;
mod new;
mod pack;
mod request;
mod sandbox;
mod scratch;
mod serve;
mod sign;
mod target;
mod testing;

// Lua tables, strings and hyper buffers are allocated per request; mimalloc
// halves what glibc malloc cost per request (measured with callgrind).
// `--features system-alloc` (tools/memcheck) keeps the system allocator,
// whose calls Valgrind replaces: inside mimalloc's pages it sees nothing.
#[cfg(not(feature = "system-alloc"))]
#[global_allocator]
static GLOBAL: alloc::Allocator = alloc::Allocator;

use clap::error::ErrorKind;
use clap::Parser;

fn main() {
    cove_core::set_heap_release(alloc::release);
    // An executable written by `cove build` carries its app after the code;
    // checking costs one 32-byte read of this file.
    match pack::embedded() {
        Ok(None) => {}
        Ok(Some(built)) => {
            let name = built.pack.name.clone();
            exit_with(&name, build::serve_built(built));
        }
        Err(e) => exit_with("cove", Err(e)),
    }
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => 0,
                _ => 1,
            };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    use cli::Command;
    let result = match cli.command {
        Some(Command::Serve(args)) => {
            sign::unbuilt(&args).and_then(|()| serve::run(&args).map(|()| 0))
        }
        Some(Command::Test(args)) => testing::run(&args),
        Some(Command::New(args)) => new::run(&args),
        Some(Command::Dev(args)) => sign::unbuilt(&args.serve).and_then(|()| dev::run(&args)),
        Some(Command::Migrate(args)) => migrate::run(&args),
        Some(Command::Build(args)) => build::run(&args),
        Some(Command::Keygen(args)) => sign::keygen(&args),
        Some(Command::Inspect(args)) => sign::inspect(&args),
        Some(Command::Routes(args)) => inspect::routes(&args),
        Some(Command::Db(args)) => inspect::db(&args),
        Some(Command::Request(args)) => request::run(&args, request::Shape::Cove),
        Some(Command::Mcp(args)) => mcp::run(&args),
        Some(Command::Errors(args)) => agent::errors(&args),
        Some(Command::Status(args)) => agent::status(&args),
        Some(Command::Agent(args)) => agent::run(args.command),
        Some(Command::Types(args)) => editor_types::run(args.dir.as_deref()),
        Some(Command::Baseline(args)) => serve::baseline(&args).map(|()| 0),
        None => sign::unbuilt(&cli.serve).and_then(|()| serve::run(&cli.serve).map(|()| 0)),
    };
    exit_with("cove", result);
}

/// Exit with the command's code, or 1 after printing its error as `who: …`.
fn exit_with(who: &str, result: anyhow::Result<i32>) -> ! {
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("{who}: {e:#}");
            std::process::exit(1);
        }
    }
}
