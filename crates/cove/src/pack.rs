//! The built-executable format: a copy of the `cove` executable, then the
//! app as a plain tar archive, then a fixed 32-byte trailer.
//!
//! ```text
//! [cove executable][tar archive: .cove/name, app.lua, migrations/…]["\n<len:16> v<ver:3> COVEPACK\n"]
//! ```
//!
//! The trailer is ASCII so `tail -c 32 out` shows the archive's length, and
//! `tail -c $((len + 32)) out | tar t` lists it with any tar. Every start of
//! plain `cove` reads only those 32 bytes. A standard archive read by the
//! `tar` crate rather than a format of our own: nothing to get wrong in
//! parsing, and the contents can be checked with tools users already have.
//!
//! A signed build (`cove build --sign`, `sign/`) adds two more `.cove/`
//! entries at the end of the archive; readers that do not know them skip
//! them, so the format version stays 1.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

use cove_core::{clean_relative, Pack};

/// Bytes of the trailer at the very end of a built executable.
pub const TRAILER_LEN: u64 = 32;
/// Bumped when a built executable could not be read by an older reader.
pub const FORMAT_VERSION: u32 = 1;
const MAGIC: &[u8] = b" COVEPACK\n";
/// Archive entry holding the app's name; dot-directories are never app
/// files (`walk_app_dir` skips them), so it cannot clash with one.
const NAME_ENTRY: &str = ".cove/name";

/// Entries under `.cove/` other than the name: format additions such as
/// the signature of a signed build, by path.
pub type Meta = BTreeMap<String, Vec<u8>>;

/// A built executable as read: its app, where the archive lies, and the
/// `.cove/` entries the app itself never sees.
#[derive(Debug)]
pub struct Built {
    pub pack: Pack,
    pub span: Span,
    pub meta: Meta,
}

/// The `cove` part of an executable being written, as a signature covers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CovePart {
    pub len: u64,
    pub sha256: [u8; 32],
}

/// Makes `.cove/` entries to append (a signature) once the `cove` part of
/// the output has been written and hashed.
pub type Seal<'a> = &'a dyn Fn(&CovePart) -> Result<Vec<(String, Vec<u8>)>>;

/// Where the archive of a built executable lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Offset of the archive's first byte: also the length of the plain
    /// `cove` executable in front of it.
    pub start: u64,
    pub len: u64,
}

fn trailer(len: u64) -> Vec<u8> {
    let t = format!("\n{len:016} v{FORMAT_VERSION:03} COVEPACK\n");
    debug_assert_eq!(t.len() as u64, TRAILER_LEN);
    t.into_bytes()
}

/// The executable this process runs. On Linux `/proc/self/exe` opens the
/// very file that was started, even if it was since replaced or removed.
pub fn self_exe() -> io::Result<PathBuf> {
    let proc = Path::new("/proc/self/exe");
    if proc.exists() {
        Ok(proc.to_path_buf())
    } else {
        std::env::current_exe()
    }
}

/// The archive of `file` if it ends with a trailer, `None` if it does not.
/// A trailer that does not fit the file is an error.
pub fn find(file: &mut File) -> Result<Option<Span>> {
    let size = file.seek(SeekFrom::End(0))?;
    if size < TRAILER_LEN {
        return Ok(None);
    }
    let mut t = [0u8; TRAILER_LEN as usize];
    file.seek(SeekFrom::End(-(TRAILER_LEN as i64)))?;
    file.read_exact(&mut t)?;
    parse_trailer(&t, size)
}

/// [`find`] for a file already in memory.
pub fn find_in(bytes: &[u8]) -> Result<Option<Span>> {
    let size = bytes.len() as u64;
    match bytes.get(bytes.len().saturating_sub(TRAILER_LEN as usize)..) {
        Some(t) if size >= TRAILER_LEN => parse_trailer(t, size),
        _ => Ok(None),
    }
}

/// Read the trailer `t`, the last bytes of a file of `size` bytes.
fn parse_trailer(t: &[u8], size: u64) -> Result<Option<Span>> {
    if !t.ends_with(MAGIC) || t[0] != b'\n' || &t[17..19] != b" v" {
        return Ok(None);
    }
    let digits = |b: &[u8]| -> Option<u64> {
        std::str::from_utf8(b)
            .ok()
            .filter(|s| s.bytes().all(|c| c.is_ascii_digit()))?
            .parse()
            .ok()
    };
    let (Some(len), Some(version)) = (digits(&t[1..17]), digits(&t[19..22])) else {
        bail!("its app trailer is damaged (rebuild it with `cove build`)");
    };
    if version != u64::from(FORMAT_VERSION) {
        bail!(
            "its app was packed in format v{version}, this cove reads v{FORMAT_VERSION} \
             (rebuild it with this cove's `cove build`)"
        );
    }
    let start = (size - TRAILER_LEN)
        .checked_sub(len)
        .ok_or_else(|| anyhow!("its app trailer names {len} bytes, more than the file holds"))?;
    Ok(Some(Span { start, len }))
}

/// Read the pack out of a built executable; `None` for a plain one.
pub fn read(path: &Path) -> Result<Option<Pack>> {
    Ok(read_built(path)?.map(|b| b.pack))
}

/// [`read`], keeping where the archive lies and its `.cove/` entries.
pub fn read_built(path: &Path) -> Result<Option<Built>> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    read_file(file, path)
}

/// [`read_built`] from an open file, naming it `shown` in errors.
fn read_file(mut file: File, shown: &Path) -> Result<Option<Built>> {
    let span = find(&mut file).with_context(|| shown.display().to_string())?;
    let Some(span) = span else { return Ok(None) };
    file.seek(SeekFrom::Start(span.start))?;
    let (pack, meta) = unpack(io::BufReader::new(file).take(span.len))
        .with_context(|| format!("{}: the packed app cannot be read", shown.display()))?;
    Ok(Some(Built { pack, span, meta }))
}

/// The app built into this executable, if any. Cheap for plain `cove`:
/// one open and a 32-byte read. An executable that cannot read itself
/// (mode --x) is taken as plain `cove`; `cove build` writes mode 755.
pub fn embedded() -> Result<Option<Built>> {
    let Ok(path) = self_exe() else {
        return Ok(None);
    };
    let Ok(file) = File::open(&path) else {
        return Ok(None);
    };
    // Errors name the file the user ran, not /proc/self/exe.
    let shown = std::env::current_exe().unwrap_or(path);
    read_file(file, &shown)
}

/// Parse a tar archive written by [`write_archive`]: the app, and the
/// `.cove/` entries besides its name. Of two entries with one path the
/// last wins, for the app and its signature alike.
pub fn unpack(reader: impl Read) -> Result<(Pack, Meta)> {
    let mut pack = Pack::default();
    let mut meta = Meta::new();
    let mut archive = tar::Archive::new(reader);
    for entry in archive.entries()? {
        let mut entry = entry?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let raw = entry.path()?.to_string_lossy().into_owned();
        let rel = clean_relative(&raw)
            .filter(|r| !r.is_empty())
            .ok_or_else(|| anyhow!("{raw}: not a path inside the app"))?;
        let mut bytes = Vec::with_capacity(entry.size() as usize);
        entry.read_to_end(&mut bytes)?;
        if rel == NAME_ENTRY {
            pack.name = String::from_utf8_lossy(&bytes).trim().to_string();
        } else if rel.starts_with(".cove/") {
            meta.insert(rel, bytes);
        } else {
            pack.files.insert(rel, bytes);
        }
    }
    if pack.name.is_empty() {
        bail!("it has no {NAME_ENTRY} entry");
    }
    Ok((pack, meta))
}

/// Write `name`, `files` and then the `.cove/` entries `meta` as a tar
/// archive. Headers carry no times, owners or modes of the build machine,
/// so the same app always packs to the same bytes.
pub fn write_archive(
    out: impl Write,
    name: &str,
    files: &BTreeMap<String, Vec<u8>>,
    meta: &[(String, Vec<u8>)],
) -> io::Result<()> {
    let mut builder = tar::Builder::new(out);
    let mut add = |path: &str, data: &[u8]| {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        builder.append_data(&mut header, path, data)
    };
    add(NAME_ENTRY, name.as_bytes())?;
    for (path, data) in files {
        add(path, data)?;
    }
    for (path, data) in meta {
        debug_assert!(path.starts_with(".cove/"), "{path}");
        add(path, data)?;
    }
    builder.into_inner()?.flush()
}

/// Write the executable `out`: `base` without any pack it carries (so
/// packs never nest), then the archive, then the trailer. Written to a
/// temporary file beside `out` and renamed over it, so a running copy of
/// the old `out` is not disturbed (Linux refuses to write a running
/// executable) and a failed build leaves no half-written file. Returns the
/// archive's length. (Builds call [`write_exe_sealed`]; tests this.)
#[cfg(test)]
pub fn write_exe(
    base: &Path,
    out: &Path,
    name: &str,
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<u64> {
    write_exe_sealed(base, out, name, files, None)
}

/// [`write_exe`]; `seal` (signing) is given the `cove` part as written to
/// `out` and returns the `.cove/` entries that end the archive.
pub fn write_exe_sealed(
    base: &Path,
    out: &Path,
    name: &str,
    files: &BTreeMap<String, Vec<u8>>,
    seal: Option<Seal<'_>>,
) -> Result<u64> {
    let mut src = File::open(base).with_context(|| format!("cannot read {}", base.display()))?;
    let base_len = match find(&mut src).with_context(|| base.display().to_string())? {
        Some(span) => span.start,
        None => src.seek(SeekFrom::End(0))?,
    };
    src.seek(SeekFrom::Start(0))?;

    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let cannot_write = || format!("cannot write {}", out.display());
    let tmp = tempfile::NamedTempFile::new_in(dir).with_context(cannot_write)?;
    let mut w = io::BufWriter::new(tmp);
    let copied = io::copy(&mut (&mut src).take(base_len), &mut w).with_context(cannot_write)?;
    if copied != base_len {
        bail!("{} changed while it was copied; try again", base.display());
    }
    let meta = match seal {
        None => Vec::new(),
        Some(seal) => {
            // Hash the bytes as they lie in the output: what a verifier reads.
            w.flush().with_context(cannot_write)?;
            let file = w.get_mut().as_file_mut();
            file.seek(SeekFrom::Start(0))?;
            let sha256 =
                crate::sign::sha256_prefix(&mut *file, base_len).with_context(cannot_write)?;
            file.seek(SeekFrom::End(0))?;
            seal(&CovePart {
                len: base_len,
                sha256,
            })?
        }
    };
    let mut archive = Vec::new();
    write_archive(&mut archive, name, files, &meta)?;
    w.write_all(&archive).with_context(cannot_write)?;
    w.write_all(&trailer(archive.len() as u64))
        .with_context(cannot_write)?;
    let tmp = w.into_inner().map_err(|e| e.into_error())?;
    tmp.as_file().sync_all().with_context(cannot_write)?;
    set_executable(tmp.path()).with_context(cannot_write)?;
    tmp.persist(out)
        .map_err(|e| e.error)
        .with_context(cannot_write)?;
    Ok(archive.len() as u64)
}

#[cfg(unix)]
fn set_executable(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn set_executable(_path: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> BTreeMap<String, Vec<u8>> {
        let mut f = BTreeMap::new();
        f.insert("app.lua".to_string(), b"app.get('/', h)".to_vec());
        f.insert(
            "migrations/001_init.sql".to_string(),
            b"CREATE TABLE t(x);".to_vec(),
        );
        let long = format!("static/{}/file.txt", "d".repeat(150));
        f.insert(long, b"long names survive".to_vec());
        f
    }

    fn build(base: &Path, out: &Path) -> u64 {
        write_exe(base, out, "demo", &files()).unwrap()
    }

    #[test]
    fn round_trip_through_an_executable() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("cove");
        std::fs::write(&base, b"\x7fELF pretend executable").unwrap();
        assert!(read(&base).unwrap().is_none());

        let out = dir.path().join("demo");
        let len = build(&base, &out);
        let pack = read(&out).unwrap().expect("a pack");
        assert_eq!(pack.name, "demo");
        assert_eq!(pack.files, files());

        let bytes = std::fs::read(&out).unwrap();
        assert!(bytes.starts_with(b"\x7fELF pretend executable"));
        let tail = String::from_utf8_lossy(&bytes[bytes.len() - 32..]).into_owned();
        assert_eq!(tail, format!("\n{len:016} v001 COVEPACK\n"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&out).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o755);
        }
    }

    #[test]
    fn building_from_a_built_executable_does_not_nest() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("cove");
        std::fs::write(&base, b"plain").unwrap();
        let first = dir.path().join("first");
        let second = dir.path().join("second");
        build(&base, &first);
        build(&first, &second);
        assert_eq!(
            std::fs::read(&first).unwrap(),
            std::fs::read(&second).unwrap()
        );
    }

    #[test]
    fn damaged_trailers_are_errors_that_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad");
        std::fs::write(&path, b"\n0000000000099999 v001 COVEPACK\n").unwrap();
        let err = format!("{:#}", read(&path).unwrap_err());
        assert!(err.contains("more than the file holds"), "{err}");
        assert!(find_in(b"\n0000000000099999 v001 COVEPACK\n").is_err());
        assert_eq!(find_in(b"COVEPACK\n").unwrap(), None);
        std::fs::write(&path, b"\n0000000000000000 v002 COVEPACK\n").unwrap();
        let err = format!("{:#}", read(&path).unwrap_err());
        assert!(err.contains("format v2"), "{err}");
        std::fs::write(&path, b"\n00000000000000x0 v001 COVEPACK\n").unwrap();
        let err = format!("{:#}", read(&path).unwrap_err());
        assert!(err.contains("damaged"), "{err}");
    }

    #[test]
    fn unpack_refuses_paths_out_of_the_app() {
        let mut archive = Vec::new();
        {
            let mut b = tar::Builder::new(&mut archive);
            let mut h = tar::Header::new_gnu();
            h.set_size(1);
            // append_data refuses `..`, so write the raw name as an attacker would.
            h.as_gnu_mut().unwrap().name[..9].copy_from_slice(b"../x.lua\0");
            h.set_cksum();
            b.append(&h, &b"x"[..]).unwrap();
            b.finish().unwrap();
        }
        let err = format!("{:#}", unpack(&archive[..]).unwrap_err());
        assert!(err.contains("../x.lua"), "{err}");
    }

    #[test]
    fn sealed_entries_end_the_archive_and_stay_out_of_the_app() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("cove");
        std::fs::write(&base, b"plain cove bytes").unwrap();
        let out = dir.path().join("demo");
        let seen = std::cell::Cell::new(None);
        let seal = |part: &CovePart| {
            seen.set(Some(*part));
            Ok(vec![(".cove/extra".to_string(), b"sealed".to_vec())])
        };
        write_exe_sealed(&base, &out, "demo", &files(), Some(&seal)).unwrap();
        let part = seen.get().expect("the seal ran");
        assert_eq!(part.len, 16);
        let want = crate::sign::sha256_prefix(&mut &b"plain cove bytes"[..], 16).unwrap();
        assert_eq!(part.sha256, want);

        let built = read_built(&out).unwrap().expect("a pack");
        assert_eq!(built.pack.files, files());
        assert_eq!(built.span.start, 16);
        assert_eq!(
            built.meta.get(".cove/extra").map(Vec::as_slice),
            Some(&b"sealed"[..])
        );
        // A rebuild from it copies the cove part only: the seal is gone.
        let again = dir.path().join("again");
        build(&out, &again);
        assert!(read_built(&again).unwrap().unwrap().meta.is_empty());
    }
}
