//! One request/response pair as it moves through the pipeline.

use bytes::Bytes;

use crate::{Plan, Response};

/// The request as scripts see it (Hull §4.1).
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub method: String,
    /// Path without the query, as sent (not percent-decoded).
    pub path: String,
    /// Raw query string after `?`, if any.
    pub query: Option<String>,
    /// Lower-cased names in arrival order; duplicates are kept.
    pub headers: Vec<(String, String)>,
    /// `None` until the body is read, and when the request had none.
    pub body: Option<Bytes>,
    /// Percent-decoded `:param` captures.
    pub params: Vec<(String, String)>,
}

impl Request {
    /// First value of a header, by lower-case name.
    pub fn header(&self, lower_name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == lower_name)
            .map(|(_, v)| v.as_str())
    }
}

/// Request, response and plan for one dispatch, plus the script errors raised
/// along the way (the server logs them).
#[derive(Debug)]
pub struct Exchange {
    pub req: Request,
    pub res: Response,
    pub plan: Plan,
    pub errors: Vec<crate::ScriptError>,
}

impl Exchange {
    pub fn new(req: Request, plan: Plan) -> Self {
        Exchange {
            req,
            res: Response::new(),
            plan,
            errors: Vec::new(),
        }
    }
}
