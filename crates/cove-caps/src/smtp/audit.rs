//! The audit lines of `smtp.send` (`smtp.send`): the server, the envelope
//! (from, to, cc) and the outcome. Never the subject or body (one-time
//! codes and reset links travel there) nor the credentials; `auth` says
//! only whether there were any.

use std::time::Instant;

use cove_core::audit::{Context, Event};

use super::{Prepared, Security, SmtpError};

/// A server the manifest does not list: nothing was sent.
pub(super) fn denied(host: &str, from: &str, to: &str) {
    Event::new("smtp.send")
        .str("host", host)
        .str("from", from)
        .str("to", to)
        .str("result", "denied")
        .emit();
}

/// Send `p`, then log it under the request that asked for it (`ctx`,
/// captured on the worker's thread: this may run on the blocking pool).
pub(super) fn send_logged(p: Prepared, ctx: &Context) -> Result<(), SmtpError> {
    let tls = match p.security {
        Security::Plain => "plain",
        Security::StartTls => "starttls",
        Security::Implicit => "implicit",
    };
    let line = Event::with(ctx, "smtp.send")
        .str("host", &p.host)
        .int("port", i64::from(p.port))
        .str("tls", tls)
        .bool("auth", p.credentials.is_some())
        .str("from", &p.from)
        .str("to", &p.to)
        .strs("cc", p.cc.iter().map(String::as_str));
    let started = Instant::now();
    let result = super::send::send(p);
    let ms = started.elapsed().as_millis();
    let line = match &result {
        Ok(()) => line.str("result", "ok"),
        Err(e) => line.str("result", "error").str("error", e.code()),
    };
    line.int("duration_ms", i64::try_from(ms).unwrap_or(i64::MAX))
        .emit();
    result
}
