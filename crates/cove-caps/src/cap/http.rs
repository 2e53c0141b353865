//! http's functions over [`CapValue`]s: the method, URL, body and options
//! where the function's shape puts them; the response as a record.

use cove_core::CapError;

use super::{blocking, CapValue, Scope, Started};
use crate::http::{HttpError, HttpFn, Request, Response};

fn arg(args: &[CapValue], i: usize) -> &CapValue {
    args.get(i).unwrap_or(&CapValue::Nothing)
}

fn wrong(f: &HttpFn, scope: &Scope, what: &str, v: &CapValue) -> CapError {
    CapError::new(
        "http.argument",
        format!(
            "{}: {what} must be a string, got {}",
            f.failed,
            v.type_name(scope.runtime)
        ),
    )
}

fn text(f: &HttpFn, scope: &Scope, what: &str, v: &CapValue) -> Result<String, CapError> {
    match v {
        CapValue::Str(s) => Ok(String::from_utf8_lossy(s).into_owned()),
        _ => Err(wrong(f, scope, what, v)),
    }
}

/// A body: text or bytes; anything else sends none.
fn body(v: Option<&CapValue>) -> Option<Vec<u8>> {
    match v {
        Some(CapValue::Str(b) | CapValue::Bytes(b)) => Some(b.clone()),
        _ => None,
    }
}

/// `opts.headers` as name/value pairs; number values are written out.
fn headers(f: &HttpFn, scope: &Scope, opts: &CapValue) -> Result<Vec<(String, String)>, CapError> {
    match opts.field("headers") {
        Some(CapValue::Record(fields)) => fields
            .iter()
            .map(|(name, v)| match v.text(scope.runtime) {
                Some(value) => Ok((name.clone(), value)),
                None => Err(wrong(f, scope, "a header value", v)),
            })
            .collect(),
        Some(CapValue::List(_)) => Err(wrong(f, scope, "a header name", &CapValue::Int(1))),
        _ => Ok(Vec::new()),
    }
}

fn request_of(f: &HttpFn, scope: &Scope, args: &[CapValue]) -> Result<Request, CapError> {
    let at = f.shape.positions();
    let method = at
        .method
        .map(|i| text(f, scope, "the method", arg(args, i)))
        .transpose()?;
    let url = text(f, scope, "the URL", arg(args, at.url))?;
    let opts = arg(args, at.opts);
    let body = match at.body {
        Some(i) => body(Some(arg(args, i))),
        None => body(opts.field("body")),
    };
    Ok(f.request(method, url, body, headers(f, scope, opts)?))
}

fn response(sent: Result<Response, HttpError>) -> Result<CapValue, CapError> {
    let res = sent.map_err(|e| e.cap())?;
    let headers = res
        .headers
        .into_iter()
        .map(|(name, value)| (name, CapValue::Str(value.into_bytes())))
        .collect();
    Ok(CapValue::Record(vec![
        ("status".into(), CapValue::Int(res.status.into())),
        ("body".into(), CapValue::Str(res.body)),
        ("headers".into(), CapValue::Record(headers)),
    ]))
}

pub(super) fn start(f: &HttpFn, scope: &Scope, args: &[CapValue]) -> Result<Started, CapError> {
    let req = request_of(f, scope, args)?;
    let prepared = f.prepare(scope.hosts, req).map_err(|e| e.cap())?;
    Ok(blocking(move || prepared.send(), response))
}
