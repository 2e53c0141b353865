//! The files of an app — a directory on disk, or a pack embedded in a built
//! executable (`cove build`). Everything that reads app files (the entry, its
//! modules, migrations, later templates and static files) goes through here,
//! so a built app behaves exactly as its directory did.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Where an app's files come from. Cheap to clone.
#[derive(Debug, Clone)]
pub enum AppFiles {
    /// A directory; reads are confined to it, symlinks included.
    Dir(PathBuf),
    /// Files packed into the executable, keyed by `/`-separated relative path.
    Pack(Arc<Pack>),
}

/// An in-memory set of app files (see [`AppFiles::Pack`]).
#[derive(Debug, Default)]
pub struct Pack {
    /// The app's name, shown by `--version` of a built executable.
    pub name: String,
    pub files: BTreeMap<String, Vec<u8>>,
}

/// Normalise a `/`-separated relative path; `None` if it is absolute or
/// climbs out of the root with `..`.
pub fn clean_relative(rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    if rel.starts_with('/') || rel.starts_with('\\') {
        return None;
    }
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

fn not_found(rel: &str) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("{rel}: no such file"))
}

impl AppFiles {
    /// The directory on disk, if the app is not packed.
    pub fn dir(&self) -> Option<&Path> {
        match self {
            AppFiles::Dir(d) => Some(d),
            AppFiles::Pack(_) => None,
        }
    }

    /// How the app is named in messages: its directory, or its pack name.
    pub fn describe(&self) -> String {
        match self {
            AppFiles::Dir(d) => d.display().to_string(),
            AppFiles::Pack(p) => format!("{} (built in)", p.name),
        }
    }

    /// A disk path for `rel` that is inside the directory once symlinks are resolved.
    fn inside(root: &Path, rel: &str) -> io::Result<PathBuf> {
        let clean = clean_relative(rel).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{rel}: path leaves the app directory"),
            )
        })?;
        let path = root.join(&clean);
        let real = path.canonicalize()?;
        let root = root.canonicalize()?;
        if !real.starts_with(&root) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{rel}: links out of the app directory"),
            ));
        }
        Ok(real)
    }

    /// Where `rel` is on disk once symlinks are resolved: refused
    /// (`PermissionDenied`) if that is outside the app directory. For callers
    /// that open the file themselves, e.g. to stream it; a packed app has no
    /// disk paths (`Unsupported`).
    pub fn real_path(&self, rel: &str) -> io::Result<PathBuf> {
        match self {
            AppFiles::Dir(root) => Self::inside(root, rel),
            AppFiles::Pack(_) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("{rel}: a built-in app has no files on disk"),
            )),
        }
    }

    /// The size of a regular file, or an error if it is missing or not a file.
    pub fn len(&self, rel: &str) -> io::Result<u64> {
        match self {
            AppFiles::Dir(root) => {
                let meta = std::fs::metadata(Self::inside(root, rel)?)?;
                if meta.is_file() {
                    Ok(meta.len())
                } else {
                    Err(not_found(rel))
                }
            }
            AppFiles::Pack(p) => {
                let clean = clean_relative(rel).ok_or_else(|| not_found(rel))?;
                p.files
                    .get(&clean)
                    .map(|b| b.len() as u64)
                    .ok_or_else(|| not_found(rel))
            }
        }
    }

    pub fn is_file(&self, rel: &str) -> bool {
        self.len(rel).is_ok()
    }

    /// The bytes of a file.
    pub fn read(&self, rel: &str) -> io::Result<Cow<'_, [u8]>> {
        match self {
            AppFiles::Dir(root) => Ok(Cow::Owned(std::fs::read(Self::inside(root, rel)?)?)),
            AppFiles::Pack(p) => {
                let clean = clean_relative(rel).ok_or_else(|| not_found(rel))?;
                p.files
                    .get(&clean)
                    .map(|b| Cow::Borrowed(b.as_slice()))
                    .ok_or_else(|| not_found(rel))
            }
        }
    }

    /// Names of the regular files directly inside `dir_rel`, sorted. A
    /// missing directory has none.
    pub fn list(&self, dir_rel: &str) -> io::Result<Vec<String>> {
        let mut names = match self {
            AppFiles::Dir(root) => {
                let dir = match Self::inside(root, dir_rel) {
                    Ok(d) => d,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(vec![]),
                    Err(e) => return Err(e),
                };
                let mut names = Vec::new();
                for entry in std::fs::read_dir(dir)? {
                    let entry = entry?;
                    if entry.path().is_file() {
                        names.push(entry.file_name().to_string_lossy().into_owned());
                    }
                }
                names
            }
            AppFiles::Pack(p) => {
                let prefix = match clean_relative(dir_rel) {
                    Some(d) if d.is_empty() => String::new(),
                    Some(d) => format!("{d}/"),
                    None => return Ok(vec![]),
                };
                p.files
                    .keys()
                    .filter_map(|k| k.strip_prefix(&prefix))
                    .filter(|rest| !rest.contains('/'))
                    .map(str::to_owned)
                    .collect()
            }
        };
        names.sort();
        Ok(names)
    }
}

/// Every file under `root` that an app ships, as `/`-separated relative paths
/// in sorted order: dot-files and dot-directories are skipped, and so are
/// `node_modules`, `target` and `vendor` at the app's top level (deeper down,
/// `static/vendor/lib.js` is an app file), and SQLite databases (`*.db`,
/// `*-wal`, `*-shm`).
pub fn walk_app_dir(root: &Path) -> io::Result<Vec<String>> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let tooling = dir == root && ["node_modules", "target", "vendor"].contains(&&*name);
            if name.starts_with('.') || tooling {
                continue;
            }
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                walk(root, &path, out)?;
            } else if path.is_file() && !is_database(&name) {
                let rel = path.strip_prefix(root).unwrap_or(&path);
                let parts: Vec<String> = rel
                    .components()
                    .filter_map(|c| match c {
                        Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                        _ => None,
                    })
                    .collect();
                out.push(parts.join("/"));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(root, root, &mut out)?;
    out.sort();
    Ok(out)
}

fn is_database(name: &str) -> bool {
    [".db", ".db-wal", ".db-shm", ".sqlite", ".sqlite3"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleans_relative_paths() {
        assert_eq!(clean_relative("./a//b.lua").as_deref(), Some("a/b.lua"));
        assert_eq!(clean_relative("a/../b").as_deref(), Some("b"));
        assert_eq!(clean_relative("../b"), None);
        assert_eq!(clean_relative("/etc/passwd"), None);
    }

    #[test]
    fn pack_reads_and_lists() {
        let mut pack = Pack::default();
        pack.files.insert("app.lua".into(), b"x".to_vec());
        pack.files
            .insert("migrations/001_a.sql".into(), b"a".to_vec());
        pack.files
            .insert("migrations/sub/002.sql".into(), b"b".to_vec());
        let files = AppFiles::Pack(Arc::new(pack));
        assert_eq!(&*files.read("./app.lua").unwrap(), b"x");
        assert!(files.read("../app.lua").is_err());
        assert!(!files.is_file("nope.lua"));
        assert_eq!(files.list("migrations").unwrap(), vec!["001_a.sql"]);
        assert!(files.list("missing").unwrap().is_empty());
    }

    /// An app dir with `ok.txt` and `link`, a symlink to a file outside it.
    fn root_with_link_out() -> (tempfile::TempDir, tempfile::TempDir) {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::fs::write(root.path().join("ok.txt"), "ok").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.path().join("link"))
            .unwrap();
        (root, outside)
    }

    #[test]
    fn dir_refuses_symlinks_out() {
        let (root, _outside) = root_with_link_out();
        std::fs::write(root.path().join("data.db"), "").unwrap();
        std::fs::create_dir(root.path().join(".git")).unwrap();
        std::fs::write(root.path().join(".git/x"), "").unwrap();
        std::fs::create_dir(root.path().join("vendor")).unwrap();
        std::fs::write(root.path().join("vendor/x"), "").unwrap();
        std::fs::create_dir_all(root.path().join("static/vendor")).unwrap();
        std::fs::write(root.path().join("static/vendor/lib.js"), "").unwrap();
        let files = AppFiles::Dir(root.path().to_path_buf());
        assert_eq!(&*files.read("ok.txt").unwrap(), b"ok");
        let err = files.read("link").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert!(files.read("../x").is_err());
        let walked = walk_app_dir(root.path()).unwrap();
        assert_eq!(walked, vec!["link", "ok.txt", "static/vendor/lib.js"]);
    }

    #[test]
    fn real_path_is_confined_to_the_dir() {
        let (root, _outside) = root_with_link_out();
        let files = AppFiles::Dir(root.path().to_path_buf());
        let real = files.real_path("./ok.txt").unwrap();
        assert_eq!(real, root.path().canonicalize().unwrap().join("ok.txt"));
        let err = files.real_path("link").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert!(files.real_path("../x").is_err());
        let pack = AppFiles::Pack(Arc::new(Pack::default()));
        assert_eq!(
            pack.real_path("ok.txt").unwrap_err().kind(),
            io::ErrorKind::Unsupported
        );
    }
}
