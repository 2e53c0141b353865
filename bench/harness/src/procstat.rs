//! CPU time from /proc: a process's utime+stime (all its threads) and the
//! machine-wide busy time from /proc/stat, both in clock ticks.

use std::process::Command;

use anyhow::{anyhow, bail, Context, Result};

/// The fields of /proc/<pid>/stat that the harness uses (ticks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PidStat {
    pub comm: String,
    pub state: char,
    pub ppid: u32,
    pub utime: u64,
    pub stime: u64,
    /// CPU of waited-for children (wrk, once reaped).
    pub cutime: u64,
    pub cstime: u64,
}

impl PidStat {
    pub fn own(&self) -> u64 {
        self.utime + self.stime
    }
    pub fn with_children(&self) -> u64 {
        self.own() + self.cutime + self.cstime
    }
}

/// Parse one /proc/<pid>/stat line. The command name sits in parentheses
/// and may itself contain spaces and parentheses, so the fields are taken
/// after the *last* `)`.
pub fn parse_pid_stat(line: &str) -> Result<PidStat> {
    let open = line
        .find('(')
        .ok_or_else(|| anyhow!("no '(' in {line:?}"))?;
    let close = line
        .rfind(')')
        .ok_or_else(|| anyhow!("no ')' in {line:?}"))?;
    if close < open {
        bail!("malformed stat line {line:?}");
    }
    let comm = line[open + 1..close].to_string();
    // Field 3 (state) is rest[0]; utime is field 14, so rest[11].
    let rest: Vec<&str> = line[close + 1..].split_whitespace().collect();
    if rest.len() < 15 {
        bail!("short stat line {line:?}");
    }
    let field = |i: usize| -> Result<u64> {
        rest[i]
            .parse()
            .map_err(|_| anyhow!("bad field {} in {line:?}", i + 3))
    };
    Ok(PidStat {
        comm,
        state: rest[0].chars().next().unwrap_or('?'),
        ppid: field(1)? as u32,
        utime: field(11)?,
        stime: field(12)?,
        cutime: field(13)?,
        cstime: field(14)?,
    })
}

/// /proc/<pid>/stat of a process (`"self"` for the harness).
pub fn read_pid(pid: &str) -> Result<PidStat> {
    let path = format!("/proc/{pid}/stat");
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {path}"))?;
    parse_pid_stat(text.trim_end())
}

/// `pid` and every process descended from it.
pub fn tree(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.filter_map(|e| e.ok()) {
            let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if let Ok(st) = read_pid(&p.to_string()) {
                parents.push((p, st.ppid));
            }
        }
    }
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        out.extend(
            parents
                .iter()
                .filter(|&&(_, pp)| pp == parent)
                .map(|&(p, _)| p),
        );
        i += 1;
    }
    out
}

/// utime+stime of a process tree (children that already exited and were
/// reaped count through their parent's cutime/cstime).
pub fn tree_ticks(pid: u32) -> u64 {
    tree(pid)
        .iter()
        .filter_map(|p| read_pid(&p.to_string()).ok())
        .map(|s| if s.state == 'Z' { 0 } else { s.with_children() })
        .sum()
}

/// Resident memory of a process tree in KiB: (current VmRSS, peak VmHWM).
pub fn tree_rss_kib(pid: u32) -> (u64, u64) {
    let mut total = (0, 0);
    for p in tree(pid) {
        let text = std::fs::read_to_string(format!("/proc/{p}/status")).unwrap_or_default();
        let (rss, hwm) = parse_status_rss(&text);
        total.0 += rss;
        total.1 += hwm;
    }
    total
}

/// VmRSS and VmHWM (KiB) from /proc/<pid>/status text.
pub fn parse_status_rss(text: &str) -> (u64, u64) {
    let kib = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (kib("VmRSS:"), kib("VmHWM:"))
}

/// Inodes of the TCP sockets in LISTEN state on `port`, from the text of
/// /proc/net/tcp or /proc/net/tcp6.
pub fn parse_listen_inodes(text: &str, port: u16) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local_port = f.get(1)?.rsplit_once(':')?.1;
            let listening = *f.get(3)? == "0A";
            let matches = u16::from_str_radix(local_port, 16).ok()? == port;
            (listening && matches).then(|| f.get(9)?.parse().ok())?
        })
        .collect()
}

/// The processes holding a socket that listens on TCP `port` (any address).
pub fn listener_pids(port: u16) -> Vec<u32> {
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(table) {
            inodes.extend(parse_listen_inodes(&text, port));
        }
    }
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in procs.filter_map(|e| e.ok()) {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(e.path().join("fd")) else {
            continue;
        };
        let holds = fds.filter_map(|f| f.ok()).any(|f| {
            std::fs::read_link(f.path())
                .is_ok_and(|l| wanted.iter().any(|w| l.as_os_str() == w.as_str()))
        });
        if holds {
            out.push(pid);
        }
    }
    out
}

/// The process that listens on `port` and whose parent does not (the
/// postmaster rather than a backend that inherited the socket).
pub fn listener_root(port: u16) -> Option<u32> {
    let pids = listener_pids(port);
    pids.iter()
        .copied()
        .find(|p| read_pid(&p.to_string()).is_ok_and(|s| !pids.contains(&s.ppid)))
}

/// Machine-wide ticks from the first (`cpu `) line of /proc/stat.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTotals {
    /// user + nice + system + irq + softirq (guest time is inside user).
    pub busy: u64,
    pub idle: u64,
    pub iowait: u64,
    pub steal: u64,
}

pub fn parse_proc_stat(text: &str) -> Result<CpuTotals> {
    let line = text
        .lines()
        .find(|l| l.starts_with("cpu "))
        .ok_or_else(|| anyhow!("no aggregate cpu line in /proc/stat"))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().map_err(|_| anyhow!("bad /proc/stat field {f:?}")))
        .collect::<Result<_>>()?;
    if v.len() < 8 {
        bail!("short /proc/stat cpu line {line:?}");
    }
    Ok(CpuTotals {
        busy: v[0] + v[1] + v[2] + v[5] + v[6],
        idle: v[3],
        iowait: v[4],
        steal: v[7],
    })
}

pub fn read_totals() -> Result<CpuTotals> {
    parse_proc_stat(&std::fs::read_to_string("/proc/stat").context("cannot read /proc/stat")?)
}

/// Clock ticks per second (`getconf CLK_TCK`).
pub fn clk_tck() -> Result<u64> {
    let out = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .context("cannot run `getconf CLK_TCK`")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let ticks: u64 = text
        .trim()
        .parse()
        .map_err(|_| anyhow!("`getconf CLK_TCK` printed {text:?}"))?;
    if ticks == 0 {
        bail!("`getconf CLK_TCK` printed 0");
    }
    Ok(ticks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_stat_line() {
        let line = "18996 (cove) S 1 18991 11817 0 -1 4194304 595 0 2 0 146 162 7 9 20 0 2 0 \
                    105586 77246464 1699 18446744073709551615 0 0 0 0 0 0 0 4100 17474 0 0 0 17 0";
        let s = parse_pid_stat(line).unwrap();
        assert_eq!(s.comm, "cove");
        assert_eq!(s.state, 'S');
        assert_eq!(s.ppid, 1);
        assert_eq!((s.utime, s.stime, s.cutime, s.cstime), (146, 162, 7, 9));
        assert_eq!(s.own(), 308);
        assert_eq!(s.with_children(), 324);
    }

    #[test]
    fn name_with_spaces_and_parens() {
        let line = "4242 (my (odd) name) ) R 1 4242 4242 0 -1 4194560 100 0 0 0 \
                    1234 567 89 10 20 0 3 0 5000 1000000 200 18446744073709551615";
        let s = parse_pid_stat(line).unwrap();
        assert_eq!(s.comm, "my (odd) name) ");
        assert_eq!(s.state, 'R');
        assert_eq!((s.utime, s.stime, s.cutime, s.cstime), (1234, 567, 89, 10));
    }

    #[test]
    fn bad_stat_lines() {
        assert!(parse_pid_stat("").is_err());
        assert!(parse_pid_stat("1 (x) S 1 2 3").is_err());
        assert!(parse_pid_stat("1 )x( S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15").is_err());
    }

    #[test]
    fn own_process_is_readable() {
        let s = read_pid("self").unwrap();
        assert!(!s.comm.is_empty());
    }

    #[test]
    fn proc_stat_totals() {
        let text = "cpu  18402 3 4884 169048 640 5 156 66 0 0\n\
                    cpu0 9000 1 2400 84000 300 2 80 30 0 0\n\
                    intr 123\n";
        let t = parse_proc_stat(text).unwrap();
        assert_eq!(t.busy, 18402 + 3 + 4884 + 5 + 156);
        assert_eq!((t.idle, t.iowait, t.steal), (169048, 640, 66));
        assert!(parse_proc_stat("cpu0 1 2 3\n").is_err());
    }

    #[test]
    fn status_memory_fields() {
        let text = "Name:\tcove\nVmHWM:\t   10240 kB\nVmRSS:\t    8192 kB\n";
        assert_eq!(parse_status_rss(text), (8192, 10240));
        assert_eq!(parse_status_rss(""), (0, 0));
    }

    #[test]
    fn the_harness_is_in_its_own_tree() {
        let me = std::process::id();
        assert_eq!(tree(me)[0], me);
        assert!(tree_rss_kib(me).0 > 0);
    }

    #[test]
    fn listening_sockets_by_port() {
        let text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
           0: 0100007F:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   109        0 23456 1 0000000000000000 100 0 0 10 0\n\
           1: 0100007F:1538 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000   109        0 23999 1 0000000000000000 20 4 30 10 -1\n\
           2: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0000000000000000 100 0 0 10 0\n";
        // 0x1538 = 5432: the listener only, not the connection on the same port.
        assert_eq!(parse_listen_inodes(text, 5432), [23456]);
        assert_eq!(parse_listen_inodes(text, 22), [1111]);
        assert!(parse_listen_inodes(text, 80).is_empty());
        assert!(parse_listen_inodes("", 22).is_empty());
    }

    #[test]
    fn finds_the_process_listening_on_a_port() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let me = std::process::id();
        assert!(listener_pids(port).contains(&me));
        assert_eq!(listener_root(port), Some(me));
        drop(l);
        assert_eq!(listener_root(port), None);
    }

    #[test]
    fn ticks_per_second() {
        assert!(clk_tck().unwrap() > 0);
    }
}
