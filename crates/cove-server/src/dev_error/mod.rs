//! `cove dev`'s answer to a failed script call (a handler, a middleware, a
//! template it rendered): instead of the plain `Internal Server Error`, the
//! error itself, where it happened and the source around it — an HTML page
//! for a browser, JSON for any other client. Serve mode and built apps
//! never get here (see [`crate::ServerConfig::dev_errors`]).

mod accept;
mod excerpt;
mod html;
mod json;

use cove_core::Exchange;

use cove_core::location::{self, Location};
use excerpt::Line;

/// Turns a script error's 500 into the error page; holds the app's files,
/// where the source lines are read from, and whom to tell.
#[derive(Debug, Clone)]
pub(crate) struct DevErrors {
    config: crate::DevErrors,
}

impl DevErrors {
    pub(crate) fn new(config: crate::DevErrors) -> DevErrors {
        DevErrors { config }
    }

    /// If `ex` ended in a 500 because a script call failed, answer with the
    /// error instead. The headers middleware set stay (CORS, a request id);
    /// those about the body the handler had made go.
    pub(crate) fn apply(&self, ex: &mut Exchange) {
        if ex.res.status != 500 {
            return;
        }
        // A failed call stops the chain: the last error is the one.
        let Some(err) = ex.errors.last() else {
            return;
        };
        let parsed = location::parse(&err.message);
        let report = Report {
            method: &ex.req.method,
            path: &ex.req.path,
            detail: &err.message,
            message: parsed.message,
            places: parsed
                .locations
                .into_iter()
                .map(|at| Place {
                    source: excerpt::read(&self.config.files, &at),
                    at,
                })
                .collect(),
        };
        if let Some(notify) = &self.config.notify {
            notify(&crate::FailedRequest {
                method: report.method,
                path: report.path,
                status: ex.res.status,
                error: report.detail,
                message: report.message,
                at: report.primary().map(|p| &p.at),
            });
        }
        let html = accept::prefers_html(ex.req.header("accept").as_deref());
        let (body, body_type) = if html {
            (html::page(&report).into_bytes(), "text/html; charset=utf-8")
        } else {
            (json::body(&report), "application/json")
        };
        let res = &mut ex.res;
        res.headers.retain(|(name, _)| {
            let name = name.to_ascii_lowercase();
            !name.starts_with("content-") && name != "cache-control"
        });
        res.headers
            .push(("Cache-Control".into(), "no-store".into()));
        if html {
            res.headers
                .push(("Content-Security-Policy".into(), html::CSP.into()));
        }
        res.content_type = None;
        res.set_body(body, body_type);
    }
}

/// A script error, taken apart for showing.
pub(crate) struct Report<'a> {
    pub method: &'a str,
    pub path: &'a str,
    /// The whole error, as the log has it.
    pub detail: &'a str,
    /// What it says after the places it names.
    pub message: &'a str,
    /// Outermost first (the handler line, then the template line).
    pub places: Vec<Place>,
}

/// A place an error names, with the lines around it when they can be shown.
pub(crate) struct Place {
    pub at: Location,
    pub source: Option<Vec<Line>>,
}

impl Report<'_> {
    /// Where the error happened: the innermost place whose source can be
    /// shown, else the innermost place.
    pub(crate) fn primary(&self) -> Option<&Place> {
        self.places
            .iter()
            .rev()
            .find(|p| p.source.is_some())
            .or(self.places.last())
    }
}

#[cfg(test)]
mod tests {
    use cove_core::{header_map, Exchange, Request, RouteTable, ScriptError};

    use super::*;

    fn failed(accept: Option<&str>, message: &str) -> Exchange {
        let headers: Vec<(&str, &str)> = accept.iter().map(|a| ("accept", *a)).collect();
        let req = Request {
            method: "GET".into(),
            path: "/x".into(),
            headers: header_map(&headers),
            ..Request::default()
        };
        let mut ex = Exchange::new(req, RouteTable::new().plan("GET", "/x"));
        ex.res.html("<p>half</p>", Some("default-src 'none'"));
        ex.res.add_header("X-Request-Id", "7").unwrap();
        ex.res
            .add_header("Content-Disposition", "attachment")
            .unwrap();
        ex.res.fail();
        ex.errors.push(ScriptError {
            message: message.into(),
        });
        ex
    }

    fn app() -> (tempfile::TempDir, DevErrors) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("app.lua"), "local x\nerror('boom')\n").unwrap();
        let dev = DevErrors::new(crate::DevErrors::new(cove_core::AppFiles::Dir(
            dir.path().to_path_buf(),
        )));
        (dir, dev)
    }

    fn header<'a>(ex: &'a Exchange, name: &str) -> Vec<&'a str> {
        let headers = &ex.res.headers;
        headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    #[test]
    fn a_browser_gets_the_page() {
        let (_dir, dev) = app();
        let mut ex = failed(Some("text/html,*/*;q=0.8"), "app.lua:2: boom");
        dev.apply(&mut ex);
        assert_eq!(ex.res.status, 500);
        assert_eq!(ex.res.content_type(), Some("text/html; charset=utf-8"));
        let body = std::str::from_utf8(&ex.res.body).unwrap();
        assert!(body.contains("<h1>boom</h1>"), "{body}");
        assert!(body.contains("error(&#39;boom&#39;)"), "{body}");
        assert_eq!(header(&ex, "content-security-policy"), vec![html::CSP]);
        assert_eq!(header(&ex, "x-request-id"), vec!["7"]);
        assert_eq!(header(&ex, "content-disposition"), Vec::<&str>::new());
        assert_eq!(header(&ex, "cache-control"), vec!["no-store"]);
    }

    #[test]
    fn an_api_client_gets_json() {
        let (_dir, dev) = app();
        let mut ex = failed(None, "app.lua:2: boom");
        dev.apply(&mut ex);
        assert_eq!(ex.res.content_type(), Some("application/json"));
        let v: serde_json::Value = serde_json::from_slice(&ex.res.body).unwrap();
        assert_eq!(v["error"]["file"], "app.lua");
        assert_eq!(v["error"]["source"][1]["text"], "error('boom')");
        assert_eq!(header(&ex, "content-security-policy"), Vec::<&str>::new());
    }

    #[test]
    fn other_responses_are_left_alone() {
        let (_dir, dev) = app();
        // A 500 the app chose to send, with no script error behind it.
        let mut ex = failed(None, "x");
        ex.errors.clear();
        dev.apply(&mut ex);
        assert_eq!(&ex.res.body[..], b"Internal Server Error");
        // A backend that could not be reached stays a 503.
        let mut ex = failed(None, "app.lua:2: db down");
        ex.res.unavailable();
        dev.apply(&mut ex);
        assert_eq!(&ex.res.body[..], b"Service Unavailable");
    }

    #[test]
    fn the_innermost_place_with_source_is_primary() {
        let place = |file: &str, shown: bool| Place {
            at: Location {
                file: file.into(),
                line: 1,
                column: None,
            },
            source: shown.then(Vec::new),
        };
        let report = |places| Report {
            method: "GET",
            path: "/",
            detail: "",
            message: "",
            places,
        };
        let r = report(vec![place("a", true), place("b", true), place("c", false)]);
        assert_eq!(r.primary().unwrap().at.file, "b");
        let r = report(vec![place("a", false), place("b", false)]);
        assert_eq!(r.primary().unwrap().at.file, "b");
        assert!(report(vec![]).primary().is_none());
    }
}
