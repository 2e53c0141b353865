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
    /// PostgreSQL routes (`/pg/read`, `/pg/write`): Cove's pg app and the
    /// PostgreSQL peers, all on the one server the harness starts.
    Pg,
    /// `GET /redis`: one GET and one INCR on the harness's Redis server.
    Redis,
    /// `/hello` and `/json` over HTTPS (HTTP/1.1 over TLS): the server gets
    /// the run's certificate and key.
    Tls,
    /// `/hello` and `/json` over HTTP/2 on TLS (ALPN h2).
    H2,
    /// `/hello` and `/json` over HTTP/2 on plain TCP (h2c, prior knowledge).
    H2c,
    /// WebSocket `/echo` and `/broadcast` (and `GET /hello`, the readiness
    /// check).
    Ws,
}

impl Group {
    pub fn parse(s: &str) -> Option<Group> {
        match s {
            "http" => Some(Group::Http),
            "sqlite" => Some(Group::Sqlite),
            "templates" => Some(Group::Templates),
            "pg" => Some(Group::Pg),
            "redis" => Some(Group::Redis),
            "tls" => Some(Group::Tls),
            "h2" => Some(Group::H2),
            "h2c" => Some(Group::H2c),
            "ws" => Some(Group::Ws),
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
    /// One-row SELECT by primary key and one INSERT on a local PostgreSQL.
    Pg,
    /// One GET + one INCR on a local Redis.
    Redis,
    /// `/hello` and `/json` over HTTPS (HTTP/1.1 on TLS), wrk over https.
    Tls,
    /// `/hello` and `/json` over HTTP/2 (TLS with ALPN h2, or h2c), h2load.
    H2,
    /// WebSocket echo round trips and broadcast deliveries, cove-bench's
    /// own client (wsclient.rs).
    Ws,
}

pub const TABLES: [Table; 12] = [
    Table::Hello,
    Table::Routing,
    Table::HullHttp,
    Table::Sqlite,
    Table::Sweep,
    Table::Multi,
    Table::Templates,
    Table::Pg,
    Table::Redis,
    Table::Tls,
    Table::H2,
    Table::Ws,
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
            Table::Pg => "pg",
            Table::Redis => "redis",
            Table::Tls => "tls",
            Table::H2 => "h2",
            Table::Ws => "ws",
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
            Table::Pg => "PostgreSQL: one-row SELECT and INSERT (one local server shared by all)",
            Table::Redis => "Redis: GET + INCR (one local server shared by all)",
            Table::Tls => "HTTPS: plaintext and JSON over TLS (one worker each)",
            Table::H2 => "HTTP/2: plaintext and JSON, h2load (one worker each)",
            Table::Ws => "WebSocket: echo and broadcast (one worker each)",
        }
    }

    /// The route groups whose workloads the table runs (workload names are
    /// unique within a group: the `pg` table has its own `read` and `write`).
    pub fn groups(self) -> &'static [Group] {
        match self {
            Table::Hello | Table::Routing | Table::Sweep | Table::Multi => &[Group::Http],
            Table::HullHttp => &[Group::Http, Group::Sqlite],
            Table::Sqlite => &[Group::Sqlite],
            Table::Templates => &[Group::Templates],
            Table::Pg => &[Group::Pg],
            Table::Redis => &[Group::Redis],
            Table::Tls => &[Group::Tls],
            Table::H2 => &[Group::H2, Group::H2c],
            Table::Ws => &[Group::Ws],
        }
    }

    /// Tables of the `http` routes over another protocol: their servers
    /// are those of `groups()`, their workloads the `http` group's.
    pub fn is_protocol(self) -> bool {
        matches!(self, Table::Tls | Table::H2)
    }

    /// Tables whose rows also show the database server's CPU per request.
    pub fn has_database_server(self) -> bool {
        matches!(self, Table::Pg | Table::Redis)
    }

    /// The workloads of the table.
    pub fn workloads(self) -> Vec<&'static Workload> {
        let names: &[&str] = match self {
            Table::Hello | Table::Tls | Table::H2 => &["hello", "json"],
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
            Table::Pg => &["read", "write"],
            Table::Redis => &["get-incr"],
            Table::Ws => &["echo", "broadcast"],
        };
        let groups = if self.is_protocol() {
            &[Group::Http]
        } else {
            self.groups()
        };
        names
            .iter()
            .filter_map(|n| {
                WORKLOADS
                    .iter()
                    .find(|w| w.name == *n && groups.contains(&w.group))
            })
            .collect()
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
    /// `path` ends with `=`: each measured request appends a random id in
    /// 1..=ids (a wrk script), the check appends [`CHECK_ID`].
    pub ids: Option<u32>,
    /// Connections of this workload whatever `--connections` says (the
    /// broadcast's subscribers).
    pub connections: Option<u32>,
}

impl Workload {
    /// `GET /hello`, `POST /echo`, or the routing mix's paths.
    pub fn label(&self) -> String {
        if self.group == Group::Ws {
            format!("WebSocket {}", self.path)
        } else if let Some(n) = self.ids {
            format!("{} {}{{1..{n}}}", self.method, self.path)
        } else if self.rotate.is_empty() {
            format!("{} {}", self.method, self.path)
        } else {
            let paths: Vec<&str> = self.rotate.iter().map(|(p, _, _)| *p).collect();
            format!("GET {}", paths.join(", "))
        }
    }

    /// The path the harness checks before measuring.
    pub fn check_path(&self) -> String {
        match self.ids {
            Some(_) => format!("{}{CHECK_ID}", self.path),
            None => self.path.to_string(),
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

/// The id the check of a random-id workload asks for.
pub const CHECK_ID: u32 = 42;

/// Rows in `bench_items`, the `pg` table's read target.
pub const PG_ITEMS: u32 = 10_000;

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
        ids: None,
        connections: None,
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
    // The pg and redis tables (bench/apps/pg and the peers' pg/redis groups),
    // after the SQLite workloads so that `workload("read")` stays theirs.
    Workload {
        ids: Some(PG_ITEMS),
        ..get("read", "/pg/read?id=", Group::Pg, r#""name":"item-42""#)
    },
    post("write", "/pg/write", Group::Pg, r#"{"id":"#),
    get("get-incr", "/redis", Group::Redis, r#""greeting":"hello""#),
    // The ws table (wsload.rs checks and drives them; `expect` is unused).
    get("echo", "/echo", Group::Ws, ""),
    Workload {
        connections: Some(crate::wsload::BROADCAST_CONNECTIONS),
        ..get("broadcast", "/broadcast", Group::Ws, "")
    },
];

/// The first workload of that name (the HTTP and SQLite ones come first).
pub fn workload(name: &str) -> Option<&'static Workload> {
    WORKLOADS.iter().find(|w| w.name == name)
}

/// The workload of that name in `group`.
pub fn workload_in(group: Group, name: &str) -> Option<&'static Workload> {
    WORKLOADS
        .iter()
        .find(|w| w.group == group && w.name == name)
}

/// The wrk script a workload needs: a POST body, the routing rotation or
/// random ids (a fixed seed, so every server gets the same sequence).
pub fn wrk_script(w: &Workload) -> Option<String> {
    if let Some(n) = w.ids {
        return Some(format!(
            "math.randomseed(36)\nlocal prefix = {:?}\nrequest = function()\n  return wrk.format(\"{}\", prefix .. math.random(1, {n}))\nend\n",
            w.path, w.method
        ));
    }
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
        let mut names: Vec<(Group, &str)> = WORKLOADS.iter().map(|w| (w.group, w.name)).collect();
        names.sort_by_key(|&(g, n)| (format!("{g:?}"), n));
        names.dedup();
        assert_eq!(
            names.len(),
            WORKLOADS.len(),
            "workload names are unique within a group"
        );
    }

    #[test]
    fn database_tables_have_their_own_read_and_write() {
        let pg = Table::Pg.workloads();
        assert_eq!(
            pg.iter().map(|w| w.name).collect::<Vec<_>>(),
            ["read", "write"]
        );
        assert!(pg.iter().all(|w| w.group == Group::Pg));
        // The SQLite table's `read` is still the one `workload` finds.
        assert_eq!(workload("read").unwrap().group, Group::Sqlite);
        assert_eq!(workload_in(Group::Pg, "read").unwrap().path, "/pg/read?id=");
        assert_eq!(
            Table::Sqlite.workloads()[2].path,
            "/read",
            "{:?}",
            Table::Sqlite.workloads()
        );
        let redis = Table::Redis.workloads();
        assert_eq!(redis.len(), 1);
        assert_eq!((redis[0].name, redis[0].path), ("get-incr", "/redis"));
        assert!(Table::Pg.has_database_server() && Table::Redis.has_database_server());
        assert!(!Table::Sqlite.has_database_server());
        assert_eq!(Group::parse("pg"), Some(Group::Pg));
        assert_eq!(Group::parse("redis"), Some(Group::Redis));
    }

    #[test]
    fn random_ids_for_the_pg_read() {
        let read = workload_in(Group::Pg, "read").unwrap();
        assert_eq!(read.check_path(), "/pg/read?id=42");
        assert_eq!(read.label(), "GET /pg/read?id={1..10000}");
        let script = wrk_script(read).unwrap();
        assert!(
            script.contains(r#"local prefix = "/pg/read?id=""#),
            "{script}"
        );
        assert!(script.contains("math.random(1, 10000)"), "{script}");
        assert!(script.contains(r#"wrk.format("GET", prefix"#), "{script}");
        let write = workload_in(Group::Pg, "write").unwrap();
        assert_eq!(write.check_path(), "/pg/write");
        assert!(wrk_script(write).unwrap().contains("wrk.method = \"POST\""));
        assert_eq!(wrk_script(workload("get-incr").unwrap()), None);
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
    fn protocol_tables_run_the_http_routes() {
        for t in [Table::Tls, Table::H2] {
            assert!(t.is_protocol());
            let ws = t.workloads();
            assert_eq!(
                ws.iter().map(|w| (w.name, w.group)).collect::<Vec<_>>(),
                [("hello", Group::Http), ("json", Group::Http)]
            );
        }
        assert_eq!(Table::Tls.groups(), [Group::Tls]);
        assert_eq!(Table::H2.groups(), [Group::H2, Group::H2c]);
        assert!(!Table::Hello.is_protocol());
        assert_eq!(Group::parse("h2c"), Some(Group::H2c));
        assert_eq!((Table::Tls.key(), Table::H2.key()), ("tls", "h2"));
    }

    #[test]
    fn the_ws_table() {
        let ws = Table::Ws.workloads();
        assert_eq!(
            ws.iter().map(|w| (w.name, w.path)).collect::<Vec<_>>(),
            [("echo", "/echo"), ("broadcast", "/broadcast")]
        );
        assert!(ws.iter().all(|w| w.group == Group::Ws));
        assert_eq!(ws[0].connections, None);
        assert_eq!(ws[1].connections, Some(1000));
        assert_eq!(ws[1].label(), "WebSocket /broadcast");
        // Hull's POST /echo is still the one `workload` finds.
        assert_eq!(workload("echo").unwrap().group, Group::Http);
        assert_eq!(Group::parse("ws"), Some(Group::Ws));
        assert!(!Table::Ws.is_protocol() && !Table::Ws.has_database_server());
        assert_eq!(wrk_script(ws[0]), None);
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
