//! Finding a static file: opened on disk (confined to `static/`) or taken
//! from the pack of a built executable without copying it.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use cove_core::{AppFiles, Pack};

use crate::Body;

/// Files up to this size are read at once on the worker's thread (from the
/// page cache that takes microseconds); larger ones are streamed in chunks
/// read on the blocking pool.
const READ_AT_ONCE: u64 = 64 * 1024;

/// A regular file under `static/`.
pub(super) struct Found {
    pub len: u64,
    /// On disk only: a pack keeps no times.
    pub modified: Option<SystemTime>,
    pub content: Content,
}

/// The bytes of a found file; nothing is read until a body needs them.
#[derive(Clone)]
pub(super) enum Content {
    /// A pack entry, shared with the pack.
    Packed(Bytes),
    File(Arc<File>),
}

/// `rel` (`static/…`, already checked by `path::file_of`), if it is a
/// regular file. On disk, the file must lie under `static/` once symlinks
/// are resolved, which also keeps it inside the app directory.
pub(super) fn find(files: &AppFiles, rel: &str) -> Option<Found> {
    match files {
        AppFiles::Pack(pack) => {
            let len = pack.files.get(rel)?.len() as u64;
            Some(Found {
                len,
                modified: None,
                content: Content::Packed(packed(pack, rel)),
            })
        }
        AppFiles::Dir(_) => {
            let real = files.real_path(rel).ok()?;
            if !real.starts_with(files.real_path("static").ok()?) {
                return None;
            }
            // Non-blocking, so that a FIFO put under static/ cannot hang
            // the worker in open(2); it is then refused as not a file.
            let file = File::options()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(real)
                .ok()?;
            let meta = file.metadata().ok()?;
            if !meta.is_file() {
                return None;
            }
            Some(Found {
                len: meta.len(),
                modified: meta.modified().ok(),
                content: Content::File(Arc::new(file)),
            })
        }
    }
}

/// A pack entry as `Bytes` that keep the pack alive instead of copying.
fn packed(pack: &Arc<Pack>, rel: &str) -> Bytes {
    struct Entry(Arc<Pack>, String);
    impl AsRef<[u8]> for Entry {
        fn as_ref(&self) -> &[u8] {
            // The pack never changes, so this is the same slice every time.
            self.0.files.get(&self.1).map_or(&[], Vec::as_slice)
        }
    }
    Bytes::from_owner(Entry(pack.clone(), rel.to_string()))
}

impl Content {
    /// Bytes `start..end`, read now (blocking for a file on disk).
    pub fn read(&self, start: u64, end: u64) -> io::Result<Bytes> {
        match self {
            Content::Packed(b) => Ok(b.slice(start as usize..end as usize)),
            Content::File(f) => {
                let mut buf = vec![0; (end - start) as usize];
                f.read_exact_at(&mut buf, start)?;
                Ok(Bytes::from(buf))
            }
        }
    }

    /// A body of bytes `start..end`: a large file on disk is streamed.
    pub fn body(&self, start: u64, end: u64) -> io::Result<Body> {
        match self {
            Content::File(f) if end - start > READ_AT_ONCE => Ok(Body::file(f.clone(), start, end)),
            _ => self.read(start, end).map(Body::bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_packed_files_without_copying() {
        let mut pack = Pack::default();
        pack.files.insert("static/a.css".into(), b"body{}".to_vec());
        let pack = Arc::new(pack);
        let files = AppFiles::Pack(pack.clone());
        let found = find(&files, "static/a.css").unwrap();
        assert_eq!((found.len, found.modified), (6, None));
        let bytes = found.content.read(0, 6).unwrap();
        assert_eq!(bytes.as_ptr(), pack.files["static/a.css"].as_ptr());
        assert_eq!(&found.content.read(1, 3).unwrap()[..], b"od");
        assert!(find(&files, "static/b.css").is_none());
    }

    #[test]
    fn disk_files_stay_under_static() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path();
        std::fs::create_dir_all(dir.join("static/sub")).unwrap();
        std::fs::write(dir.join("app.lua"), "secret").unwrap();
        std::fs::write(dir.join("static/sub/a.txt"), "hello").unwrap();
        std::os::unix::fs::symlink(dir.join("app.lua"), dir.join("static/app.lua")).unwrap();
        std::os::unix::fs::symlink(dir.join("static/sub/a.txt"), dir.join("static/in.txt"))
            .unwrap();
        let files = AppFiles::Dir(dir.to_path_buf());
        let found = find(&files, "static/sub/a.txt").unwrap();
        assert_eq!(found.len, 5);
        assert!(found.modified.is_some());
        assert_eq!(&found.content.read(0, 5).unwrap()[..], b"hello");
        assert!(
            find(&files, "static/in.txt").is_some(),
            "links inside static/ work"
        );
        assert!(
            find(&files, "static/app.lua").is_none(),
            "links out of static/ do not"
        );
        assert!(
            find(&files, "static/sub").is_none(),
            "directories are not files"
        );
        assert!(find(&files, "static/missing").is_none());
    }

    #[test]
    fn a_fifo_is_not_served_and_does_not_hang() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("static")).unwrap();
        let fifo = root.path().join("static/pipe");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !status.is_ok_and(|s| s.success()) {
            return; // no mkfifo here: nothing to test
        }
        let files = AppFiles::Dir(root.path().to_path_buf());
        assert!(find(&files, "static/pipe").is_none());
    }
}
