use super::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;

/// A handler that only knows which app version it was built from.
struct Built(usize);

impl Handler for Built {
    async fn handle(self: Rc<Self>, _req: hyper::Request<Incoming>) -> HttpResponse {
        unreachable!("no requests in these tests")
    }
}

/// The "files on disk": the version a build sees, and whether worker 1's
/// build fails.
#[derive(Default)]
struct Disk {
    version: AtomicUsize,
    broken_on_worker_1: AtomicBool,
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
            Ok(Built(disk.version.load(Ordering::SeqCst)))
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
