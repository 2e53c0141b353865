//! The metrics listener: `/metrics` in Prometheus text format, `/` the
//! dashboard that charts it, `/errors` the last handler errors as JSON.

use bytes::Bytes;
use hyper::header::{
    HeaderValue, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS,
};
use metrics_exporter_prometheus::PrometheusHandle;

use cove_core::log;

use super::clocks::sample_workers;
use super::UPKEEP;
use crate::config::HttpLimits;
use crate::Body;

/// Answer `/`, `/metrics` and `/errors` on `listener` until the process
/// ends (crate::side_listener says why not on hyper's own types); and
/// fold the histograms' samples every [`UPKEEP`].
pub(super) fn serve(listener: std::net::TcpListener, handle: PrometheusHandle) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        log::error("metrics: cannot start the listener's runtime");
        return;
    };
    tokio::task::LocalSet::new().block_on(&rt, async move {
        let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
            log::error("metrics: cannot use the listener");
            return;
        };
        let upkeep = handle.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(UPKEEP);
            loop {
                tick.tick().await;
                upkeep.run_upkeep();
            }
        });
        let answer = move |req: &hyper::Request<_>| answer(&handle, req);
        crate::side_listener::serve(listener, HttpLimits::default(), answer).await;
    });
}

/// The dashboard: one page, its script and style inline.
const DASHBOARD: &str = include_str!("dashboard.html");

/// The dashboard's page may run its own inline script and style and fetch
/// from this listener, and nothing else: it loads no outside resource.
const DASHBOARD_CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; \
     style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

const NOT_FOUND: &str = "Not Found: this listener serves / (the dashboard), \
     /metrics (Prometheus text) and /errors (the last handler errors, JSON)\n";

/// What a request to the metrics listener asks for.
#[derive(Debug, PartialEq)]
enum Page {
    Dashboard,
    Metrics,
    Errors,
    NotFound,
}

/// GET (or HEAD) of one of the three paths; the query is not looked at.
fn page(method: &hyper::Method, path: &str) -> Page {
    if method != hyper::Method::GET && method != hyper::Method::HEAD {
        return Page::NotFound;
    }
    match path {
        "/" => Page::Dashboard,
        "/metrics" => Page::Metrics,
        "/errors" => Page::Errors,
        _ => Page::NotFound,
    }
}

fn answer<B>(handle: &PrometheusHandle, req: &hyper::Request<B>) -> hyper::Response<Body> {
    let asked = page(req.method(), req.uri().path());
    let (status, body, kind): (u16, Bytes, &str) = match asked {
        Page::Metrics => (
            200,
            {
                sample_workers();
                super::request::sample_in_flight();
                super::sockets::sample();
                handle.render().into()
            },
            "text/plain; version=0.0.4; charset=utf-8",
        ),
        Page::Dashboard => (
            200,
            Bytes::from_static(DASHBOARD.as_bytes()),
            "text/html; charset=utf-8",
        ),
        Page::Errors => (
            200,
            super::recent::json().to_string().into(),
            "application/json",
        ),
        Page::NotFound => (
            404,
            Bytes::from_static(NOT_FOUND.as_bytes()),
            "text/plain; charset=utf-8",
        ),
    };
    let head = req.method() == hyper::Method::HEAD;
    let mut res = hyper::Response::new(Body::bytes(if head { Bytes::new() } else { body }));
    *res.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or_default();
    let headers = res.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(kind));
    // Every answer is live figures: a cached one would be stale.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if asked == Page::Dashboard {
        headers.insert(
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(DASHBOARD_CSP),
        );
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use metrics_exporter_prometheus::PrometheusBuilder;

    fn get(method: &str, path: &str) -> hyper::Response<Body> {
        let handle = PrometheusBuilder::new().build_recorder().handle();
        let req = hyper::Request::builder()
            .method(method)
            .uri(path)
            .body(())
            .unwrap();
        answer(&handle, &req)
    }

    fn header<'a>(res: &'a hyper::Response<Body>, name: &str) -> &'a str {
        res.headers()
            .get(name)
            .map_or("", |v| v.to_str().unwrap_or(""))
    }

    fn body(res: hyper::Response<Body>) -> String {
        use http_body_util::BodyExt;
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let bytes = rt.block_on(res.into_body().collect()).unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[test]
    fn the_listener_routes_three_paths() {
        assert_eq!(page(&hyper::Method::GET, "/"), Page::Dashboard);
        assert_eq!(page(&hyper::Method::GET, "/metrics"), Page::Metrics);
        assert_eq!(page(&hyper::Method::GET, "/errors"), Page::Errors);
        assert_eq!(page(&hyper::Method::HEAD, "/"), Page::Dashboard);
        assert_eq!(page(&hyper::Method::POST, "/metrics"), Page::NotFound);
        assert_eq!(page(&hyper::Method::GET, "/index.html"), Page::NotFound);
        assert_eq!(page(&hyper::Method::GET, "/metrics/"), Page::NotFound);
    }

    #[test]
    fn the_dashboard_is_one_page_that_loads_nothing_else() {
        let res = get("GET", "/?refresh=1");
        assert_eq!(res.status(), 200);
        assert_eq!(header(&res, "content-type"), "text/html; charset=utf-8");
        assert_eq!(header(&res, "cache-control"), "no-store");
        assert!(header(&res, "content-security-policy").starts_with("default-src 'none'"));
        let html = body(res);
        assert!(html.starts_with("<!doctype html>"), "{}", &html[..40]);
        assert!(html.contains("fetch(\"/metrics\""));
        // No outside resource: no URL with a scheme, no src= nor href= at all.
        for needle in ["http://", "https://", "src=", "href=", "@import"] {
            assert!(!html.contains(needle), "the page has {needle}");
        }
    }

    #[test]
    fn metrics_errors_and_not_found() {
        let res = get("GET", "/metrics");
        assert_eq!(res.status(), 200);
        assert!(header(&res, "content-type").starts_with("text/plain; version=0.0.4"));
        assert_eq!(header(&res, "cache-control"), "no-store");
        assert_eq!(header(&res, "content-security-policy"), "");

        let res = get("GET", "/errors");
        assert_eq!(res.status(), 200);
        assert_eq!(header(&res, "content-type"), "application/json");
        let v: serde_json::Value = serde_json::from_str(&body(res)).unwrap();
        assert!(v["errors"].is_array() && v["total"].is_u64(), "{v}");

        let res = get("GET", "/nope");
        assert_eq!(res.status(), 404);
        let text = body(res);
        for path in ["/ ", "/metrics", "/errors"] {
            assert!(text.contains(path), "{text}");
        }

        let res = get("HEAD", "/");
        assert_eq!(res.status(), 200);
        assert_eq!(body(res), "");
    }
}
