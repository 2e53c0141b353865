//! The threads of this process, from /proc: on a kernel whose Landlock
//! restricts only the thread that asks (ABI < 8), the threads started
//! before the sandbox that never entered it are named in the log.

use std::collections::BTreeMap;
use std::fs;

/// The calling thread's id (`/proc/thread-self` → `<pid>/task/<tid>`).
pub(crate) fn current() -> Option<u32> {
    let link = fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// Every thread of the process now.
pub(crate) fn all() -> Vec<u32> {
    fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// `cove-io, cove-watchdog ×2`: the names of `tids` that are still alive.
pub(crate) fn names(tids: &[u32]) -> String {
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for tid in tids {
        if let Ok(name) = fs::read_to_string(format!("/proc/self/task/{tid}/comm")) {
            *count.entry(name.trim().to_string()).or_default() += 1;
        }
    }
    count
        .into_iter()
        .map(|(name, n)| match n {
            1 => name,
            n => format!("{name} ×{n}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_thread_is_among_all_and_has_a_name() {
        let me = current().expect("a tid");
        assert!(all().contains(&me));
        let t = std::thread::Builder::new()
            .name("sandbox-t".into())
            .spawn(move || names(&[current().unwrap(), me, 0]))
            .unwrap();
        let shown = t.join().unwrap();
        assert!(shown.contains("sandbox-t"), "{shown}");
    }
}
