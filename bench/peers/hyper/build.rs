//! Records the hyper and tokio versions pinned by Cargo.lock and the rustc
//! version, for `hyperpeer --version` (the report's version column).

use std::process::Command;

fn locked_version(lock: &str, name: &str) -> String {
    let header = format!("name = \"{name}\"\n");
    lock.split("[[package]]")
        .find_map(|pkg| {
            let rest = pkg.trim_start().strip_prefix(&header)?;
            let line = rest.lines().next()?;
            Some(
                line.strip_prefix("version = ")?
                    .trim_matches('"')
                    .to_string(),
            )
        })
        .unwrap_or_else(|| "unknown".into())
}

fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
    println!(
        "cargo:rustc-env=HYPER_VERSION={}",
        locked_version(&lock, "hyper")
    );
    println!(
        "cargo:rustc-env=TOKIO_VERSION={}",
        locked_version(&lock, "tokio")
    );
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let v = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "rustc unknown".into());
    println!("cargo:rustc-env=RUSTC_VERSION={v}");
}
