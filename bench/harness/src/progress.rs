//! The progress line: a bar, what runs now, and the time left.

use std::io::IsTerminal;
use std::time::Instant;

pub struct Progress {
    total_s: f64,
    done_s: f64,
    started: Instant,
    tty: bool,
}

impl Progress {
    pub fn new() -> Progress {
        Progress {
            total_s: 0.0,
            done_s: 0.0,
            started: Instant::now(),
            tty: std::io::stderr().is_terminal(),
        }
    }

    /// More planned work, in seconds.
    pub fn add_total(&mut self, seconds: f64) {
        self.total_s += seconds;
    }

    pub fn advance(&mut self, seconds: f64) {
        self.done_s += seconds;
    }

    /// Replace the progress line (a new line per update when not a tty).
    pub fn show(&self, what: &str) {
        let line = line(
            what,
            self.done_s,
            self.total_s,
            self.started.elapsed().as_secs_f64(),
        );
        if self.tty {
            eprint!("\r\x1b[2K{line}");
        } else {
            eprintln!("{line}");
        }
    }

    /// A status line without the bar (work whose length is not planned).
    pub fn status(&self, what: &str) {
        if self.tty {
            eprint!("\r\x1b[2K{what}");
        } else {
            eprintln!("{what}");
        }
    }

    /// A message that stays above the progress line.
    pub fn note(&self, msg: &str) {
        if self.tty {
            eprint!("\r\x1b[2K");
        }
        eprintln!("{msg}");
    }

    pub fn finish(&self) {
        if self.tty {
            eprint!("\r\x1b[2K");
        }
    }
}

/// `[######--------------]  30%  what  ETA 4m05s`. The ETA scales the
/// planned time left by how fast the plan has gone so far.
pub fn line(what: &str, done: f64, total: f64, elapsed: f64) -> String {
    const WIDTH: usize = 20;
    let frac = if total > 0.0 {
        (done / total).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let filled = (frac * WIDTH as f64).round() as usize;
    let left = if done > 0.0 {
        elapsed / done * (total - done)
    } else {
        total - done
    };
    format!(
        "[{}{}] {:3.0}%  {what}  ETA {}",
        "#".repeat(filled),
        "-".repeat(WIDTH - filled),
        frac * 100.0,
        duration(left.max(0.0))
    )
}

/// `45s`, `4m05s`, `1h02m`.
pub fn duration(seconds: f64) -> String {
    let s = seconds.round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration(0.2), "0s");
        assert_eq!(duration(59.0), "59s");
        assert_eq!(duration(245.0), "4m05s");
        assert_eq!(duration(3720.0), "1h02m");
    }

    #[test]
    fn bar_and_eta() {
        let l = line("round 1/3", 30.0, 100.0, 60.0);
        assert!(
            l.starts_with("[######--------------]  30%  round 1/3"),
            "{l}"
        );
        assert!(l.ends_with("ETA 2m20s"), "{l}");
        assert!(line("x", 0.0, 0.0, 0.0).contains("  0%"));
        assert!(line("x", 5.0, 4.0, 1.0).contains("100%"));
    }
}
