//! The audit line of the kernel sandbox (`sandbox`): once, when the main
//! thread has entered it (step 3), what it allows; or that it is off and
//! why. The `[sandbox]` log line says the same for people.

use cove_core::audit::{self, Event};

#[cfg_attr(not(target_os = "linux"), allow(unused_imports))]
use super::policy::{Connect, Policy};

/// The sandbox is off: `--no-sandbox`, or no kernel support here.
pub(super) fn off(reason: &str) {
    if audit::enabled() {
        Event::new("sandbox")
            .str("result", "off")
            .str("reason", reason)
            .emit();
    }
}

/// What was applied: `landlock` is the Landlock ABI (`None`: the kernel
/// has none, so files and ports are not restricted); `seccomp` whether
/// exec, fork (and UDP without `dns`) are denied.
#[cfg(target_os = "linux")]
pub(super) fn applied(policy: &Policy, landlock: Option<i64>, seccomp: bool) {
    if !audit::enabled() {
        return;
    }
    let paths = |p: &[std::path::PathBuf]| -> Vec<String> {
        p.iter().map(|p| p.display().to_string()).collect()
    };
    let read = paths(&policy.read);
    let mut write = paths(&policy.db_files);
    write.extend(paths(&policy.write));
    let e = Event::new("sandbox").str(
        "result",
        if landlock.is_some() {
            "applied"
        } else {
            "partial"
        },
    );
    let e = match landlock {
        Some(abi) => e.int("landlock_abi", abi),
        None => e.null("landlock_abi"),
    };
    let e = e
        .bool("seccomp", seccomp)
        .strs("read", read.iter().map(String::as_str))
        .strs("write", write.iter().map(String::as_str));
    let e = match &policy.connect {
        Connect::Any => e.str("connect", "any"),
        Connect::Ports(p) => e.ints("connect", p.iter().map(|&p| i64::from(p))),
    };
    e.bool("dns", policy.dns)
        .str("exec", if seccomp { "denied" } else { "allowed" })
        .emit();
}
