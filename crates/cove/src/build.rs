//! `cove build`: one executable holding Cove and the app.

use anyhow::{bail, Result};

use crate::cli::BuildArgs;

pub fn run(_args: &BuildArgs) -> Result<i32> {
    bail!("cove build: not implemented yet")
}
