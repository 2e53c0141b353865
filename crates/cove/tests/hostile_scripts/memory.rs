//! After allocation storms the server's memory comes back: each VM is
//! capped (`-m`), and a worker whose script ran out of heap collects the
//! garbage and hands the freed pages back to the OS.

use std::thread;

use super::app;
use crate::util::{both, Lang, Server};

both!(rss_returns_under_the_heap_cap_after_allocation_storms);

const WORKERS: usize = 2;
const CAP_MIB: u64 = 32;
/// Code and data the first storms touch (template and JSON paths, thread
/// stacks, allocator metadata), over the RSS measured at start.
const MARGIN_MIB: u64 = 16;

/// Resident set of the server, from /proc/<pid>/status.
fn rss_kib(s: &Server) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", s.pid())).expect("/proc");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// Every path, from several connections at once (so both workers get
/// some), each answered 500.
fn storm(s: &Server, paths: &[&str]) {
    for path in paths {
        let port = s.port;
        let clients: Vec<_> = (0..2 * WORKERS)
            .map(|_| {
                let path = path.to_string();
                thread::spawn(move || {
                    crate::util::Conn::open(port).request("GET", &path, &[], None)
                })
            })
            .collect();
        for c in clients {
            let r = c.join().expect("client");
            assert_eq!(r.status, 500, "{path}: {}", r.text());
        }
    }
}

/// Before the collection after an out-of-heap error, a Lua worker kept its
/// cap of garbage and mimalloc kept as much again of freed pages: two
/// workers capped at 32 MiB sat at 97–114 MiB of RSS after storms like
/// these, against a bound of 12 + 64 + 16 (release build).
fn rss_returns_under_the_heap_cap_after_allocation_storms(lang: Lang) {
    let cap = format!("{CAP_MIB}m");
    let workers = WORKERS.to_string();
    let s = Server::start(&app(lang), &["--workers", &workers, "-m", &cap]);
    for _ in 0..10 {
        assert_eq!(s.get("/health").status, 200);
    }
    let start = rss_kib(&s);
    let bound = start + (WORKERS as u64 * CAP_MIB + MARGIN_MIB) * 1024;
    for round in 1..=4 {
        storm(&s, &["/hog/tables", "/hog/string", "/recurse"]);
        for _ in 0..10 {
            assert_eq!(s.get("/health").status, 200);
        }
        let rss = rss_kib(&s);
        assert!(
            rss <= bound,
            "{lang:?}: after storm {round}, RSS {rss} KiB > {bound} KiB (start {start} KiB, \
             {WORKERS} workers capped at {CAP_MIB} MiB)"
        );
    }
}
