//! Route table and middleware matching (Hull §3): `:param` segments, first
//! match in registration order, 404/405, HEAD served by GET routes, and
//! middleware patterns that are an exact path or a `/prefix/*`.

use std::collections::HashMap;
use std::sync::Arc;

use crate::query::percent_decode;
use smallvec::SmallVec;

/// Index of a script function registered by the engine.
pub type HandlerId = u32;

/// A request's `:param` captures in pattern order: each name shared with
/// the route table (not copied per request), each value percent-decoded.
pub type Params = Vec<(Arc<str>, String)>;

/// When a middleware runs: before the request body is read, or after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Pre,
    Post,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Param(Arc<str>),
}

#[derive(Debug, Clone)]
struct Route {
    method: String,
    pattern: String,
    segments: Vec<Segment>,
    handler: HandlerId,
    /// A WebSocket endpoint (`app.ws`): a GET route whose requests upgrade.
    socket: bool,
}

/// A middleware path pattern: `/health` (exact), `/api/*` (prefix) or `/*` (all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MiddlewarePattern {
    Exact(String),
    /// Prefix without the trailing `/*`; empty matches every path.
    Prefix(String),
}

impl MiddlewarePattern {
    pub fn parse(pattern: &str) -> Result<Self, RouteError> {
        if !pattern.starts_with('/') {
            return Err(RouteError::BadPattern(pattern.to_string()));
        }
        Ok(match pattern.strip_suffix("/*") {
            Some(prefix) => MiddlewarePattern::Prefix(prefix.to_string()),
            None => MiddlewarePattern::Exact(pattern.to_string()),
        })
    }

    pub fn matches(&self, path: &str) -> bool {
        match self {
            MiddlewarePattern::Exact(p) => p == path,
            MiddlewarePattern::Prefix(p) => {
                p.is_empty()
                    || path
                        .strip_prefix(p.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            }
        }
    }
}

#[derive(Debug, Clone)]
struct Middleware {
    method: String,
    pattern: MiddlewarePattern,
    raw_pattern: String,
    phase: Phase,
    handler: HandlerId,
}

/// Registration errors, raised to the script that called `app.get` etc.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RouteError {
    #[error("route pattern must start with '/': {0:?}")]
    BadPattern(String),
    #[error("method must be a non-empty token such as \"GET\" or \"*\": {0:?}")]
    BadMethod(String),
}

/// What a request resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Route {
        handler: HandlerId,
        params: Params,
    },
    /// A WebSocket endpoint: the request upgrades once its middleware has
    /// run, and `handler` is then called for each event of the connection.
    Socket {
        handler: HandlerId,
        params: Params,
    },
    NotFound,
    /// The path matched but the method did not; carries the allowed methods.
    MethodNotAllowed(Vec<String>),
}

/// The handlers one request runs, computed once from the route table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub target: Target,
    pub pre: Vec<HandlerId>,
    pub post: Vec<HandlerId>,
}

/// All routes and middleware of one loaded app.
#[derive(Debug, Default, Clone)]
pub struct RouteTable {
    routes: Vec<Route>,
    middleware: Vec<Middleware>,
    /// The routes without params by their path ([`trim`]med), and those
    /// with params by their segment count: indexes into `routes`, in
    /// registration order. A request is tried only against the routes that
    /// can match it, not against every route.
    literal: HashMap<String, SmallVec<[u32; 2]>, foldhash::fast::RandomState>,
    with_params: Vec<Vec<u32>>,
    /// Bit `n` (at most 63): some route without params has `n` segments.
    literal_counts: u64,
    /// The index in `routes` of each handler's first route, by handler id
    /// (`u32::MAX`: none), for [`RouteTable::pattern`], which the metrics
    /// and the access log ask on every request: a scan of the routes cost
    /// ~7 instructions a route. Ids past [`PATTERN_INDEX_MAX`] are scanned.
    by_handler: Vec<u32>,
}

/// The largest handler id [`RouteTable::pattern`] finds by index.
const PATTERN_INDEX_MAX: usize = 1 << 16;

fn check_method(method: &str) -> Result<(), RouteError> {
    let ok = !method.is_empty()
        && (method == "*"
            || method
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    if ok {
        Ok(())
    } else {
        Err(RouteError::BadMethod(method.to_string()))
    }
}

/// The path as routes are matched: without its leading `/`, and one
/// trailing slash is tolerated (`/tasks/` matches `/tasks`).
fn trim(path: &str) -> &str {
    let path = path.strip_prefix('/').unwrap_or(path);
    path.strip_suffix('/').unwrap_or(path)
}

impl RouteTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add_route(
        &mut self,
        method: &str,
        pattern: &str,
        handler: HandlerId,
    ) -> Result<(), RouteError> {
        self.add(method, pattern, handler, false)
    }

    /// A WebSocket endpoint at `pattern`: GET requests to it upgrade, and
    /// `handler` runs for each event of their connections.
    pub fn add_socket(&mut self, pattern: &str, handler: HandlerId) -> Result<(), RouteError> {
        self.add("GET", pattern, handler, true)
    }

    fn add(
        &mut self,
        method: &str,
        pattern: &str,
        handler: HandlerId,
        socket: bool,
    ) -> Result<(), RouteError> {
        check_method(method)?;
        if !pattern.starts_with('/') {
            return Err(RouteError::BadPattern(pattern.to_string()));
        }
        let body = pattern.strip_prefix('/').unwrap_or(pattern);
        let segments: Vec<Segment> = body
            .split('/')
            .map(|s| match s.strip_prefix(':') {
                Some(name) if !name.is_empty() => Segment::Param(name.into()),
                _ => Segment::Literal(s.to_string()),
            })
            .collect();
        let index = self.routes.len() as u32;
        if segments.iter().all(|s| matches!(s, Segment::Literal(_))) {
            // Its segments joined again: the body itself.
            self.literal
                .entry(body.to_string())
                .or_default()
                .push(index);
            self.literal_counts |= 1 << segments.len().min(63);
        } else {
            if self.with_params.len() <= segments.len() {
                self.with_params.resize(segments.len() + 1, Vec::new());
            }
            self.with_params[segments.len()].push(index);
        }
        let slot = handler as usize;
        if slot < PATTERN_INDEX_MAX {
            if self.by_handler.len() <= slot {
                self.by_handler.resize(slot + 1, u32::MAX);
            }
            if self.by_handler[slot] == u32::MAX {
                self.by_handler[slot] = index;
            }
        }
        self.routes.push(Route {
            method: method.to_string(),
            pattern: pattern.to_string(),
            segments,
            handler,
            socket,
        });
        Ok(())
    }

    pub fn add_middleware(
        &mut self,
        phase: Phase,
        method: &str,
        pattern: &str,
        handler: HandlerId,
    ) -> Result<(), RouteError> {
        check_method(method)?;
        self.middleware.push(Middleware {
            method: method.to_string(),
            pattern: MiddlewarePattern::parse(pattern)?,
            raw_pattern: pattern.to_string(),
            phase,
            handler,
        });
        Ok(())
    }

    pub fn route_count(&self) -> usize {
        self.routes.len()
    }

    /// `(method, pattern)` of every route, in registration order; a
    /// WebSocket endpoint's method is `WS`.
    pub fn routes(&self) -> impl Iterator<Item = (&str, &str)> {
        self.routes.iter().map(|r| match r.socket {
            true => ("WS", r.pattern.as_str()),
            false => (r.method.as_str(), r.pattern.as_str()),
        })
    }

    /// The pattern of the route `handler` serves (`/tasks/:id`): what the
    /// metrics name a request by, rather than its raw path.
    pub fn pattern(&self, handler: HandlerId) -> Option<&str> {
        if (handler as usize) < PATTERN_INDEX_MAX {
            let index = *self.by_handler.get(handler as usize)?;
            return self.routes.get(index as usize).map(|r| r.pattern.as_str());
        }
        self.routes
            .iter()
            .find(|r| r.handler == handler)
            .map(|r| r.pattern.as_str())
    }

    /// `(method, pattern, phase)` of every middleware, in registration order.
    pub fn middleware(&self) -> impl Iterator<Item = (&str, &str, Phase)> {
        self.middleware
            .iter()
            .map(|m| (m.method.as_str(), m.raw_pattern.as_str(), m.phase))
    }

    /// Resolve a request to the handlers it runs.
    pub fn plan(&self, method: &str, path: &str) -> Plan {
        let mut pre = Vec::new();
        let mut post = Vec::new();
        for m in &self.middleware {
            let method_ok =
                m.method == "*" || m.method == method || (method == "HEAD" && m.method == "GET");
            if method_ok && m.pattern.matches(path) {
                match m.phase {
                    Phase::Pre => pre.push(m.handler),
                    Phase::Post => post.push(m.handler),
                }
            }
        }
        Plan {
            target: self.find(method, path),
            pre,
            post,
        }
    }

    fn find(&self, method: &str, path: &str) -> Target {
        let key = trim(path);
        let count = key.bytes().filter(|&b| b == b'/').count() + 1;
        let literal = match self.literal_counts & 1 << count.min(63) {
            0 => &[][..],
            _ => self.literal.get(key).map_or(&[][..], |v| &v[..]),
        };
        let with_params = self.with_params.get(count).map_or(&[][..], |v| &v[..]);
        // Split only when a route with params could match.
        let parts: SmallVec<[&str; 8]> = match with_params.is_empty() {
            true => SmallVec::new(),
            false => split(key),
        };
        let (mut l, mut p) = (0, 0);
        let mut allowed: Vec<String> = Vec::new();
        let mut head_fallback = None;
        loop {
            // The next candidate in registration order: the two lists merged.
            let route = match (literal.get(l), with_params.get(p)) {
                (Some(&a), Some(&b)) if a < b => {
                    l += 1;
                    &self.routes[a as usize]
                }
                (_, Some(&b)) => {
                    p += 1;
                    let route = &self.routes[b as usize];
                    if !literals_match(&route.segments, &parts) {
                        continue;
                    }
                    route
                }
                (Some(&a), None) => {
                    l += 1;
                    &self.routes[a as usize]
                }
                (None, None) => break,
            };
            if route.method == method {
                return route.target(&parts);
            }
            if method == "HEAD" && route.method == "GET" && head_fallback.is_none() {
                head_fallback = Some(route.target(&parts));
            }
            if !allowed.contains(&route.method) {
                allowed.push(route.method.clone());
            }
        }
        match head_fallback {
            Some(t) => t,
            None if !allowed.is_empty() => Target::MethodNotAllowed(allowed),
            None => Target::NotFound,
        }
    }
}

impl Route {
    /// What a request for this route, its path split into `parts`, resolves to.
    fn target(&self, parts: &[&str]) -> Target {
        let (handler, params) = (self.handler, captures(&self.segments, parts));
        match self.socket {
            false => Target::Route { handler, params },
            true => Target::Socket { handler, params },
        }
    }
}

/// `key.split('/')`, by a plain byte loop: `str::split`'s searcher costs
/// ~100 instructions a part on a short path.
fn split(key: &str) -> SmallVec<[&str; 8]> {
    let mut parts = SmallVec::new();
    let mut start = 0;
    for (i, b) in key.bytes().enumerate() {
        if b == b'/' {
            parts.push(&key[start..i]);
            start = i + 1;
        }
    }
    parts.push(&key[start..]);
    parts
}

/// Whether the path parts fit the pattern: literals equal, params non-empty.
fn literals_match(segments: &[Segment], parts: &[&str]) -> bool {
    segments.iter().zip(parts).all(|(seg, part)| match seg {
        Segment::Literal(lit) => lit == part,
        Segment::Param(_) => !part.is_empty(),
    })
}

/// Percent-decoded `:param` values of a matching path, in pattern order.
fn captures(segments: &[Segment], parts: &[&str]) -> Params {
    segments
        .iter()
        .zip(parts)
        .filter_map(|(seg, part)| match seg {
            Segment::Param(name) => Some((name.clone(), percent_decode(part, false))),
            Segment::Literal(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> RouteTable {
        let mut t = RouteTable::new();
        t.add_route("GET", "/", 0).unwrap();
        t.add_route("GET", "/tasks", 1).unwrap();
        t.add_route("POST", "/tasks", 2).unwrap();
        t.add_route("GET", "/tasks/:id", 3).unwrap();
        t.add_route("GET", "/tasks/:id", 4).unwrap();
        t.add_route("DELETE", "/a/:x/b/:y", 5).unwrap();
        t
    }

    fn route(t: &Target) -> (HandlerId, Vec<(String, String)>) {
        match t {
            Target::Route { handler, params } => (
                *handler,
                params
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect(),
            ),
            other => panic!("expected a route, got {other:?}"),
        }
    }

    #[test]
    fn a_handlers_pattern_is_its_first_routes() {
        let mut t = table();
        t.add_route("PUT", "/tasks/:id", 1).unwrap();
        t.add_socket("/ws", 70_000).unwrap();
        assert_eq!(t.pattern(0), Some("/"));
        assert_eq!(t.pattern(1), Some("/tasks"));
        assert_eq!(t.pattern(4), Some("/tasks/:id"));
        assert_eq!(t.pattern(5), Some("/a/:x/b/:y"));
        assert_eq!(t.pattern(6), None);
        assert_eq!(t.pattern(70_000), Some("/ws"));
        assert_eq!(t.pattern(70_001), None);
    }

    #[test]
    fn a_socket_route_is_a_get_route_that_resolves_to_its_endpoint() {
        let mut t = RouteTable::new();
        t.add_socket("/rooms/:room", 0).unwrap();
        t.add_route("POST", "/rooms/:room", 1).unwrap();
        match t.plan("GET", "/rooms/a").target {
            Target::Socket { handler, params } => {
                assert_eq!(handler, 0);
                assert_eq!(&*params[0].0, "room");
                assert_eq!(params[0].1, "a");
            }
            other => panic!("expected the endpoint, got {other:?}"),
        }
        assert_eq!(route(&t.plan("POST", "/rooms/a").target).0, 1);
        assert_eq!(
            t.plan("PUT", "/rooms/a").target,
            Target::MethodNotAllowed(vec!["GET".into(), "POST".into()])
        );
        let listed: Vec<_> = t.routes().collect();
        assert_eq!(listed, [("WS", "/rooms/:room"), ("POST", "/rooms/:room")]);
        assert!(t.add_socket("chat", 2).is_err());
    }

    #[test]
    fn first_registered_route_wins_and_params_are_captured() {
        let t = table();
        assert_eq!(route(&t.plan("GET", "/").target).0, 0);
        assert_eq!(
            route(&t.plan("GET", "/tasks/42").target),
            (3, vec![("id".into(), "42".into())])
        );
        assert_eq!(
            route(&t.plan("DELETE", "/a/1/b/two").target).1,
            vec![("x".into(), "1".into()), ("y".into(), "two".into())]
        );
    }

    #[test]
    fn literal_and_param_routes_keep_registration_order() {
        let mut t = RouteTable::new();
        t.add_route("GET", "/users/:id", 0).unwrap();
        t.add_route("GET", "/users/me", 1).unwrap();
        t.add_route("POST", "/users/me", 2).unwrap();
        t.add_route("GET", "/posts/latest", 3).unwrap();
        t.add_route("GET", "/posts/:id", 4).unwrap();
        t.add_route("PUT", "/posts/:id", 5).unwrap();
        assert_eq!(route(&t.plan("GET", "/users/me").target).0, 0);
        assert_eq!(route(&t.plan("POST", "/users/me").target).0, 2);
        assert_eq!(route(&t.plan("GET", "/posts/latest").target).0, 3);
        assert_eq!(route(&t.plan("PUT", "/posts/latest").target).0, 5);
        assert_eq!(
            route(&t.plan("GET", "/posts/7").target),
            (4, vec![("id".into(), "7".into())])
        );
        let allowed =
            |m: &[&str]| Target::MethodNotAllowed(m.iter().map(|s| s.to_string()).collect());
        assert_eq!(
            t.plan("DELETE", "/users/me").target,
            allowed(&["GET", "POST"])
        );
        assert_eq!(
            t.plan("DELETE", "/posts/latest").target,
            allowed(&["GET", "PUT"])
        );
        assert_eq!(t.plan("GET", "/users").target, Target::NotFound);
        assert_eq!(t.plan("GET", "/users/").target, Target::NotFound);
    }

    #[test]
    fn params_are_percent_decoded() {
        let t = table();
        assert_eq!(
            route(&t.plan("GET", "/tasks/a%20b").target).1,
            vec![("id".into(), "a b".into())]
        );
    }

    #[test]
    fn one_trailing_slash_is_tolerated() {
        let t = table();
        assert_eq!(route(&t.plan("GET", "/tasks/").target).0, 1);
        assert_eq!(t.plan("GET", "/tasks//").target, Target::NotFound);
    }

    #[test]
    fn not_found_and_method_not_allowed() {
        let t = table();
        assert_eq!(t.plan("GET", "/nope").target, Target::NotFound);
        let allowed = Target::MethodNotAllowed(vec!["GET".into(), "POST".into()]);
        assert_eq!(t.plan("PUT", "/tasks").target, allowed);
        assert_eq!(t.plan("get", "/tasks").target, allowed);
        assert_eq!(t.plan("GET", "/tasks/1/x").target, Target::NotFound);
        assert_eq!(t.plan("GET", "/Tasks").target, Target::NotFound);
    }

    #[test]
    fn head_falls_back_to_get() {
        let t = table();
        assert_eq!(route(&t.plan("HEAD", "/tasks").target).0, 1);
        assert_eq!(
            t.plan("HEAD", "/a/1/b/2").target,
            Target::MethodNotAllowed(vec!["DELETE".into()])
        );
    }

    #[test]
    fn head_prefers_an_explicit_head_route() {
        let mut t = RouteTable::new();
        t.add_route("GET", "/x", 0).unwrap();
        t.add_route("HEAD", "/x", 1).unwrap();
        assert_eq!(route(&t.plan("HEAD", "/x").target).0, 1);
    }

    #[test]
    fn middleware_patterns() {
        let all = MiddlewarePattern::parse("/*").unwrap();
        let api = MiddlewarePattern::parse("/api/*").unwrap();
        let exact = MiddlewarePattern::parse("/health").unwrap();
        assert!(all.matches("/") && all.matches("/x/y"));
        assert!(api.matches("/api") && api.matches("/api/") && api.matches("/api/items"));
        assert!(!api.matches("/apix") && !api.matches("/"));
        assert!(exact.matches("/health") && !exact.matches("/health/x"));
        assert!(MiddlewarePattern::parse("api").is_err());
    }

    #[test]
    fn middleware_order_method_and_phase() {
        let mut t = table();
        t.add_middleware(Phase::Pre, "*", "/*", 10).unwrap();
        t.add_middleware(Phase::Post, "POST", "/tasks", 11).unwrap();
        t.add_middleware(Phase::Pre, "GET", "/tasks/*", 12).unwrap();
        t.add_middleware(Phase::Pre, "*", "/other", 13).unwrap();
        let p = t.plan("GET", "/tasks/1");
        assert_eq!((p.pre, p.post), (vec![10, 12], vec![]));
        let p = t.plan("POST", "/tasks");
        assert_eq!((p.pre, p.post), (vec![10], vec![11]));
        // GET middleware also runs for HEAD; middleware runs for 404s too.
        assert_eq!(t.plan("HEAD", "/tasks").pre, vec![10, 12]);
        let p = t.plan("GET", "/missing");
        assert_eq!((p.target, p.pre), (Target::NotFound, vec![10]));
    }

    #[test]
    fn bad_registrations_are_rejected() {
        let mut t = RouteTable::new();
        assert!(t.add_route("GET", "x", 0).is_err());
        assert!(t.add_route("", "/x", 0).is_err());
        assert!(t.add_middleware(Phase::Pre, "G T", "/x", 0).is_err());
    }
}
