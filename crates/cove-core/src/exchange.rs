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

    /// The headers as scripts see them: one entry per name, in first-arrival
    /// order, duplicates joined with `, ` (`; ` for `cookie`, RFC 9110 §5.3).
    pub fn joined_headers(&self) -> Vec<(&str, std::borrow::Cow<'_, str>)> {
        let mut out: Vec<(&str, std::borrow::Cow<'_, str>)> =
            Vec::with_capacity(self.headers.len());
        for (name, value) in &self.headers {
            match out.iter_mut().find(|(n, _)| *n == name.as_str()) {
                Some((_, prev)) => {
                    let sep = if name == "cookie" { "; " } else { ", " };
                    let joined = prev.to_mut();
                    joined.push_str(sep);
                    joined.push_str(value);
                }
                None => out.push((name.as_str(), std::borrow::Cow::Borrowed(value.as_str()))),
            }
        }
        out
    }
}

/// Where a script app lives and how it is limited; the same for every runtime.
#[derive(Debug, Clone)]
pub struct ScriptConfig {
    /// The app's files: a directory, or the pack of a built executable.
    pub files: crate::AppFiles,
    /// The entry file (`app.lua` or `app.js`), relative to `files`.
    pub entry: String,
    pub limits: crate::Limits,
    /// Commit the writes of one event-loop turn together (cove-db group.rs).
    pub group_commit: bool,
}

impl ScriptConfig {
    /// The entry file as shown in errors: relative to the app directory.
    pub fn display_name(&self) -> String {
        self.entry.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_duplicate_headers() {
        let req = Request {
            headers: vec![
                ("cookie".into(), "a=1".into()),
                ("accept".into(), "x".into()),
                ("cookie".into(), "b=2".into()),
                ("accept".into(), "y".into()),
            ],
            ..Request::default()
        };
        let joined: Vec<(&str, String)> = req
            .joined_headers()
            .into_iter()
            .map(|(n, v)| (n, v.into_owned()))
            .collect();
        assert_eq!(
            joined,
            vec![
                ("cookie", "a=1; b=2".to_string()),
                ("accept", "x, y".to_string())
            ]
        );
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
    /// Set by an engine whose call suspended on blocking work.
    pub pending: Option<crate::Job>,
    /// The finished job's output, for the suspended call to resume with.
    pub resume: Option<crate::JobOutput>,
    /// Where the pipeline stands: the next call of the current chain, and
    /// whether the chains are done and the handler is next.
    pub(crate) cursor: usize,
    pub(crate) at_handler: bool,
}

impl Exchange {
    pub fn new(req: Request, plan: Plan) -> Self {
        Exchange {
            req,
            res: Response::new(),
            plan,
            errors: Vec::new(),
            pending: None,
            resume: None,
            cursor: 0,
            at_handler: false,
        }
    }
}
