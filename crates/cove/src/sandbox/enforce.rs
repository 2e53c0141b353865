//! Steps 1 to 3 of the sandbox (see sandbox/mod.rs) on Linux: the
//! seccomp filters, the policy made from the first manifest, and each
//! thread's Landlock domain, with the log lines saying what was applied.

use std::sync::{Mutex, OnceLock};

use anyhow::Result;
use serde_json::Value;

use super::policy::{Declared, Facts, Policy};
use super::{facts, failed, files_ports, info, syscalls, threads, warn};
use crate::app::AppSource;
use crate::cli::ServeArgs;

pub(super) struct On {
    facts: Facts,
    /// Whether the seccomp filters are in place (the kernel may lack them).
    seccomp: bool,
    /// What every thread enters; worked out by the first worker to load.
    policy: OnceLock<Result<Policy, String>>,
    /// Threads alive when the first worker entered, and those that entered.
    before: OnceLock<Vec<u32>>,
    entered: Mutex<Vec<u32>>,
}

impl On {
    pub(super) fn start(args: &ServeArgs, app: &AppSource) -> Result<Option<On>> {
        let facts = facts(args, app)?;
        let seccomp = match syscalls::deny_exec_and_fork() {
            Ok(()) => true,
            Err(syscalls::Refused::Unavailable(why)) => {
                warn(&format!(
                    "seccomp is not available ({why}): exec and fork are not blocked"
                ));
                false
            }
            Err(syscalls::Refused::Failed(e)) => {
                anyhow::bail!(failed("cannot install the seccomp filter", e))
            }
        };
        Ok(Some(On {
            facts,
            seccomp,
            policy: OnceLock::new(),
            before: OnceLock::new(),
            entered: Mutex::new(Vec::new()),
        }))
    }

    /// The policy, made by the first caller from its app's manifest (every
    /// worker loads the same app).
    fn policy(&self, manifest: Option<&Value>) -> Result<&Policy, String> {
        let made = self.policy.get_or_init(|| {
            let declared = Declared::from_manifest(manifest)?;
            let policy = Policy::new(&self.facts, &declared);
            for path in &policy.missing {
                warn(&format!(
                    "{} (in the manifest's fs lists) does not exist: not allowed",
                    path.display()
                ));
            }
            if !policy.dns && self.seccomp {
                // The exec filter installed, so this one will too.
                syscalls::deny_udp().map_err(|e| failed("cannot deny UDP", format!("{e:?}")))?;
            }
            let _ = self.before.set(threads::all());
            Ok(policy)
        });
        made.as_ref().map_err(Clone::clone)
    }

    fn enter(&self, policy: &Policy, all_threads: bool) -> Result<files_ports::Entered, String> {
        let tid = threads::current();
        let entered = files_ports::enter(policy, all_threads).map_err(|e| failed("Landlock", e))?;
        if let Some(tid) = tid {
            self.entered
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(tid);
        }
        Ok(entered)
    }

    pub(super) fn enter_worker(&self, manifest: Option<&Value>) -> Result<(), String> {
        let policy = self.policy(manifest)?;
        self.enter(policy, false).map(drop)
    }

    pub(super) fn enter_main(&self) -> Result<(), String> {
        // No worker loaded: the server is not starting.
        let Some(Ok(policy)) = self.policy.get() else {
            return Ok(());
        };
        // Named now: /proc is out of reach once this thread has entered.
        let outside = self.outside();
        let entered = self.enter(policy, true)?;
        let exec = match (self.seccomp, policy.dns) {
            (false, _) => "udp allowed, exec and fork allowed (no seccomp)",
            (true, true) => "udp allowed (dns); exec and fork denied",
            (true, false) => "udp denied; exec and fork denied",
        };
        let Some(abi) = entered.abi else {
            warn(
                "Landlock is not available in this kernel: files and TCP ports are not restricted",
            );
            info(&format!("applied (seccomp only): {exec}"));
            super::audit::applied(policy, None, self.seccomp);
            return Ok(());
        };
        info(&format!(
            "applied (Landlock ABI {abi}{}): {}; {exec}",
            if self.seccomp { ", seccomp" } else { "" },
            policy.summary(),
        ));
        super::audit::applied(policy, Some(i64::from(abi)), self.seccomp);
        if !entered.tcp {
            warn(&format!(
                "Landlock ABI {abi} cannot restrict TCP ports (ABI 4 can): connections are not restricted"
            ));
        }
        if !entered.all_threads && !outside.is_empty() {
            warn(&format!(
                "Landlock ABI {abi} restricts each thread on its own; these started before \
                 the sandbox and stay outside it: {outside} (seccomp binds them too; ABI 8 \
                 would restrict every thread)"
            ));
        }
        Ok(())
    }

    /// The names of the threads that predate the sandbox and have not
    /// entered it, other than the calling one.
    fn outside(&self) -> String {
        let entered = self.entered.lock().unwrap_or_else(|e| e.into_inner());
        let me = threads::current();
        let outside: Vec<u32> = self
            .before
            .get()
            .into_iter()
            .flatten()
            .filter(|&&t| !entered.contains(&t) && Some(t) != me)
            .copied()
            .collect();
        threads::names(&outside)
    }
}
