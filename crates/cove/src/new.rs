//! `cove new <name>`: scaffold an app whose test passes out of the box.

use anyhow::{bail, Result};

use crate::cli::NewArgs;

pub fn run(_args: &NewArgs) -> Result<i32> {
    bail!("cove new: not implemented yet")
}
