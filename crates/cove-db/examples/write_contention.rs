//! Measures concurrent autocommit inserts from several connections to one
//! file: with one shared `WriteLock` (what Cove does) versus each
//! connection on its own (SQLite's busy handler arbitrates).
//!
//! cargo run --release -p cove-db --example write_contention [threads] [inserts-per-thread]

use std::path::Path;
use std::time::{Duration, Instant};

use cove_db::{Db, Origin, Value, WriteLock};

/// One write: a single autocommit insert, or a batch of `batch` inserts.
fn write(db: &mut Db, w: usize, n: usize, batch: usize) {
    let insert = |db: &mut Db, i: usize| {
        db.exec(
            "INSERT INTO t(worker, n) VALUES (?, ?)",
            &[
                Value::Integer(w as i64),
                Value::Integer((n * batch + i) as i64),
            ],
            Origin::App,
        )
        .expect("insert");
    };
    if batch == 1 {
        insert(db, 0);
        return;
    }
    db.begin_batch().expect("begin");
    for i in 0..batch {
        insert(db, i);
    }
    db.commit_batch().expect("commit");
}

fn run(
    dir: &Path,
    threads: usize,
    per: usize,
    batch: usize,
    shared: bool,
) -> (Duration, Duration, Duration, Duration) {
    let path = dir.join(format!("{shared}-{batch}.db"));
    let mut setup = Db::open(&path, WriteLock::default()).expect("open");
    setup
        .exec(
            "CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, worker INTEGER, n INTEGER)",
            &[],
            Origin::App,
        )
        .expect("create");
    let lock = WriteLock::default();
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|w| {
            let lock = if shared {
                lock.clone()
            } else {
                WriteLock::default()
            };
            let path = path.clone();
            std::thread::spawn(move || {
                let mut db = Db::open(&path, lock).expect("open");
                let mut lat = Vec::with_capacity(per);
                for n in 0..per {
                    let t = Instant::now();
                    write(&mut db, w, n, batch);
                    lat.push(t.elapsed());
                }
                lat
            })
        })
        .collect();
    let mut all: Vec<Duration> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("thread"))
        .collect();
    let total = start.elapsed();
    all.sort();
    (
        total,
        all[all.len() / 2],
        all[all.len() * 99 / 100],
        all[all.len() - 1],
    )
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let threads = args.first().copied().unwrap_or(2);
    let per = args.get(1).copied().unwrap_or(20_000);
    let dir = std::env::temp_dir().join(format!("cove-write-contention-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    println!("{threads} threads x {per} writes each (WAL, synchronous=NORMAL)");
    println!("| write | coordination | writes/s | p50 | p99 | max |");
    println!("|---|---|---:|---:|---:|---:|");
    for batch in [1, 10] {
        for shared in [true, false] {
            let (total, p50, p99, max) = run(&dir, threads, per / batch, batch, shared);
            let rate = (threads * per / batch) as f64 / total.as_secs_f64();
            let name = if shared {
                "shared write lock (Cove)"
            } else {
                "busy handler only"
            };
            let what = if batch == 1 {
                "1 insert".to_string()
            } else {
                format!("batch of {batch}")
            };
            println!("| {what} | {name} | {rate:.0} | {p50:.1?} | {p99:.1?} | {max:.1?} |");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
