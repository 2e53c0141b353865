//! `cove routes` and `cove db schema|query`: JSON for scripts and coding agents (Hull §1.4).

use anyhow::{bail, Result};

use crate::cli::{DbArgs, RoutesArgs};

pub fn routes(_args: &RoutesArgs) -> Result<i32> {
    bail!("cove routes: not implemented yet")
}

pub fn db(_args: &DbArgs) -> Result<i32> {
    bail!("cove db: not implemented yet")
}
