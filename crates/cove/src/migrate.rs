//! `cove migrate [dir]`, `cove migrate status`, `cove migrate new <name>` (Hull §1.1).

use anyhow::{bail, Result};

use crate::cli::MigrateArgs;

pub fn run(_args: &MigrateArgs) -> Result<i32> {
    bail!("cove migrate: not implemented yet")
}
