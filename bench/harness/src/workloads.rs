//! What is measured: the routes of bench/peers/README.md, grouped into the
//! report's tables.

/// Which routes a server implements (`groups` in peer.json).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    /// Text, JSON, routing and Hull's non-database routes: every server.
    Http,
    /// The SQLite routes: Cove and the SQLite peers.
    Sqlite,
    /// Hull's template table: Cove's template app only (no peer has it).
    Templates,
}

impl Group {
    pub fn parse(s: &str) -> Option<Group> {
        match s {
            "http" => Some(Group::Http),
            "sqlite" => Some(Group::Sqlite),
            "templates" => Some(Group::Templates),
            _ => None,
        }
    }
}

/// The report's tables, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    /// Plaintext `/hello` and JSON `/json`, one worker per server.
    Hello,
    /// The toy benchmark's five routes, requested in turn.
    Routing,
    /// Hull's HTTP table: its hello example's routes.
    HullHttp,
    /// Hull's SQLite table (bench_db) and the SQLite peers.
    Sqlite,
    /// `/hello` at C = 1, 10, 50, 200.
    Sweep,
    /// `/json` with two workers, for servers that have a multi-worker mode.
    Multi,
    /// Hull's template table (bench/apps/templates), Cove only.
    Templates,
}

pub const TABLES: [Table; 7] = [
    Table::Hello,
    Table::Routing,
    Table::HullHttp,
    Table::Sqlite,
    Table::Sweep,
    Table::Multi,
    Table::Templates,
];

impl Table {
    pub fn key(self) -> &'static str {
        match self {
            Table::Hello => "hello",
            Table::Routing => "routing",
            Table::HullHttp => "hull-http",
            Table::Sqlite => "sqlite",
            Table::Sweep => "sweep",
            Table::Multi => "multi",
            Table::Templates => "templates",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Table::Hello => "Plaintext and JSON (one worker each)",
            Table::Routing => "Routing: the toy benchmark's five routes (one worker each)",
            Table::HullHttp => "Hull's HTTP table (one worker each)",
            Table::Sqlite => "SQLite workloads (one worker each)",
            Table::Sweep => "Concurrency sweep on /hello (one worker each)",
            Table::Multi => "Multi-worker /json (two workers or processes)",
            Table::Templates => "Hull's template table (Cove only, one worker each)",
        }
    }

    /// The workloads of the table.
    pub fn workloads(self) -> Vec<&'static Workload> {
        let names: &[&str] = match self {
            Table::Hello => &["hello", "json"],
            Table::Routing => &["routes"],
            Table::HullHttp => &[
                "health",
                "greet",
                "echo",
                "greet-post",
                "insert",
                "select20",
            ],
            Table::Sqlite => &["write", "write-batch", "read", "mixed"],
            Table::Sweep => &["hello"],
            Table::Multi => &["json"],
            Table::Templates => &["tpl-health", "tpl-simple", "tpl-loop", "tpl-full"],
        };
        names.iter().filter_map(|n| workload(n)).collect()
    }

    /// The workload every other row of the table is also compared with,
    /// on the same server in the same round: the template routes against
    /// the template app's own `/health` (the issue's target is a ratio to it).
    pub fn reference(self) -> Option<&'static str> {
        match self {
            Table::Templates => Some("tpl-health"),
            _ => None,
        }
    }

    /// Connection counts the table runs each workload at (`None`: the default).
    pub fn connections(self) -> &'static [Option<u32>] {
        match self {
            Table::Sweep => &[Some(1), Some(10), Some(50), Some(200)],
            _ => &[None],
        }
    }
}

/// One kind of request, checked before it is measured.
#[derive(Debug, PartialEq)]
pub struct Workload {
    pub name: &'static str,
    pub method: &'static str,
    pub path: &'static str,
    pub body: Option<&'static str>,
    pub group: Group,
    /// Text the response must contain.
    pub expect: &'static str,
    /// Requested in turn instead of `path` (the routing mix):
    /// `(path, status, expected body text)`.
    pub rotate: &'static [(&'static str, u16, &'static str)],
    /// Database rows written + read per request, for rows/s.
    pub rows: Option<u32>,
    /// Compared with the baseline's text route rather than its JSON route.
    pub text: bool,
}

impl Workload {
    /// `GET /hello`, `POST /echo`, or the routing mix's paths.
    pub fn label(&self) -> String {
        if self.rotate.is_empty() {
            format!("{} {}", self.method, self.path)
        } else {
            let paths: Vec<&str> = self.rotate.iter().map(|(p, _, _)| *p).collect();
            format!("GET {}", paths.join(", "))
        }
    }

    /// Responses other than 2xx are expected (the routing mix's 404).
    pub fn expects_non_2xx(&self) -> bool {
        self.rotate
            .iter()
            .any(|&(_, s, _)| !(200..300).contains(&s))
    }
}

pub const POST_BODY: &str = r#"{"message":"hello","value":42}"#;

const fn get(
    name: &'static str,
    path: &'static str,
    group: Group,
    expect: &'static str,
) -> Workload {
    Workload {
        name,
        method: "GET",
        path,
        body: None,
        group,
        expect,
        rotate: &[],
        rows: None,
        text: false,
    }
}

const fn post(
    name: &'static str,
    path: &'static str,
    group: Group,
    expect: &'static str,
) -> Workload {
    Workload {
        method: "POST",
        body: Some(POST_BODY),
        ..get(name, path, group, expect)
    }
}

pub const WORKLOADS: &[Workload] = &[
    Workload {
        text: true,
        ..get("hello", "/hello", Group::Http, "Hello World!")
    },
    get("json", "/json", Group::Http, r#""message":"Hello, World!""#),
    Workload {
        text: true,
        rotate: &[
            ("/hey", 200, "hey"),
            ("/hell", 200, "hell"),
            ("/hello", 200, "Hello World!"),
            ("/about", 200, "about"),
            ("/missing", 404, ""),
        ],
        ..get("routes", "/hey", Group::Http, "hey")
    },
    get("health", "/health", Group::Http, r#""status":"ok""#),
    get(
        "greet",
        "/greet/World",
        Group::Http,
        r#""greeting":"Hello, World!""#,
    ),
    post("echo", "/echo", Group::Http, r#"\"value\":42"#),
    post(
        "greet-post",
        "/greet/World",
        Group::Http,
        r#""greeting":"Hello, World!""#,
    ),
    Workload {
        rows: Some(1),
        ..get("insert", "/", Group::Sqlite, r#""message":"Hello!""#)
    },
    Workload {
        rows: Some(20),
        ..get("select20", "/visits", Group::Sqlite, r#""path":"/""#)
    },
    Workload {
        rows: Some(1),
        ..post("write", "/write", Group::Sqlite, r#""inserted":1"#)
    },
    Workload {
        rows: Some(10),
        ..post(
            "write-batch",
            "/write-batch",
            Group::Sqlite,
            r#""inserted":10"#,
        )
    },
    Workload {
        rows: Some(20),
        ..get("read", "/read", Group::Sqlite, r#""kind":"#)
    },
    Workload {
        rows: Some(21),
        ..get("mixed", "/mixed", Group::Sqlite, r#""kind":"#)
    },
    // Hull's template table, served by bench/apps/templates.
    get(
        "tpl-health",
        "/health",
        Group::Templates,
        r#""status":"ok""#,
    ),
    get(
        "tpl-simple",
        "/simple",
        Group::Templates,
        "<p>Hello from a template</p>",
    ),
    get(
        "tpl-loop",
        "/loop",
        Group::Templates,
        r#"<li id="item-50">Item 50 <b>active</b></li>"#,
    ),
    // extends + include + loop + filters; an inactive row shows `upper`
    // and the else branch.
    get(
        "tpl-full",
        "/full",
        Group::Templates,
        r#"<li id="item-48">ITEM 48 <i>inactive</i></li>"#,
    ),
];

pub fn workload(name: &str) -> Option<&'static Workload> {
    WORKLOADS.iter().find(|w| w.name == name)
}

/// The wrk script a workload needs: a POST body or the routing rotation.
pub fn wrk_script(w: &Workload) -> Option<String> {
    if let Some(body) = w.body {
        return Some(format!(
            "wrk.method = \"{}\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.body = '{body}'\n",
            w.method
        ));
    }
    if w.rotate.is_empty() {
        return None;
    }
    let paths: Vec<String> = w.rotate.iter().map(|(p, _, _)| format!("{p:?}")).collect();
    Some(format!(
        "local paths = {{ {} }}\nlocal i = 0\nrequest = function()\n  i = i % #paths + 1\n  return wrk.format(\"GET\", paths[i])\nend\n",
        paths.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_has_its_workloads() {
        for t in TABLES {
            assert!(!t.workloads().is_empty(), "{t:?}");
        }
        let names = |t: Table| t.workloads().iter().map(|w| w.name).collect::<Vec<_>>();
        assert_eq!(names(Table::Hello), ["hello", "json"]);
        assert_eq!(
            names(Table::Sqlite),
            ["write", "write-batch", "read", "mixed"]
        );
        assert_eq!(Table::Sweep.connections().len(), 4);
        assert_eq!(
            names(Table::Templates),
            ["tpl-health", "tpl-simple", "tpl-loop", "tpl-full"]
        );
        assert_eq!(Table::Templates.reference(), Some("tpl-health"));
        assert_eq!(Table::Hello.reference(), None);
        let mut names: Vec<&str> = WORKLOADS.iter().map(|w| w.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), WORKLOADS.len(), "workload names are unique");
    }

    #[test]
    fn scripts_for_posts_and_rotation() {
        let echo = wrk_script(workload("echo").unwrap()).unwrap();
        assert!(echo.contains("wrk.method = \"POST\""));
        assert!(echo.contains(POST_BODY));
        let mix = wrk_script(workload("routes").unwrap()).unwrap();
        assert!(mix.contains(r#""/hey", "/hell", "/hello", "/about", "/missing""#));
        assert_eq!(wrk_script(workload("json").unwrap()), None);
    }

    #[test]
    fn labels_and_expectations() {
        assert_eq!(workload("echo").unwrap().label(), "POST /echo");
        assert!(workload("routes").unwrap().label().contains("/about"));
        assert!(workload("routes").unwrap().expects_non_2xx());
        assert!(!workload("json").unwrap().expects_non_2xx());
        assert_eq!(Group::parse("sqlite"), Some(Group::Sqlite));
        assert_eq!(Group::parse("templates"), Some(Group::Templates));
        assert_eq!(Group::parse("nope"), None);
    }
}
