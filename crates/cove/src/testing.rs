//! `cove test [dir]`: Hull's in-process test runner (Hull §9).

use anyhow::{bail, Result};

use crate::cli::TestArgs;

pub fn run(_args: &TestArgs) -> Result<i32> {
    bail!("cove test: not implemented yet")
}
