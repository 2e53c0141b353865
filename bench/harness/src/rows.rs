//! The rows of the result table: which server, request and targets.

/// Which server process answers a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Srv {
    /// `cove baseline`: raw hyper, no script.
    Baseline,
    /// `cove … bench/apps/hello/app.lua`.
    Lua,
    /// The same app with `--no-group-commit` (each write commits alone).
    LuaNoGroup,
}

/// One line of the result table.
#[derive(Debug)]
pub struct Row {
    pub name: &'static str,
    pub route: &'static str,
    pub srv: Srv,
    pub method: &'static str,
    pub path: &'static str,
    pub body: Option<&'static str>,
    /// Text the response body must contain before measuring.
    pub expect: &'static str,
    /// Highest acceptable CPU ratio vs the baseline.
    pub target: Option<f64>,
    /// The ratio Hull's own numbers show for the same kind of route.
    pub hull_ref: &'static str,
}

pub const ECHO_BODY: &str = r#"{"message":"hello","value":42}"#;

pub const ROWS: &[Row] = &[
    Row {
        name: "baseline",
        route: "baseline: raw hyper, no script",
        srv: Srv::Baseline,
        method: "GET",
        path: "/",
        body: None,
        expect: r#""status":"ok""#,
        target: None,
        hull_ref: "—",
    },
    Row {
        name: "health",
        route: "Lua: JSON",
        srv: Srv::Lua,
        method: "GET",
        path: "/health",
        body: None,
        expect: r#""status":"ok""#,
        target: Some(1.15),
        hull_ref: "1.45×",
    },
    Row {
        name: "greet",
        route: "Lua: route param + JSON",
        srv: Srv::Lua,
        method: "GET",
        path: "/greet/World",
        body: None,
        expect: "Hello, World!",
        target: Some(1.15),
        hull_ref: "1.45×",
    },
    Row {
        name: "echo",
        route: "Lua: request body + JSON",
        srv: Srv::Lua,
        method: "POST",
        path: "/echo",
        body: Some(ECHO_BODY),
        expect: "hello",
        target: Some(1.15),
        hull_ref: "1.45×",
    },
    Row {
        name: "insert",
        route: "Lua: 1 SQLite INSERT + JSON",
        srv: Srv::Lua,
        method: "GET",
        path: "/",
        body: None,
        expect: r#""message""#,
        target: Some(2.0),
        hull_ref: "5×",
    },
    Row {
        name: "insert-nogroup",
        route: "Lua: 1 SQLite INSERT + JSON, `--no-group-commit`",
        srv: Srv::LuaNoGroup,
        method: "GET",
        path: "/",
        body: None,
        expect: r#""message""#,
        target: None,
        hull_ref: "5×",
    },
    Row {
        name: "select20",
        route: "Lua: SELECT 20 rows + JSON",
        srv: Srv::Lua,
        method: "GET",
        path: "/visits",
        body: None,
        expect: r#""path""#,
        target: Some(2.0),
        hull_ref: "4.5–9×",
    },
];

/// Rows selected by `--only` (substring of the name, label or path).
pub fn selected(only: Option<&str>) -> Vec<&'static Row> {
    ROWS.iter()
        .filter(|r| match only {
            Some(o) => [r.name, r.route, r.path].iter().any(|s| s.contains(o)),
            None => true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_filters_by_substring() {
        let names = |o| selected(o).iter().map(|r| r.name).collect::<Vec<_>>();
        assert_eq!(names(None).len(), 7);
        assert_eq!(names(Some("gre")), ["greet"]);
        assert_eq!(names(Some("/visits")), ["select20"]);
        assert!(names(Some("nothing")).is_empty());
    }
}
