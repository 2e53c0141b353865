//! `cove_open_connections`: the process's established inbound TCP
//! connections, counted from `/proc` when `/metrics` is scraped, so the
//! request path and the accept loop pay nothing for it.
//!
//! Inbound: a connection whose local port is one this process listens on,
//! the metrics listener's own excepted. The process's sockets are the
//! `socket:[inode]` links in `/proc/self/fd`; their states and ports are in
//! `/proc/self/net/tcp` and `tcp6`.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU16, Ordering};

/// The metrics listener's port, whose connections are not the app's.
pub(super) static METRICS_PORT: AtomicU16 = AtomicU16::new(0);

/// Set `cove_open_connections` (on the metrics thread, as it is scraped).
pub(super) fn sample() {
    if let Some(n) = open_connections(METRICS_PORT.load(Ordering::Relaxed)) {
        metrics::gauge!("cove_open_connections").set(n as f64);
    }
}

/// TCP states in `/proc/net/tcp` (include/net/tcp_states.h).
const ESTABLISHED: u8 = 0x01;
const LISTEN: u8 = 0x0a;

/// One socket of `/proc/net/tcp`: its state, local port and inode.
#[derive(Debug, PartialEq)]
struct Entry {
    state: u8,
    port: u16,
    inode: u64,
}

/// The entries of a `/proc/net/tcp` text (its header line skipped; lines
/// that do not parse are left out).
fn entries(text: &str) -> impl Iterator<Item = Entry> + '_ {
    text.lines().skip(1).filter_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        let port = f.get(1)?.rsplit(':').next()?;
        Some(Entry {
            state: u8::from_str_radix(f.get(3)?, 16).ok()?,
            port: u16::from_str_radix(port, 16).ok()?,
            inode: f.get(9)?.parse().ok()?,
        })
    })
}

/// Established connections to a port `listening` (its inode in `ours`)
/// other than `except`.
fn inbound(all: &[Entry], ours: &HashSet<u64>, except: u16) -> usize {
    let listening: HashSet<u16> = all
        .iter()
        .filter(|e| e.state == LISTEN && ours.contains(&e.inode) && e.port != except)
        .map(|e| e.port)
        .collect();
    all.iter()
        .filter(|e| e.state == ESTABLISHED && ours.contains(&e.inode))
        .filter(|e| listening.contains(&e.port))
        .count()
}

/// The inodes of this process's sockets.
fn socket_inodes() -> HashSet<u64> {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return HashSet::new();
    };
    dir.filter_map(|fd| {
        let link = std::fs::read_link(fd.ok()?.path()).ok()?;
        let link = link.to_str()?;
        link.strip_prefix("socket:[")?
            .strip_suffix(']')?
            .parse()
            .ok()
    })
    .collect()
}

/// The process's inbound connections now, but those to `metrics_port`;
/// `None` where `/proc` cannot tell (not Linux, or not mounted).
pub(super) fn open_connections(metrics_port: u16) -> Option<usize> {
    let mut all = Vec::new();
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(table) {
            all.extend(entries(&text));
        }
    }
    if all.is_empty() {
        return None;
    }
    Some(inbound(&all, &socket_inodes(), metrics_port))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 100 1 0000000000000000 100 0 0 10 0
   1: 0100007F:2384 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 101 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 102 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:1F90 0100007F:D432 01 00000000:00000000 00:00000000 00000000     0        0 103 1 0000000000000000 20 4 30 10 -1
   4: 0100007F:2384 0100007F:D433 01 00000000:00000000 00:00000000 00000000     0        0 104 1 0000000000000000 20 4 30 10 -1
   5: 0100007F:D434 0100007F:1538 01 00000000:00000000 00:00000000 00000000     0        0 105 1 0000000000000000 20 4 30 10 -1
   6: 0100007F:1F90 0100007F:D435 01 00000000:00000000 00:00000000 00000000     0        0 999 1 0000000000000000 20 4 30 10 -1
   7: 0100007F:1F90 0100007F:D436 06 00000000:00000000 00:00000000 00000000     0        0 0 3 0000000000000000
";

    #[test]
    fn proc_net_tcp_is_read() {
        let all: Vec<Entry> = entries(TCP).collect();
        assert_eq!(all.len(), 8);
        assert_eq!(
            all[0],
            Entry {
                state: LISTEN,
                port: 8080,
                inode: 100
            }
        );
        assert_eq!(all[7].state, 6);
    }

    #[test]
    fn only_established_connections_to_our_listeners_count() {
        let all: Vec<Entry> = entries(TCP).collect();
        // Ours: the app's listener (8080) and the metrics' (9092), two app
        // connections, one to the metrics, one outbound (to 5432).
        // Inode 999 is another process's connection to the same port.
        let ours: HashSet<u64> = [100, 101, 102, 103, 104, 105].into();
        assert_eq!(inbound(&all, &ours, 9092), 2);
        // Without the metrics' port excepted, its connection counts too.
        assert_eq!(inbound(&all, &ours, 0), 3);
    }

    #[test]
    fn this_process_can_be_read() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_server, _) = listener.accept().unwrap();
        // The client's end is outbound; the accepted end is inbound (other
        // tests of this process may hold connections of their own).
        assert!(open_connections(0).is_some_and(|n| n >= 1));
    }
}
