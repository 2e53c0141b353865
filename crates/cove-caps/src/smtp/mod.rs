//! `smtp.send(opts)` (Hull §6.8): one message through an SMTP server the
//! manifest's `hosts` allows, with lettre.
//!
//! [`prepare`] reads and checks the options on the worker's thread (cheap);
//! [`Prepared::send`] builds the message and talks to the server, blocking
//! for up to [`TIMEOUT`] per step, so runtimes run it on the blocking pool.

mod audit;
mod send;
#[cfg(test)]
mod tests;

use std::time::Duration;

use serde_json::Value;

use crate::http::{host_allowed, host_denied};

/// Hull's `port` default (submission).
pub const DEFAULT_PORT: u16 = 587;
/// Each network step.
pub const TIMEOUT: Duration = Duration::from_secs(30);
/// The whole message as sent.
pub const MAX_MESSAGE: usize = 10 * 1024 * 1024;
const DEFAULT_CONTENT_TYPE: &str = "text/plain";

/// How the connection is secured (`tls` option).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Security {
    /// `false` / 0 (the default): plain text; credentials are refused.
    Plain,
    /// `true` / 1: STARTTLS, required (no fallback to plain text).
    StartTls,
    /// 2: TLS from the first byte (usually port 465).
    Implicit,
}

/// Why `smtp.send` did not send. Only [`SmtpError::NotConfigured`] raises;
/// the others are returned as `{ok=false, error=<message>}`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SmtpError {
    #[error("smtp not configured (no hosts in manifest)")]
    NotConfigured,
    #[error("{0} required")]
    Required(&'static str),
    #[error("smtp send failed: {0}")]
    Failed(String),
}

impl SmtpError {
    pub fn code(&self) -> &'static str {
        match self {
            SmtpError::NotConfigured => "smtp.not_configured",
            SmtpError::Required(_) => "smtp.required",
            SmtpError::Failed(_) => "smtp.failed",
        }
    }

    /// As scripts see it, with its code.
    pub fn cap(&self) -> cove_core::CapError {
        cove_core::CapError::new(self.code(), self.to_string())
    }

    /// Raised to the script rather than returned.
    pub fn raises(&self) -> bool {
        matches!(self, SmtpError::NotConfigured)
    }
}

/// Checked options, ready to send.
#[derive(Debug, Clone)]
pub struct Prepared {
    host: String,
    port: u16,
    security: Security,
    credentials: Option<(String, String)>,
    from: String,
    to: String,
    cc: Vec<String>,
    reply_to: Option<String>,
    subject: String,
    body: String,
    content_type: String,
    /// With the audit log on: whom the message is for, taken where the
    /// script asked (sending may happen on another thread).
    audit: Option<cove_core::audit::Context>,
}

fn failed(reason: impl Into<String>) -> SmtpError {
    SmtpError::Failed(reason.into())
}

/// An optional string option; other types are refused by name.
fn string(opts: &Value, key: &'static str) -> Result<Option<String>, SmtpError> {
    match opts.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(failed(format!("{key} must be a string, got {other}"))),
    }
}

/// A required string option: missing or empty is `<key> required`.
fn required(opts: &Value, key: &'static str) -> Result<String, SmtpError> {
    string(opts, key)?
        .filter(|s| !s.is_empty())
        .ok_or(SmtpError::Required(key))
}

fn security(opts: &Value) -> Result<Security, SmtpError> {
    match opts.get("tls") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => Ok(Security::Plain),
        Some(Value::Bool(true)) => Ok(Security::StartTls),
        Some(Value::Number(n)) => match n.as_f64().filter(|v| v.fract() == 0.0).map(|v| v as i64) {
            Some(0) => Ok(Security::Plain),
            Some(1) => Ok(Security::StartTls),
            Some(2) => Ok(Security::Implicit),
            _ => Err(failed(format!(
                "tls must be false/0 (plain), true/1 (STARTTLS) or 2 (implicit TLS), got {n}"
            ))),
        },
        Some(other) => Err(failed(format!(
            "tls must be false/0 (plain), true/1 (STARTTLS) or 2 (implicit TLS), got {other}"
        ))),
    }
}

fn port(opts: &Value) -> Result<u16, SmtpError> {
    match opts.get("port") {
        None | Some(Value::Null) => Ok(DEFAULT_PORT),
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|v| v.fract() == 0.0 && (1.0..=65535.0).contains(v))
            .map(|v| v as u16)
            .ok_or_else(|| failed(format!("port must be 1-65535, got {n}"))),
        Some(other) => Err(failed(format!("port must be a number, got {other}"))),
    }
}

/// `cc`: a list of strings (Lua's empty table may arrive as `{}`).
fn cc(opts: &Value) -> Result<Vec<String>, SmtpError> {
    match opts.get("cc") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(o)) if o.is_empty() => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| failed("cc must be a list of strings"))
            })
            .collect(),
        Some(_) => Err(failed("cc must be a list of strings")),
    }
}

/// Read and check `opts` (the script's table as JSON) against the
/// manifest's `hosts`. Nothing is sent yet.
pub fn prepare(hosts: &[String], opts: &Value) -> Result<Prepared, SmtpError> {
    if hosts.is_empty() {
        return Err(SmtpError::NotConfigured);
    }
    if !opts.is_object() {
        return Err(failed("smtp.send takes a table of options"));
    }
    let host = required(opts, "host")?;
    let from = required(opts, "from")?;
    let to = required(opts, "to")?;
    let subject = required(opts, "subject")?;
    let body = required(opts, "body")?;
    if !host_allowed(hosts, &host) {
        if cove_core::audit::enabled() {
            audit::denied(&host, &from, &to);
        }
        if cove_core::telemetry::on() {
            crate::metrics::outbound("smtp", &host, "denied");
        }
        return Err(failed(host_denied(hosts, &host)));
    }
    let reply_to = string(opts, "reply_to")?;
    let cc = cc(opts)?;
    let mut content_type =
        string(opts, "content_type")?.unwrap_or_else(|| DEFAULT_CONTENT_TYPE.into());
    let header_fields = [("from", &from), ("to", &to), ("subject", &subject)]
        .into_iter()
        .chain(reply_to.iter().map(|r| ("reply_to", r)))
        .chain(cc.iter().map(|c| ("cc", c)))
        .chain([("content_type", &content_type)]);
    for (name, value) in header_fields {
        if value.contains(['\r', '\n']) {
            return Err(failed(format!("{name} contains CR or LF")));
        }
    }
    if !content_type.to_ascii_lowercase().contains("charset=") {
        content_type.push_str("; charset=utf-8");
    }
    if body.len() > MAX_MESSAGE {
        return Err(failed(format!(
            "the message is larger than {MAX_MESSAGE} bytes"
        )));
    }
    let security = security(opts)?;
    let credentials = match (string(opts, "username")?, string(opts, "password")?) {
        (Some(u), p) if !u.is_empty() => Some((u, p.unwrap_or_default())),
        _ => None,
    };
    if credentials.is_some() && security == Security::Plain {
        return Err(failed(
            "refusing to send the username and password over a plain-text connection; set tls = true (STARTTLS) or 2 (implicit TLS)",
        ));
    }
    Ok(Prepared {
        port: port(opts)?,
        host,
        security,
        credentials,
        from,
        to,
        cc,
        reply_to,
        subject,
        body,
        content_type,
        audit: cove_core::audit::enabled().then(cove_core::audit::context),
    })
}

impl Prepared {
    /// Build the message and send it: `Ok` once the server accepted it.
    pub fn send(mut self) -> Result<(), SmtpError> {
        let host = cove_core::telemetry::on().then(|| self.host.clone());
        let result = match self.audit.take() {
            None => send::send(self),
            Some(ctx) => audit::send_logged(self, &ctx),
        };
        if let Some(host) = host {
            let outcome = if result.is_ok() { "sent" } else { "error" };
            crate::metrics::outbound("smtp", &host, outcome);
        }
        result
    }
}
