//! `smtp.send(opts)` over [`CapValue`]s: the options read as JSON (one
//! reader for every shape Hull accepts), the `{ok, error}` result.

use cove_core::CapError;

use super::{blocking, CapValue, Scope, Started};
use crate::smtp::{self, SmtpError};

/// `{ok = true}` or `{ok = false, error = "..."}`.
fn result(sent: Result<(), SmtpError>) -> Result<CapValue, CapError> {
    let mut fields = vec![("ok".to_string(), CapValue::Bool(sent.is_ok()))];
    if let Err(e) = sent {
        fields.push(("error".into(), CapValue::Str(e.to_string().into_bytes())));
    }
    Ok(CapValue::Record(fields))
}

pub(super) fn start(scope: &Scope, args: &[CapValue]) -> Result<Started, CapError> {
    let opts = args
        .first()
        .map_or(serde_json::Value::Null, CapValue::to_json);
    match smtp::prepare(scope.hosts, &opts) {
        Ok(prepared) => Ok(blocking(move || prepared.send(), result)),
        Err(e) if e.raises() => Err(e.cap()),
        Err(e) => result(Err(e)).map(Started::Done),
    }
}
