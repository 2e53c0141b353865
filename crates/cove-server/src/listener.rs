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
///
/// An address another process listens on already (Cove or not) is refused:
/// with SO_REUSEPORT the kernel would let this server share the port and
/// split the connections between the two — and two Cove servers on two
/// databases would each get part of the writes.
pub(crate) fn bind_all(addr: SocketAddr, count: usize) -> io::Result<Vec<TcpListener>> {
    if addr.port() != 0 {
        refuse_if_taken(addr)?;
    }
    let first = bind(addr)?;
    let actual = first.local_addr()?;
    let mut all = vec![first];
    for _ in 1..count {
        all.push(bind(actual)?);
    }
    Ok(all)
}

/// Bind `addr` without SO_REUSEPORT, which fails while any socket listens
/// there (SO_REUSEADDR only lets a port in TIME_WAIT be taken again).
pub(crate) fn refuse_if_taken(addr: SocketAddr) -> io::Result<()> {
    let probe = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    probe.set_reuse_address(true)?;
    match probe.bind(&addr.into()) {
        Err(e) if e.kind() == io::ErrorKind::AddrInUse => {
            let who = match crate::holder::listening_on(addr.port()) {
                Some((pid, name)) => format!(" (pid {pid}, {name})"),
                None => String::new(),
            };
            Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!(
                    "another process already listens there{who}; stop it, or choose another \
                     port with -p"
                ),
            ))
        }
        other => other,
    }
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

    #[test]
    fn an_address_another_listener_holds_is_refused() {
        let taken = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = taken.local_addr().unwrap();
        let err = bind_all(addr, 2).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
        let msg = err.to_string();
        assert!(
            msg.contains("another process already listens there"),
            "{msg}"
        );
        drop(taken);
        assert_eq!(bind_all(addr, 2).unwrap().len(), 2);
    }
}
