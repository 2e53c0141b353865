//! An event stream (Server-Sent Events) read by `curl -N`, one line at a
//! time, for the tests of `res:subscribe` (live.rs, examples_chat.rs).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

pub struct Lines {
    curl: Child,
    lines: mpsc::Receiver<String>,
}

impl Lines {
    /// `GET http://127.0.0.1:PORT/PATH`, read as it arrives.
    pub fn open(port: u16, path: &str) -> Lines {
        let mut curl = Command::new("curl")
            .args(["-sN", "--max-time", "60"])
            .arg(format!("http://127.0.0.1:{port}{path}"))
            .stdout(Stdio::piped())
            .spawn()
            .expect("curl");
        let out = curl.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Lines { curl, lines }
    }

    /// The next line, waiting until `deadline`.
    pub fn next_by(&self, deadline: Instant) -> Option<String> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.lines.recv_timeout(left).ok()
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        let _ = self.curl.kill();
        let _ = self.curl.wait();
    }
}
