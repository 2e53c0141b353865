//! Who listens on a port already: read from /proc (Linux), for the message
//! that refuses to start a second server on it. Best effort: `None` where
//! /proc cannot say (another OS, another user's process).

use std::fs;

/// `(pid, command name)` of a process listening on TCP `port`.
pub(crate) fn listening_on(port: u16) -> Option<(u32, String)> {
    let inode = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .find_map(|table| listen_inode(&fs::read_to_string(table).ok()?, port))?;
    let socket = format!("socket:[{inode}]");
    for entry in fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(fds) = fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        let holds = fds
            .flatten()
            .any(|fd| fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == socket.as_str()));
        if holds {
            let comm = fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
            return Some((pid, comm.trim().to_string()));
        }
    }
    None
}

/// The inode of the socket listening on `port` in a /proc/net/tcp table:
/// columns `sl local_address rem_address st … inode`, the port in hex after
/// the colon, LISTEN is state `0A`.
fn listen_inode(table: &str, port: u16) -> Option<u64> {
    table.lines().skip(1).find_map(|line| {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let local_port = cols.get(1)?.rsplit(':').next()?;
        let listening = *cols.get(3)? == "0A";
        (listening && u16::from_str_radix(local_port, 16).ok()? == port)
            .then(|| cols.get(9)?.parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_listening_socket_in_a_table() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F95 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F95 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 5151 1 0000000000000000 20 4 30 10 -1";
        assert_eq!(listen_inode(table, 8085), Some(4242));
        assert_eq!(listen_inode(table, 8086), None);
    }

    #[test]
    fn names_this_process_as_the_holder_of_its_listener() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let (pid, _) = listening_on(port).expect("found in /proc");
        assert_eq!(pid, std::process::id());
    }
}
