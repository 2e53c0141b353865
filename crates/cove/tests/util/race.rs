//! Which of two requests a one-worker server answers first: the check that
//! slow work in flight does not stall the worker's other connections. It
//! looks at the order of answers, never at absolute times.

use std::io::Write;
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use super::{build_request, Server};

fn ready(s: &TcpStream) -> bool {
    matches!(s.peek(&mut [0u8; 1]), Ok(n) if n > 0)
}

/// Send `slow_request`, wait `head_start` (for the worker to pick it up),
/// then send `GET /health`: true if `/health` was answered while the slow
/// request was still unanswered.
pub fn health_beats(server: &Server, slow_request: &[u8], head_start: Duration) -> bool {
    let connect = || TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    let mut slow = connect();
    slow.write_all(slow_request).expect("send slow request");
    thread::sleep(head_start);
    let mut health = connect();
    health
        .write_all(&build_request("GET", "/health", &[], None))
        .expect("send /health");
    for s in [&slow, &health] {
        s.set_nonblocking(true).expect("non-blocking");
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        // The slow one is looked at first: /health ready now means it was
        // answered while the slow request was not.
        let slow_ready = ready(&slow);
        if ready(&health) {
            return !slow_ready;
        }
        if slow_ready {
            return false;
        }
        thread::sleep(Duration::from_millis(1));
    }
    panic!("neither request was answered:\n{}", server.log());
}
