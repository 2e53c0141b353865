use super::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;

/// A handler that only knows which app version it was built from, and
/// notes on `Disk` whether its group commit is paused.
struct Built(usize, Arc<Disk>);

impl Handler for Built {
    async fn handle(
        self: Rc<Self>,
        _req: hyper::Request<Incoming>,
        _peer: std::net::SocketAddr,
    ) -> HttpResponse {
        unreachable!("no requests in these tests")
    }

    fn pause_group_commit(&self, paused: bool) {
        self.1.paused.lock().unwrap().insert(self.0, paused);
    }
}

/// The "files on disk": the version a build sees, and whether worker 1's
/// build fails.
#[derive(Default)]
struct Disk {
    version: AtomicUsize,
    broken_on_worker_1: AtomicBool,
    /// Each version's group commit: paused or not (absent: never touched).
    paused: Mutex<std::collections::HashMap<usize, bool>>,
}

impl Disk {
    fn paused(&self, version: usize) -> Option<bool> {
        self.paused.lock().unwrap().get(&version).copied()
    }
}

/// Worker threads as the server runs them, each publishing the version its
/// current handler was built from.
struct Workers {
    seen: Arc<Vec<AtomicUsize>>,
    stop: Arc<AtomicBool>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl Workers {
    fn start(n: usize, reload: &Reload, disk: &Arc<Disk>) -> Workers {
        let disk = disk.clone();
        let factory = Arc::new(reloading(reload.clone(), move |worker| {
            if worker == 1 && disk.broken_on_worker_1.load(Ordering::SeqCst) {
                return Err("app.lua:3: unexpected symbol".to_string());
            }
            Ok(Built(disk.version.load(Ordering::SeqCst), disk.clone()))
        }));
        let seen: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..n)
            .map(|i| {
                let (factory, seen, stop) = (factory.clone(), seen.clone(), stop.clone());
                thread::spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap();
                    tokio::task::LocalSet::new().block_on(&rt, async move {
                        let handler = Rc::new(factory(i).unwrap());
                        handler.start();
                        while !stop.load(Ordering::SeqCst) {
                            seen[i].store(handler.current().0, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_millis(1)).await;
                        }
                    });
                })
            })
            .collect();
        Workers {
            seen,
            stop,
            threads,
        }
    }

    /// Wait until every worker serves `version`.
    fn all_serve(&self, version: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self
            .seen
            .iter()
            .any(|v| v.load(Ordering::SeqCst) != version)
        {
            assert!(Instant::now() < deadline, "workers serve {:?}", self.seen);
            thread::sleep(Duration::from_millis(1));
        }
    }

    fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads {
            t.join().unwrap();
        }
    }
}

#[test]
fn every_worker_switches_or_none_does() {
    let disk = Arc::new(Disk::default());
    disk.version.store(1, Ordering::SeqCst);
    let reload = Reload::new(2);
    let workers = Workers::start(2, &reload, &disk);
    workers.all_serve(1);

    disk.version.store(2, Ordering::SeqCst);
    reload.reload().unwrap();
    workers.all_serve(2);

    // Worker 1 cannot build version 3: worker 0 must not switch either.
    disk.version.store(3, Ordering::SeqCst);
    disk.broken_on_worker_1.store(true, Ordering::SeqCst);
    let err = reload.reload().unwrap_err();
    assert_eq!(err, "app.lua:3: unexpected symbol");
    thread::sleep(Duration::from_millis(50));
    workers.all_serve(2);

    disk.broken_on_worker_1.store(false, Ordering::SeqCst);
    disk.version.store(4, Ordering::SeqCst);
    reload.reload().unwrap();
    workers.all_serve(4);

    workers.stop();
    assert_eq!(reload.reload().unwrap_err(), "the server is stopping");
}

#[test]
fn a_stopped_server_is_not_waited_for() {
    // Two workers expected, none ever started (the server failed to bind).
    let reload = Reload::new(2);
    let waiting = {
        let reload = reload.clone();
        thread::spawn(move || reload.reload())
    };
    thread::sleep(Duration::from_millis(20));
    reload.stop();
    assert_eq!(
        waiting.join().unwrap().unwrap_err(),
        "the server is stopping"
    );
}

#[test]
fn group_commit_is_paused_while_two_versions_share_a_worker() {
    let disk = Arc::new(Disk::default());
    disk.version.store(1, Ordering::SeqCst);
    let reload = Reload::new(2);
    let workers = Workers::start(2, &reload, &disk);
    workers.all_serve(1);
    assert_eq!(disk.paused(1), None, "untouched until a reload");

    disk.version.store(2, Ordering::SeqCst);
    reload.reload().unwrap();
    workers.all_serve(2);
    // Both were paused for the build; version 1 is gone (nothing holds
    // it), so version 2 resumes.
    assert_eq!(disk.paused(1), Some(true));
    let deadline = Instant::now() + Duration::from_secs(10);
    while disk.paused(2) != Some(false) {
        assert!(Instant::now() < deadline, "version 2 still paused");
        thread::sleep(Duration::from_millis(5));
    }

    // A failed build resumes the version that goes on serving.
    disk.version.store(3, Ordering::SeqCst);
    disk.broken_on_worker_1.store(true, Ordering::SeqCst);
    reload.reload().unwrap_err();
    let deadline = Instant::now() + Duration::from_secs(10);
    while disk.paused(2) != Some(false) {
        assert!(Instant::now() < deadline, "version 2 left paused");
        thread::sleep(Duration::from_millis(5));
    }
    workers.stop();
}
