//! What the report says about the `tls` and `h2` tables: how they are
//! measured, above each table, and what their rows leave out.

use crate::h2load::STREAMS;
use crate::runner::Run;
use crate::workloads::Table;
use crate::Config;

/// The paragraph above the `tls` or `h2` table (empty for the others).
pub fn intro(cfg: &Config, run: &Run, table: Table) -> String {
    if !run.cells.iter().any(|c| c.m.table == table) {
        return String::new();
    }
    let cert = "Every TLS server gets the same certificate, made for the run by \
                `openssl req` (self-signed ECDSA P-256, for localhost and 127.0.0.1); \
                the clients do not verify it.";
    let text = match table {
        Table::Tls => format!(
            "HTTP/1.1 over TLS: `wrk -t1 -c{c}` over `https://`, as in the plaintext table. \
             {cert} The connections are kept alive for the whole run, so each one's \
             handshake is paid once and amortised over every request it carries: what \
             is measured is serving HTTP/1.1 through TLS records (encryption, \
             decryption), not handshakes. `cove baseline` has no TLS, so the CPU ratio \
             divides by its plaintext row (it includes what TLS costs). Bun is in this \
             table only: `Bun.serve` has no HTTP/2.",
            c = cfg.connections
        ),
        Table::H2 => format!(
            "`h2load -c{c} -m{STREAMS} -t1 -D {secs}` pinned to core {wrk}: {c} \
             connections, {STREAMS} concurrent streams on each. Over TLS the protocol is \
             chosen by ALPN (each row's check fails unless curl got HTTP/2, and a run \
             fails unless h2load spoke `h2`); the h2c rows speak HTTP/2 on plain TCP \
             (prior knowledge). {cert} Connections are kept for the whole run \
             (handshakes amortised). CPU-µs/req is counted as for wrk; h2load gives \
             no latency percentiles, so p50 and p99 are empty. Not in this table: \
             Bun (`Bun.serve` has no HTTP/2 server). Node.js is `node:http2`'s secure \
             server with its compatibility API (`(req, res)` handlers, the same as the \
             HTTPS row's), HTTP/2 only.",
            c = cfg.connections,
            secs = cfg.seconds,
            wrk = cfg.wrk_core,
        ),
        _ => return String::new(),
    };
    text + "\n\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_protocol_tables_have_an_intro() {
        let cfg = crate::parse_args(&[]).unwrap().unwrap();
        let mut run = crate::runner::Run {
            servers: Vec::new(),
            cells: Vec::new(),
            memory: Default::default(),
            skipped: Vec::new(),
            background_pct: None,
            databases: Vec::new(),
        };
        assert_eq!(intro(&cfg, &run, Table::Tls), "");
        let servers = crate::plan::cove_servers(&cfg);
        let at = |key: &str| servers.iter().position(|s| s.key == key).unwrap();
        for (table, server) in [(Table::Tls, "cove-lua-tls"), (Table::H2, "cove-lua-h2c")] {
            run.cells.push(crate::runner::Cell {
                m: crate::plan::Measurement {
                    table,
                    server: at(server),
                    workload: crate::workloads::workload("json").unwrap(),
                    connections: 50,
                },
                samples: Vec::new(),
                discarded: Vec::new(),
            });
        }
        run.servers = servers;
        let tls = intro(&cfg, &run, Table::Tls);
        assert!(
            tls.contains("amortised") && tls.contains("wrk -t1 -c50"),
            "{tls}"
        );
        let h2 = intro(&cfg, &run, Table::H2);
        assert!(h2.contains("h2load -c50 -m10 -t1 -D 5"), "{h2}");
        assert!(h2.contains("Bun"), "{h2}");
        assert_eq!(intro(&cfg, &run, Table::Hello), "");
    }
}
