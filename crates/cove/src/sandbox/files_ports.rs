//! Landlock: which files the process may open and which TCP ports it may
//! connect to, from a [`Policy`]. A Landlock domain binds the thread that
//! enters it and the threads it starts later; with ABI 8 (`all_threads`)
//! the kernel also puts every other thread of the process in it.

use std::path::Path;

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, LandlockStatus, NetPort, PathBeneath, PathFd,
    RestrictSelfAttr, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetError, Scope, ABI,
};

use super::policy::{Connect, Policy};

/// The rights this code was written and tested against. A newer kernel
/// restricts what this ABI names and no more (a right added later, such as
/// ABI 9's Unix socket resolution, could deny what the server needs).
const TESTED: ABI = ABI::V7;

/// What the kernel enforced for the calling thread.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entered {
    /// Landlock's ABI on this kernel; `None` where it has no Landlock.
    pub abi: Option<i32>,
    /// TCP ports are restricted (ABI 4 and later).
    pub tcp: bool,
    /// Every thread of the process entered the domain (ABI 8 and later).
    pub all_threads: bool,
}

fn read_tree() -> BitFlags<AccessFs> {
    AccessFs::ReadFile | AccessFs::ReadDir
}

/// `fs.write`: Hull's unveil `rwc`, without devices, sockets, fifos,
/// symlinks or ioctl.
fn write_tree() -> BitFlags<AccessFs> {
    read_tree()
        | AccessFs::WriteFile
        | AccessFs::Truncate
        | AccessFs::MakeReg
        | AccessFs::MakeDir
        | AccessFs::RemoveFile
        | AccessFs::RemoveDir
        | AccessFs::Refer
}

fn rw_file() -> BitFlags<AccessFs> {
    AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate
}

/// Put the calling thread (and, with `all_threads` on a kernel that can,
/// every thread) in a Landlock domain allowing what `policy` says.
pub(crate) fn enter(policy: &Policy, all_threads: bool) -> Result<Entered, String> {
    let mut rules = Vec::new();
    let mut allow = |path: &Path, dir: BitFlags<AccessFs>, file: BitFlags<AccessFs>| {
        // A file takes file rights only (the directory ones would be
        // dropped, and the ruleset reported as partly enforced).
        let access = if path.is_dir() { dir } else { file };
        let fd = PathFd::new(path).map_err(|e| format!("{}: {e}", path.display()))?;
        rules.push(PathBeneath::new(fd, access));
        Ok::<_, String>(())
    };
    for p in &policy.read {
        allow(p, read_tree(), AccessFs::ReadFile.into())?;
    }
    for p in &policy.write {
        allow(p, write_tree(), rw_file())?;
    }
    for p in &policy.db_files {
        allow(p, rw_file(), rw_file())?;
    }
    for p in &policy.remove_in {
        allow(p, AccessFs::RemoveFile.into(), BitFlags::empty())?;
    }
    restrict(policy, rules, all_threads).map_err(|e| e.to_string())
}

fn restrict(
    policy: &Policy,
    paths: Vec<PathBeneath<PathFd>>,
    all_threads: bool,
) -> Result<Entered, RulesetError> {
    let mut net = BitFlags::from(AccessNet::BindTcp);
    if matches!(policy.connect, Connect::Ports(_)) {
        net |= AccessNet::ConnectTcp;
    }
    // Signals are not scoped: the Lua watchdog thread, which predates the
    // domain on ABI 7, interrupts the workers with one.
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(TESTED))?
        .handle_access(net)?
        .scope(Scope::AbstractUnixSocket)?
        .create()?
        .add_rules(paths.into_iter().map(Ok::<_, RulesetError>))?;
    if let Connect::Ports(ports) = &policy.connect {
        let rules = ports
            .iter()
            .map(|&p| Ok::<_, RulesetError>(NetPort::new(p, AccessNet::ConnectTcp)));
        ruleset = ruleset.add_rules(rules)?;
    }
    let status = ruleset.all_threads(all_threads)?.restrict_self()?;
    let abi = match status.landlock {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => Some(kernel_abi.unwrap_or(effective_abi as i32)),
        _ => None,
    };
    Ok(Entered {
        abi,
        tcp: abi.is_some_and(|v| v >= ABI::V4 as i32),
        all_threads: status.all_threads,
    })
}
