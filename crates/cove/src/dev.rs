//! `cove dev`: serve and reload on change without dropping the socket.

use anyhow::{bail, Result};

use crate::cli::ServeArgs;

pub fn run(_args: &ServeArgs) -> Result<i32> {
    bail!("cove dev: not implemented yet")
}
