//! End-to-end tests: the real `cove` binary, real sockets, real SQLite files.
//! One test binary (`--test integration`) so the binary is linked once.

mod util;

mod api_fixes;
mod audit;
mod browser;
mod build;
mod cli;
mod conformance;
mod crypto;
mod db;
mod db_guard;
mod dev;
mod dev_errors;
mod durability;
mod errors;
mod examples;
mod examples_auth;
mod examples_basic;
mod examples_postgres;
mod examples_reliability;
mod examples_todo;
mod hostile_scripts;
mod http;
mod http_abuse;
mod inspect;
mod js;
mod kernel_sandbox;
mod limits;
mod middleware;
mod migrate;
mod outbound;
mod postgres;
mod response;
mod routing;
mod sandbox;
mod scaffold;
mod scale_out;
mod shared_state;
mod shared_stdlib;
mod shutdown;
mod signing;
mod static_files;
mod storage_faults;
mod templates;
mod testing;
