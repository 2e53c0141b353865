//! The audit lines of outbound requests (`http.request`): method, where
//! to, status, duration. The path goes without its query string and the
//! headers and bodies not at all: they are where tokens and keys travel.

use std::time::Instant;

use cove_core::audit::{Context, Event};

use super::{url, HttpError, Prepared, Request, Response, Target};

fn event(ctx: &Context, method: &str, target: &Target, raw_url: &str) -> Event {
    let path = url::path(raw_url);
    let path = path
        .split('?')
        .next()
        .filter(|p| !p.is_empty())
        .unwrap_or("/");
    Event::with(ctx, "http.request")
        .str("method", method)
        .str("scheme", if target.https { "https" } else { "http" })
        .str("host", &target.host)
        .int("port", i64::from(target.port))
        .str("path", path)
}

/// A request to a host the manifest does not list: never sent.
pub(super) fn denied(req: &Request, target: &Target) {
    event(&cove_core::audit::context(), &req.method, target, &req.url)
        .null("status")
        .str("result", "denied")
        .emit();
}

/// Send `p`, then log it under the request that asked for it (`ctx`,
/// captured on the worker's thread: this may run on the blocking pool).
pub(super) fn send_logged(p: Prepared, ctx: &Context) -> Result<Response, HttpError> {
    let line = event(ctx, &p.req.method, &p.target, &p.req.url);
    let started = Instant::now();
    let result = super::send::send(p);
    let ms = started.elapsed().as_millis();
    let line = match &result {
        Ok(res) => line
            .int("status", i64::from(res.status))
            .str("result", "ok"),
        Err(e) => line
            .null("status")
            .str("result", "error")
            .str("error", e.code()),
    };
    line.int("duration_ms", i64::try_from(ms).unwrap_or(i64::MAX))
        .emit();
    result
}
