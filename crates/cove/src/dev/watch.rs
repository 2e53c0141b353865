//! Noticing that an app's files changed, by polling their metadata.
//!
//! Polling rather than inotify (the `notify` crate): it sees edits on every
//! filesystem — Docker and VM bind mounts, network shares and WSL's Windows
//! drives deliver no inotify events — needs no watch per directory (inotify
//! would need one for every directory, `node_modules` included, against a
//! per-user limit), and is not woken by the SQLite files that may live in
//! the app directory and change with every write. A scan of a small app is
//! a few hundred `stat` calls, every `POLL` (250 ms, well below the time it
//! takes to switch from the editor to the browser).

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, SystemTime};

use cove_core::{log, walk_app_dir};

/// How often the app directory is scanned.
pub const POLL: Duration = Duration::from_millis(250);
/// After a change, scans this far apart until two agree, so that a save
/// touching several files (an editor's "save all", `git checkout`) reloads
/// once, with every file in place.
const SETTLE: Duration = Duration::from_millis(100);
/// Give up waiting for quiet after this many scans (a file rewritten nonstop).
const SETTLE_ROUNDS: usize = 20;

/// What identifies a version of a file. The inode is there because an
/// editor's atomic save (write a new file, rename it over the old one) can
/// keep size and, within one clock tick, modification time.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    inode: u64,
}

type Snapshot = BTreeMap<String, Stamp>;

/// Watches every file of an app directory (as `cove build` would pack it:
/// dot-files, `node_modules`, `target` and `vendor` left out), except the
/// database and its companion files.
pub struct Watcher {
    dir: PathBuf,
    /// The app's database and its `-wal`, `-shm` and `-journal` files.
    ignored: Vec<PathBuf>,
    last: Snapshot,
    /// The last scan error, logged once rather than every `POLL`.
    last_error: Option<String>,
}

impl Watcher {
    /// Start watching `dir`; `db` is the database file the server writes.
    pub fn new(dir: &Path, db: &Path) -> Watcher {
        let db = absolute(db);
        let mut ignored: Vec<PathBuf> = ["", "-wal", "-shm", "-journal"]
            .iter()
            .map(|suffix| {
                let mut name = db.as_os_str().to_owned();
                name.push(suffix);
                PathBuf::from(name)
            })
            .collect();
        // `cove dev --agent > events.log` in the app directory: every
        // reload would write the file that reloads it.
        ignored.extend(redirected_output());
        let mut watcher = Watcher {
            dir: dir.to_path_buf(),
            ignored,
            last: Snapshot::new(),
            last_error: None,
        };
        watcher.last = watcher.scan();
        watcher
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The files (relative paths) added, removed or modified since the last
    /// call, once they have stopped changing; empty if none.
    pub fn changed(&mut self) -> Vec<String> {
        let mut now = self.scan();
        if now == self.last {
            return Vec::new();
        }
        for _ in 0..SETTLE_ROUNDS {
            thread::sleep(SETTLE);
            let again = self.scan();
            if again == now {
                break;
            }
            now = again;
        }
        let changed = diff(&self.last, &now);
        self.last = now;
        // `cove build` run in the app directory writes an executable there;
        // it is output, not an edit (a removed one no longer reads as built,
        // and its removal reloads once).
        changed
            .into_iter()
            .filter(|rel| !is_built_exe(&self.dir.join(rel)))
            .collect()
    }

    fn scan(&mut self) -> Snapshot {
        let files = match walk_app_dir(&self.dir) {
            Ok(files) => {
                self.last_error = None;
                files
            }
            Err(e) => {
                let msg = format!("cannot scan {} for changes: {e}", self.dir.display());
                if self.last_error.as_ref() != Some(&msg) {
                    log::warn(&msg);
                    self.last_error = Some(msg);
                }
                // Report no change rather than every file gone.
                return self.last.clone();
            }
        };
        let mut snapshot = Snapshot::new();
        for rel in files {
            let path = self.dir.join(&rel);
            if ignored_name(&rel) || self.ignored.contains(&path) {
                continue;
            }
            // Deleted since the walk listed it: the next scan reports it gone.
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            let stamp = Stamp {
                modified: meta.modified().ok(),
                len: meta.len(),
                inode: meta.ino(),
            };
            snapshot.insert(rel, stamp);
        }
        snapshot
    }
}

/// `path` made absolute with symlinks resolved in its directory, so it
/// compares equal to the same file reached through the app directory.
fn absolute(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match (parent.canonicalize(), path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => path.to_path_buf(),
    }
}

/// Files no edit of the app makes: other SQLite databases' journals, and
/// editors' backup and lock files.
/// The files this process's stdout and stderr write to, if any.
fn redirected_output() -> Vec<PathBuf> {
    ["/proc/self/fd/1", "/proc/self/fd/2"]
        .iter()
        .filter_map(|fd| std::fs::read_link(fd).ok())
        .filter(|target| target.is_file())
        .collect()
}

fn ignored_name(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let database = [".db", ".sqlite", ".sqlite3"].iter().any(|ext| {
        ["-journal", "-wal", "-shm"]
            .iter()
            .any(|suffix| name.ends_with(&format!("{ext}{suffix}")))
    });
    database || name.ends_with('~') || name.ends_with(".swp") || name.starts_with('#')
}

/// Whether `path` is an executable `cove build` wrote (its trailer says so).
fn is_built_exe(path: &Path) -> bool {
    std::fs::File::open(path)
        .ok()
        .is_some_and(|mut f| matches!(crate::pack::find(&mut f), Ok(Some(_))))
}

/// Relative paths that differ between two snapshots, sorted.
fn diff(old: &Snapshot, new: &Snapshot) -> Vec<String> {
    let mut changed: Vec<String> = new
        .iter()
        .filter(|(rel, stamp)| old.get(*rel) != Some(stamp))
        .map(|(rel, _)| rel.clone())
        .collect();
    changed.extend(old.keys().filter(|rel| !new.contains_key(*rel)).cloned());
    changed.sort();
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_edits_additions_and_removals_but_not_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("app.lua"), "-- v1").unwrap();
        std::fs::write(root.join("data.sqlite"), "").unwrap();
        let mut w = Watcher::new(&root, &root.join("data.sqlite"));
        assert!(w.changed().is_empty());

        std::fs::write(root.join("app.lua"), "-- version 2").unwrap();
        std::fs::create_dir(root.join("migrations")).unwrap();
        std::fs::write(root.join("migrations/002_x.sql"), "SELECT 1;").unwrap();
        assert_eq!(w.changed(), vec!["app.lua", "migrations/002_x.sql"]);
        assert!(w.changed().is_empty(), "reported once");

        // The server's database and journals, another database's journal,
        // editor backups and anything under a dot-directory are not the app.
        for f in [
            "data.sqlite",
            "data.sqlite-wal",
            "data.sqlite-journal",
            "other.db-journal",
            "app.lua~",
        ] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/index"), "x").unwrap();
        assert!(w.changed().is_empty());

        std::fs::remove_file(root.join("migrations/002_x.sql")).unwrap();
        assert_eq!(w.changed(), vec!["migrations/002_x.sql"]);
    }

    #[test]
    fn an_executable_cove_build_wrote_is_not_an_edit() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("app.lua"), "-- v1").unwrap();
        let mut w = Watcher::new(&root, &root.join("data.db"));
        let base = root.join("base");
        std::fs::write(&base, "not really cove").unwrap();
        let files = [("app.lua".to_string(), b"-- v1".to_vec())].into();
        crate::pack::write_exe(&base, &root.join("app"), "app", &files).unwrap();
        std::fs::remove_file(&base).unwrap();
        assert!(w.changed().is_empty(), "the built file reloaded the app");
        std::fs::write(root.join("app.lua"), "-- version 2").unwrap();
        assert_eq!(w.changed(), vec!["app.lua"]);
    }

    #[test]
    fn an_atomic_save_of_the_same_size_is_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("app.js"), "let a = 1;").unwrap();
        let mut w = Watcher::new(&root, &root.join("data.db"));
        std::fs::write(root.join("app.js.tmp"), "let a = 2;").unwrap();
        std::fs::rename(root.join("app.js.tmp"), root.join("app.js")).unwrap();
        assert_eq!(w.changed(), vec!["app.js"]);
    }

    #[test]
    fn the_database_is_recognised_through_a_symlinked_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(&root, root.join("link")).unwrap();
        // Not created yet: the server creates it after the watcher starts.
        let w = Watcher::new(&root, &root.join("link/data.db"));
        assert!(w.ignored.contains(&root.join("data.db-wal")));
    }
}
