//! One SO_REUSEPORT listener per worker, so the kernel spreads connections
//! across workers without a shared accept queue.

use std::io;
use std::net::{SocketAddr, TcpListener};

use socket2::{Domain, Protocol, Socket, Type};

pub(crate) fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.bind(&addr.into())?;
    socket.listen(1024)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// Bind `count` listeners on one address. Port 0 picks a free port once and
/// binds the others to it.
pub(crate) fn bind_all(addr: SocketAddr, count: usize) -> io::Result<Vec<TcpListener>> {
    let first = bind(addr)?;
    let actual = first.local_addr()?;
    let mut all = vec![first];
    for _ in 1..count {
        all.push(bind(actual)?);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_listeners_share_one_port() {
        let ls = bind_all("127.0.0.1:0".parse().unwrap(), 3).unwrap();
        let port = ls[0].local_addr().unwrap().port();
        assert!(port != 0);
        assert!(ls.iter().all(|l| l.local_addr().unwrap().port() == port));
    }
}
