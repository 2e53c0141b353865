//! N processes, one deployment: two `cove` processes on one PostgreSQL and
//! one Redis, behind nginx (round robin), in both runtimes. What an app
//! keeps in the stdlib must hold for the deployment, not per process.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::json;

use crate::util::servers::Receiver;
use crate::util::{both, fixture, Conn, Lang, Response, Server};
use cove_testsvc::{Nginx, Postgres, Redis};

both!(one_deployment_behind_nginx);

struct Deployment {
    _pg: Postgres,
    _redis: Redis,
    procs: Vec<Server>,
    lb: Nginx,
}

impl Deployment {
    /// Two processes started at the same moment, and nginx in front.
    fn start(lang: Lang) -> Option<Deployment> {
        let pg = Postgres::start()?;
        let redis = Redis::start()?;
        let app: PathBuf = fixture("scale").with_extension(lang.ext());
        let starts: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|name| {
                let (app, db, kv) = (app.clone(), pg.url(), redis.url());
                thread::spawn(move || {
                    let extra = ["--workers", "1", "--kv", kv.as_str()];
                    Server::try_start_on_env(&app, &db, &extra, &[("PROC", name)])
                })
            })
            .collect();
        let procs: Vec<Server> = starts
            .into_iter()
            .map(|t| t.join().unwrap().unwrap_or_else(|log| panic!("{log}")))
            .collect();
        let lb = Nginx::start(&[procs[0].port, procs[1].port])?;
        Some(Deployment {
            _pg: pg,
            _redis: redis,
            procs,
            lb,
        })
    }

    fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Response {
        Conn::open(self.lb.port()).request(method, path, headers, Some(body.as_bytes()))
    }

    fn get(&self, path: &str) -> Response {
        Conn::open(self.lb.port()).request("GET", path, &[], None)
    }

    fn logs(&self) -> String {
        self.procs
            .iter()
            .map(|p| p.log())
            .collect::<Vec<_>>()
            .join("\n---\n")
    }
}

fn one_deployment_behind_nginx(lang: Lang) {
    let Some(d) = Deployment::start(lang) else {
        return;
    };

    // Both started at once; the migration (whose seed row would clash) ran once.
    let applied = d.logs().matches("migration applied: 001_init.sql").count();
    assert_eq!(applied, 1, "{}", d.logs());
    assert_eq!(d.get("/count/starts").json(), json!({"n": 1}));

    // A session made through one process is valid on the other.
    let sid = d.request("POST", "/login", &[], "ann").json()["sid"]
        .as_str()
        .expect("a session id")
        .to_string();
    let mut seen = BTreeSet::new();
    for _ in 0..4 {
        let r = d.get(&format!("/me?sid={sid}"));
        assert_eq!(
            (r.status, r.json()),
            (200, json!({"user": "ann"})),
            "{}",
            d.logs()
        );
        seen.insert(r.header("x-proc").unwrap_or("?").to_string());
    }
    assert_eq!(
        seen.len(),
        2,
        "nginx spread the requests over both: {seen:?}"
    );

    // A limit of 5 counts once for the deployment.
    let statuses: Vec<u16> = (0..10).map(|_| d.get("/limited").status).collect();
    let passed = statuses.iter().filter(|&&s| s == 200).count();
    assert_eq!((passed, statuses.len() - passed), (5, 5), "{statuses:?}");

    // A retried POST with the same Idempotency-Key runs once, on either process.
    let key = [
        ("Idempotency-Key", "order-1"),
        ("Content-Type", "text/plain"),
    ];
    let first = d.request("POST", "/orders", &key, "book");
    let again = d.request("POST", "/orders", &key, "book");
    assert_eq!(first.status, 201, "{}", d.logs());
    assert_eq!((again.status, again.json()), (201, first.json()));
    assert_eq!(d.get("/count/orders").json(), json!({"n": 1}));

    // Both processes flush at once; every message is delivered exactly once.
    let receiver = Receiver::start(&[200]);
    for i in 0..20 {
        let m = json!({"to": receiver.url("/hook"), "payload": format!("m{i}")});
        assert_eq!(
            d.request("POST", "/enqueue", &[], &m.to_string()).status,
            200
        );
    }
    let ports: Vec<u16> = d.procs.iter().map(|p| p.port).collect();
    let flushes: Vec<_> = ports
        .iter()
        .flat_map(|&port| (0..3).map(move |_| port))
        .map(|port| thread::spawn(move || Conn::open(port).request("POST", "/flush", &[], None)))
        .collect();
    for f in flushes {
        assert_eq!(f.join().unwrap().status, 200);
    }
    let bodies: Vec<String> = receiver.received().into_iter().map(|r| r.body).collect();
    let distinct: BTreeSet<&String> = bodies.iter().collect();
    assert_eq!((bodies.len(), distinct.len()), (20, 20), "{bodies:?}");

    killing_one_process_loses_no_acknowledged_write(d);
}

/// Writers go on through nginx while one process is killed with SIGKILL:
/// every write that was answered 201 is in the database, and the other
/// process keeps serving.
fn killing_one_process_loses_no_acknowledged_write(mut d: Deployment) {
    let acked = Arc::new(Mutex::new(Vec::new()));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (port, acked) = (d.lb.port(), acked.clone());
            thread::spawn(move || {
                for i in 0..60 {
                    let n = w * 1000 + i;
                    let r = Conn::try_open(port).and_then(|mut c| {
                        c.try_request("POST", "/write", &[], Some(n.to_string().as_bytes()))
                    });
                    if matches!(r, Ok(ref r) if r.status == 201) {
                        acked.lock().unwrap().push(n);
                    }
                }
            })
        })
        .collect();
    thread::sleep(Duration::from_millis(150));
    d.procs[0].signal(libc::SIGKILL);
    d.procs[0].wait_exit();
    for w in writers {
        w.join().unwrap();
    }
    let stored: BTreeSet<i64> = d.procs[1]
        .get("/writes")
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["n"].as_i64().unwrap())
        .collect();
    let acked = acked.lock().unwrap().clone();
    assert!(!acked.is_empty(), "no write was acknowledged");
    let lost: Vec<_> = acked
        .iter()
        .filter(|n| !stored.contains(&(**n as i64)))
        .collect();
    assert!(lost.is_empty(), "acknowledged writes lost: {lost:?}");
    for _ in 0..4 {
        assert_eq!(
            d.get("/count/starts").status,
            200,
            "the other process keeps serving"
        );
    }
}
