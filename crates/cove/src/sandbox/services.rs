//! The services a server connects to (PostgreSQL, Redis): their ports, and
//! whether a name must be resolved, read by the parsers that connect.

use std::net::IpAddr;

/// PostgreSQL's port when a URL gives none.
const POSTGRES_PORT: u16 = 5432;

/// A network service the server connects to (PostgreSQL, Redis).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Service {
    /// `None`: a Unix socket.
    pub port: Option<u16>,
    /// A host name to resolve (not an IP address).
    pub named: bool,
}

/// The port and name of a PostgreSQL URL's hosts, read by the parser that
/// connects to them.
pub(crate) fn postgres(url: &str) -> Result<Vec<Service>, String> {
    use tokio_postgres::config::Host;
    let config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| format!("cannot read the database URL: {e}"))?;
    let ports = config.get_ports();
    let port_of = |i: usize| match ports {
        [] => POSTGRES_PORT,
        [one] => *one,
        many => many.get(i).copied().unwrap_or(POSTGRES_PORT),
    };
    Ok(config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| match host {
            Host::Tcp(name) => Service {
                port: Some(port_of(i)),
                named: name.parse::<IpAddr>().is_err(),
            },
            Host::Unix(_) => Service {
                port: None,
                named: false,
            },
        })
        .collect())
}

/// The port and name of a Redis URL's server.
pub(crate) fn redis(url: &str) -> Result<Service, String> {
    use redis::{ConnectionAddr, IntoConnectionInfo};
    let info = url
        .into_connection_info()
        .map_err(|e| format!("cannot read the kv URL: {e}"))?;
    let tcp = |host: &str, port: u16| Service {
        port: Some(port),
        named: host.trim_matches(['[', ']']).parse::<IpAddr>().is_err(),
    };
    Ok(match &info.addr {
        ConnectionAddr::Tcp(host, port) => tcp(host, *port),
        ConnectionAddr::TcpTls { host, port, .. } => tcp(host, *port),
        _ => Service {
            port: None,
            named: false,
        },
    })
}

/// The port and name of an ACME directory URL (`--acme-dir`).
pub(crate) fn acme(url: &str) -> Result<Service, String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|e| format!("cannot read the ACME directory URL: {e}"))?;
    let host = uri.host().unwrap_or_default();
    Ok(Service {
        port: Some(uri.port_u16().unwrap_or(443)),
        named: host.trim_matches(['[', ']']).parse::<IpAddr>().is_err(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_acme_directory_gives_its_port_or_443() {
        let le = acme("https://acme-v02.api.letsencrypt.org/directory").unwrap();
        assert_eq!(
            le,
            Service {
                port: Some(443),
                named: true
            }
        );
        let pebble = acme("https://127.0.0.1:14000/dir").unwrap();
        assert_eq!(
            pebble,
            Service {
                port: Some(14000),
                named: false
            }
        );
    }

    #[test]
    fn service_urls_give_ports_and_whether_to_resolve() {
        let pg = postgres("postgres://u:p@127.0.0.1:6543/db").unwrap();
        assert_eq!(
            pg,
            vec![Service {
                port: Some(6543),
                named: false
            }]
        );
        let pg = postgres("postgresql://db.internal/app").unwrap();
        assert_eq!(
            pg,
            vec![Service {
                port: Some(5432),
                named: true
            }]
        );
        let pg = postgres("postgres://u@%2Fvar%2Frun%2Fpostgresql/db").unwrap();
        assert_eq!(pg[0].port, None);
        let r = redis("redis://localhost:7000/0").unwrap();
        assert_eq!(
            r,
            Service {
                port: Some(7000),
                named: true
            }
        );
        assert_eq!(redis("redis://[::1]/0").unwrap().port, Some(6379));
        assert!(!redis("redis://[::1]/0").unwrap().named);
    }
}
