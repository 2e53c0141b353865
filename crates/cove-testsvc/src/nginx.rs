//! nginx as a load balancer.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Child, Command};
use std::time::Duration;

use crate::{
    accepts, find_program, is_root, launch, launch_on_free_port, temp_dir, unavailable,
    LaunchError, Process,
};

/// nginx as a round-robin load balancer on a free port on 127.0.0.1 in
/// front of some servers on 127.0.0.1, its config, pid file and logs in a
/// temp dir. Dropping it stops nginx and removes the dir.
pub struct Nginx {
    process: Process,
    port: u16,
    config: String,
    /// Holds `nginx.conf`, `nginx.pid`, `error.log`, `access.log` and
    /// nginx's temp dirs.
    dir: tempfile::TempDir,
}

impl Nginx {
    /// nginx as a round-robin load balancer on a free port in front of
    /// `upstreams` (127.0.0.1 ports), with the config written to a temp
    /// dir (no daemon, pid/error/access logs in the temp dir, runs as the
    /// current user; as root its worker runs as root too).
    ///
    /// None (after printing one line to stderr saying why) when nginx is
    /// missing, unless the env var COVE_REQUIRE_SERVICES is set, then
    /// panic with that reason. Any other failure panics with nginx's log
    /// tail. Panics when `upstreams` is empty.
    pub fn start(upstreams: &[u16]) -> Option<Nginx> {
        assert!(
            !upstreams.is_empty(),
            "Nginx::start needs at least one upstream"
        );
        let Some(bin) = find_program("nginx") else {
            return unavailable("no nginx");
        };
        let mut nginx = Nginx {
            process: Process::default(),
            port: 0,
            config: String::new(),
            dir: temp_dir("cove-nginx-"),
        };
        let dir = nginx.dir.path();
        let (port, (child, config)) = launch_on_free_port("nginx", |port| {
            let config = config(dir, port, upstreams);
            let file = dir.join("nginx.conf");
            std::fs::write(&file, &config).expect("write nginx.conf");
            let mut cmd = Command::new(&bin);
            // -e: the error log before the config is read (by default a
            // system path).
            cmd.arg("-p")
                .arg(dir)
                .arg("-c")
                .arg(&file)
                .arg("-e")
                .arg(dir.join("error.log"))
                .current_dir(dir);
            let child: Child = launch(&mut cmd, &dir.join("error.log"), |_, log| {
                // Logged once the listening socket is bound.
                log.contains("start worker process") && accepts(port)
            })?;
            Ok::<_, LaunchError>((child, config))
        });
        nginx.port = port;
        nginx.config = config;
        nginx.process.set(child);
        Some(nginx)
    }

    /// The TCP port on 127.0.0.1 it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The nginx.conf text it used.
    pub fn config(&self) -> String {
        self.config.clone()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // Fast shutdown (SIGTERM): the master stops its worker and exits.
        self.process.stop(libc::SIGTERM, Duration::from_secs(5));
    }
}

/// The nginx.conf for a load balancer on `port` in front of `upstreams`,
/// everything it writes kept in `dir`.
fn config(dir: &Path, port: u16, upstreams: &[u16]) -> String {
    let dir = dir.display();
    // A worker of a root master would run as `nobody`, unable to use the
    // temp dirs here.
    let user = if is_root() { "user root;\n" } else { "" };
    let mut servers = String::new();
    for upstream in upstreams {
        let _ = writeln!(servers, "        server 127.0.0.1:{upstream};");
    }
    format!(
        r#"# nginx as a round-robin load balancer in front of Cove servers.
daemon off;
worker_processes 1;
{user}pid {dir}/nginx.pid;
error_log {dir}/error.log notice;

events {{
    worker_connections 512;
}}

http {{
    access_log {dir}/access.log;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;

    # WebSocket upgrades pass through; other requests keep the upstream
    # connections alive (an empty Connection header).
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        '' '';
    }}

    upstream cove {{
{servers}        keepalive 16;
    }}

    server {{
        listen 127.0.0.1:{port};

        location / {{
            proxy_pass http://cove;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
        }}
    }}
}}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpListener, TcpStream};

    /// A tiny HTTP server on a thread answering every request with `body`.
    fn responder(body: &'static str) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let mut reader = BufReader::new(&conn);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    line.clear();
                }
                let _ = (&conn).write_all(
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    )
                    .as_bytes(),
                );
            }
        });
        port
    }

    fn get(port: u16) -> String {
        let mut conn = TcpStream::connect(("127.0.0.1", port)).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        conn.write_all(b"GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut response = String::new();
        conn.read_to_string(&mut response).unwrap();
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        response.split_once("\r\n\r\n").unwrap().1.to_string()
    }

    #[test]
    fn balances_round_robin_and_stops() {
        let (a, b) = (responder("a"), responder("b"));
        let Some(nginx) = Nginx::start(&[a, b]) else {
            return;
        };
        let config = nginx.config();
        assert!(
            config.contains(&format!("server 127.0.0.1:{a};")),
            "{config}"
        );
        assert!(config.contains(&format!("listen 127.0.0.1:{};", nginx.port())));

        let answers: BTreeSet<String> = (0..2).map(|_| get(nginx.port())).collect();
        assert_eq!(answers, BTreeSet::from(["a".to_string(), "b".to_string()]));

        let (port, dir) = (nginx.port(), nginx.dir.path().to_path_buf());
        drop(nginx);
        assert!(!accepts(port));
        assert!(!dir.exists());
    }

    #[test]
    #[should_panic(expected = "at least one upstream")]
    fn needs_an_upstream() {
        let _ = Nginx::start(&[]);
    }
}
