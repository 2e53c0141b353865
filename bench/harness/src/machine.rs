//! What the numbers were measured on.

use std::path::Path;
use std::process::Command;

use anyhow::Result;

use crate::procstat;
use crate::Config;

#[derive(Debug, Clone, Default)]
pub struct Machine {
    pub date: String,
    pub nproc: String,
    pub cpu_model: String,
    pub kernel: String,
    pub os: String,
    pub memory: String,
    pub clk_tck: u64,
    pub wrk: String,
    pub cove: String,
    pub git: String,
}

fn first_line(program: &str, args: &[&str], dir: Option<&Path>) -> String {
    let mut cmd = Command::new(program);
    cmd.args(args);
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    match cmd.output() {
        // `wrk -v` prints its version and exits 1, so the status is ignored.
        Ok(out) => {
            let text = [out.stdout, out.stderr].concat();
            String::from_utf8_lossy(&text)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        }
        Err(_) => "unknown".to_string(),
    }
}

/// The value of the first `key: value` line of a /proc-style file.
fn proc_field(path: &str, key: &str, sep: char) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(sep))
        .find(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim().trim_matches('"').to_string())
        .unwrap_or_else(|| "unknown".to_string())
}

/// `24683656 kB` → `23.5 GiB`.
fn memory(meminfo: &str) -> String {
    match meminfo.trim_end_matches(" kB").parse::<f64>() {
        Ok(kb) => format!("{:.1} GiB", kb / 1024.0 / 1024.0),
        Err(_) => meminfo.to_string(),
    }
}

impl Machine {
    pub fn detect(cfg: &Config) -> Result<Machine> {
        let root = cfg.app.parent().unwrap_or(Path::new("."));
        let rev = first_line("git", &["rev-parse", "--short", "HEAD"], Some(root));
        let dirty = Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(root)
            .output()
            .is_ok_and(|o| !o.stdout.is_empty());
        Ok(Machine {
            date: first_line("date", &["-u", "+%Y-%m-%d %H:%M:%S UTC"], None),
            nproc: first_line("nproc", &[], None),
            cpu_model: proc_field("/proc/cpuinfo", "model name", ':'),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "unknown".to_string()),
            os: proc_field("/etc/os-release", "PRETTY_NAME", '='),
            memory: memory(&proc_field("/proc/meminfo", "MemTotal", ':')),
            clk_tck: procstat::clk_tck()?,
            wrk: first_line("wrk", &["-v"], None)
                .split(" Copyright")
                .next()
                .unwrap_or("")
                .to_string(),
            cove: first_line(&cfg.cove.to_string_lossy(), &["--version"], None),
            git: if dirty {
                format!("{rev} (uncommitted changes)")
            } else {
                rev
            },
        })
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "date": self.date, "nproc": self.nproc, "cpu_model": self.cpu_model,
            "kernel": self.kernel, "os": self.os, "memory": self.memory,
            "clk_tck": self.clk_tck, "wrk": self.wrk, "cove": self.cove, "git": self.git,
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn memory_in_gib() {
        assert_eq!(super::memory("24683656 kB"), "23.5 GiB");
        assert_eq!(super::memory("unknown"), "unknown");
    }
}
