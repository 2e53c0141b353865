//! A private Redis server.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::Duration;

use crate::{
    find_program, launch, launch_on_free_port, log_tail, temp_dir, unavailable, LaunchError,
    Process,
};

/// A private Redis server: redis-server on a free port on 127.0.0.1,
/// without persistence (`--save "" --appendonly no`), its working dir and
/// log in a temp dir. Dropping it stops the server and removes the dir.
pub struct Redis {
    process: Process,
    bin: PathBuf,
    port: u16,
    /// The server's working dir, holding `redis.log`.
    dir: tempfile::TempDir,
}

impl Redis {
    /// None (after printing one line to stderr saying why) when
    /// redis-server is missing, unless the env var COVE_REQUIRE_SERVICES
    /// is set, then panic with that reason. Waits until PING answers; any
    /// other failure panics with the server's log tail.
    pub fn start() -> Option<Redis> {
        let Some(bin) = find_program("redis-server") else {
            return unavailable("no redis-server");
        };
        let mut redis = Redis {
            process: Process::default(),
            bin,
            port: 0,
            dir: temp_dir("cove-redis-"),
        };
        let (port, child) = launch_on_free_port("Redis", |port| redis.spawn(port));
        redis.port = port;
        redis.process.set(child);
        Some(redis)
    }

    /// `redis://127.0.0.1:<port>/0`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// The TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stop the server now (SIGTERM: clients are disconnected, nothing is
    /// saved). Drop also stops it.
    pub fn stop(&self) {
        self.process.stop(libc::SIGTERM, Duration::from_secs(10));
    }

    /// Stop the server and start it again on the same port, empty (it
    /// keeps no data): for tests of "Redis restarted while serving". Also
    /// starts a server that was [`stop`](Self::stop)ped.
    pub fn restart(&self) {
        self.stop();
        match self.spawn(self.port) {
            Ok(child) => self.process.set(child),
            Err(LaunchError::PortInUse) => panic!(
                "Redis did not restart: port {} is in use\n{}",
                self.port,
                log_tail(&self.log())
            ),
            Err(LaunchError::Failed(why)) => panic!("Redis did not restart: {why}"),
        }
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("redis.log")
    }

    /// Starts redis-server on `port` and waits until it answers PING.
    fn spawn(&self, port: u16) -> Result<Child, LaunchError> {
        let mut cmd = Command::new(&self.bin);
        cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .current_dir(self.dir.path());
        launch(&mut cmd, &self.log(), |_, log| {
            log.contains("Ready to accept connections") && ping(port)
        })
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.process.stop(libc::SIGTERM, Duration::from_secs(5));
    }
}

/// Whether a Redis server on 127.0.0.1:`port` answers PING.
fn ping(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let Ok(mut conn) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else {
        return false;
    };
    let _ = conn.set_read_timeout(Some(Duration::from_secs(1)));
    let mut reply = [0u8; 7];
    conn.write_all(b"PING\r\n").is_ok()
        && conn.read_exact(&mut reply).is_ok()
        && &reply == b"+PONG\r\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accepts;

    /// `redis-cli -p <port> <args>`, or None without redis-cli.
    fn cli(port: u16, args: &[&str]) -> Option<String> {
        let bin = find_program("redis-cli")?;
        let out = Command::new(bin)
            .args(["-p", &port.to_string()])
            .args(args)
            .output()
            .expect("run redis-cli");
        Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    #[test]
    fn starts_answers_restarts_and_stops() {
        let Some(redis) = Redis::start() else { return };
        let port = redis.port();
        assert_eq!(redis.url(), format!("redis://127.0.0.1:{port}/0"));
        assert!(ping(port));
        if let Some(pong) = cli(port, &["ping"]) {
            assert_eq!(pong, "PONG");
            assert_eq!(cli(port, &["set", "k", "v"]).unwrap(), "OK");
            assert_eq!(cli(port, &["get", "k"]).unwrap(), "v");
        }

        redis.restart();
        assert!(ping(port));
        if let Some(value) = cli(port, &["get", "k"]) {
            assert_eq!(value, "", "nothing persists across a restart");
        }

        redis.stop();
        assert!(!accepts(port));
        redis.restart();
        assert!(ping(port));

        let dir = redis.dir.path().to_path_buf();
        drop(redis);
        assert!(!accepts(port));
        assert!(!dir.exists());
    }
}
