//! Metrics of the capabilities (`--metrics`): outbound calls by host and
//! outcome (kv operations are counted in `kv`). Recorded only when
//! `cove_core::telemetry::on()`; the hosts are those of the manifest's
//! allow-lists (and those denied), so their number stays small.

/// One outbound `kind` call ("http", "smtp") to `host`, with its
/// `outcome`: a status class, "sent", "error" or "denied".
#[cold]
pub(crate) fn outbound(kind: &'static str, host: &str, outcome: &'static str) {
    metrics::counter!(
        "cove_outbound_requests_total",
        "kind" => kind,
        "host" => host.to_string(),
        "outcome" => outcome
    )
    .increment(1);
}

/// `2xx` for 204, and so on.
pub(crate) fn status_class(status: u16) -> &'static str {
    match status / 100 {
        1 => "1xx",
        2 => "2xx",
        3 => "3xx",
        4 => "4xx",
        _ => "5xx",
    }
}
