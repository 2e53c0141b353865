//! seccomp: system calls no thread may make. Filters are installed with
//! TSYNC, so they bind every thread of the process at once (Landlock needs
//! ABI 8 for that), and are inherited by threads started later.

use std::collections::BTreeMap;
use std::io;

use seccompiler::{
    apply_filter_all_threads, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp,
    SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

/// Why a filter was not installed.
#[derive(Debug)]
pub(crate) enum Refused {
    /// No seccomp filters here (an architecture seccompiler does not know,
    /// a kernel built without them): run without.
    Unavailable(String),
    /// The kernel has them and refused this one.
    Failed(String),
}

type Rules = BTreeMap<i64, Vec<SeccompRule>>;

fn arg(index: u8, len: SeccompCmpArgLen, op: SeccompCmpOp, value: u64) -> SeccompCondition {
    // Only fails for an argument index above 5.
    SeccompCondition::new(index, len, op, value).expect("argument index 0..=5")
}

fn rule(conditions: Vec<SeccompCondition>) -> SeccompRule {
    // Only fails for an empty list.
    SeccompRule::new(conditions).expect("at least one condition")
}

/// `socket(domain, type & SOCK_TYPE_MASK == kind, …)`.
fn socket_of(domain: i32, kind: i32) -> SeccompRule {
    use SeccompCmpArgLen::Dword;
    rule(vec![
        arg(0, Dword, SeccompCmpOp::Eq, domain as u64),
        // The type carries SOCK_CLOEXEC and SOCK_NONBLOCK above its low bits.
        arg(1, Dword, SeccompCmpOp::MaskedEq(0xf), kind as u64),
    ])
}

/// No new program, no new process; threads only. Also no raw or packet
/// sockets, which would go around Landlock's TCP port rules.
fn exec_and_fork() -> Rules {
    let mut rules: Rules = BTreeMap::new();
    rules.insert(libc::SYS_execve, vec![]);
    rules.insert(libc::SYS_execveat, vec![]);
    #[cfg(target_arch = "x86_64")]
    {
        rules.insert(libc::SYS_fork, vec![]);
        rules.insert(libc::SYS_vfork, vec![]);
    }
    // A thread is a clone with CLONE_THREAD; anything else is a process.
    rules.insert(
        libc::SYS_clone,
        vec![rule(vec![arg(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(libc::CLONE_THREAD as u64),
            0,
        )])],
    );
    rules.insert(
        libc::SYS_socket,
        vec![
            rule(vec![arg(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                libc::AF_PACKET as u64,
            )]),
            socket_of(libc::AF_INET, libc::SOCK_RAW),
            socket_of(libc::AF_INET6, libc::SOCK_RAW),
        ],
    );
    rules
}

/// UDP, for a server that resolves no names (DNS is the only UDP it sends).
fn udp() -> Rules {
    let mut rules: Rules = BTreeMap::new();
    rules.insert(
        libc::SYS_socket,
        vec![
            socket_of(libc::AF_INET, libc::SOCK_DGRAM),
            socket_of(libc::AF_INET6, libc::SOCK_DGRAM),
        ],
    );
    rules
}

/// The same rules for x86-64's x32 calls, which carry bit 30 in their
/// number (and their own numbers for execve and execveat): where the kernel
/// enables x32, they would otherwise go around the filter.
#[cfg(target_arch = "x86_64")]
fn with_x32(mut rules: Rules) -> Rules {
    const X32: i64 = 0x4000_0000;
    let x32: Rules = rules
        .iter()
        .map(|(&nr, r)| match nr {
            libc::SYS_execve => (X32 | 520, r.clone()),
            libc::SYS_execveat => (X32 | 545, r.clone()),
            nr => (X32 | nr, r.clone()),
        })
        .collect();
    rules.extend(x32);
    rules
}

#[cfg(not(target_arch = "x86_64"))]
fn with_x32(rules: Rules) -> Rules {
    rules
}

fn install(rules: Rules, errno: i32) -> Result<(), Refused> {
    let rules = with_x32(rules);
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|_| Refused::Unavailable(format!("not on {}", std::env::consts::ARCH)))?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch,
    )
    .and_then(BpfProgram::try_from)
    .map_err(|e| Refused::Failed(e.to_string()))?;
    apply_filter_all_threads(&filter).map_err(|e| match e {
        seccompiler::Error::Seccomp(io) if unavailable(&io) => {
            Refused::Unavailable(format!("the kernel refused filters: {io}"))
        }
        other => Refused::Failed(other.to_string()),
    })
}

fn unavailable(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS))
}

/// From now on no thread may exec or fork. Before the app loads: nothing
/// Cove does needs either.
pub(crate) fn deny_exec_and_fork() -> Result<(), Refused> {
    // clone3 passes its flags in memory, where a filter cannot look: it
    // fails as if the kernel lacked it, and glibc creates threads with
    // clone instead (which the filter can check for CLONE_THREAD).
    install([(libc::SYS_clone3, vec![])].into(), libc::ENOSYS)?;
    install(exec_and_fork(), libc::EPERM)
}

/// From now on no thread may open a UDP socket.
pub(crate) fn deny_udp() -> Result<(), Refused> {
    install(udp(), libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filters_compile_for_this_machine() {
        let arch = TargetArch::try_from(std::env::consts::ARCH).unwrap();
        for rules in [with_x32(exec_and_fork()), with_x32(udp())] {
            let f = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(1), arch);
            assert!(!BpfProgram::try_from(f.unwrap()).unwrap().is_empty());
        }
    }
}
