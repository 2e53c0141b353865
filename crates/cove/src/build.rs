//! `cove build`: one executable holding Cove and the app (format in
//! `pack.rs`), `cove build --list`, and the start of a built executable.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use clap::error::ErrorKind;
use clap::FromArgMatches;

use cove_core::{walk_app_dir, AppFiles, Pack};

use crate::cli::{BuildArgs, ServeArgs};
use crate::leave_out::LeaveOut;
use crate::{app, pack, serve, sign};

pub fn run(args: &BuildArgs) -> Result<i32> {
    let target = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let leave = LeaveOut::new(&args.exclude, &args.include)?;
    if args.list {
        return list(&target, &leave);
    }
    if args.dir.is_some() && target.is_file() {
        bail!(
            "{} is a file; cove build packs an app directory (the one holding {})",
            target.display(),
            app::ENTRY_NAMES
        );
    }
    let root = app_root(&target)?;
    let output = output_path(&root, args.output.as_deref())?;
    // A key that cannot sign stops the build before anything is written.
    let key = args.sign.as_deref().map(sign::read_secret).transpose()?;
    let collected = collect(&root, Some(&output), &leave)?;
    if !collected.left_out.is_empty() {
        eprintln!(
            "note: left out {} (not used by a served app; --include PATTERN packs them)",
            collected.left_out.join(", ")
        );
    }
    let manifest = match &key {
        Some(_) => sign::declared_manifest(&collected.name, &collected.files)?,
        None => None,
    };
    let seal = key
        .as_ref()
        .map(|k| sign::seal_for(k, &collected.name, &collected.files, manifest.as_ref()));
    let archive_len = pack::write_exe_sealed(
        &pack::self_exe()?,
        &output,
        &collected.name,
        &collected.files,
        seal.as_ref().map(|s| s as pack::Seal<'_>),
    )?;
    let exe_len = std::fs::metadata(&output).map(|m| m.len()).unwrap_or(0);
    let shown = shown_path(&output);
    println!(
        "packed {} ({}, {}) into {shown}: {} with Cove, {} packed",
        collected.name,
        count(collected.files.len()),
        human(collected.total()),
        human(exe_len),
        human(archive_len),
    );
    if let (Some(key), Some(path)) = (&key, &args.sign) {
        println!(
            "signed with {} (key {}): the Cove binary, {} and {}",
            path.display(),
            sign::fingerprint(&key.verifying_key()),
            count(collected.files.len()),
            if manifest.is_some() {
                "the app's manifest"
            } else {
                "that the app declares no manifest"
            }
        );
        println!(
            "check it: cove inspect {shown}; refuse to run it unless intact: {shown} --verify-sig {}",
            sign::key_paths(path).1.display()
        );
    }
    println!(
        "run it anywhere (no other files needed): {shown} -p 8080 -d data.db   ({shown} --help for flags)"
    );
    Ok(0)
}

/// An app directory, canonical; an error naming it if it has no entry.
fn app_root(dir: &Path) -> Result<PathBuf> {
    if !dir.is_dir() {
        bail!(
            "{}: no such directory; pass the app directory",
            dir.display()
        );
    }
    let root = app::canonical_dir(dir)?;
    if app::entries_in(&root).is_empty() {
        bail!(
            "no entry point found ({}) in {}; pass the app directory",
            app::ENTRY_NAMES,
            dir.display()
        );
    }
    Ok(root)
}

/// The app's name: its directory's name.
fn app_name(root: &Path) -> String {
    root.file_name()
        .map_or_else(|| "app".to_string(), |n| n.to_string_lossy().into_owned())
}

/// `-o` as given (inside it if it is a directory), else `<dir>/<name>`.
fn output_path(root: &Path, output: Option<&Path>) -> Result<PathBuf> {
    let out = match output {
        Some(o) if o.is_dir() => o.join(app_name(root)),
        Some(o) if o.as_os_str().as_encoded_bytes().ends_with(b"/") => bail!(
            "-o {}: no such directory; create it first, or give the executable's file name",
            o.display()
        ),
        Some(o) => o.to_path_buf(),
        None => root.join(app_name(root)),
    };
    if let Some(dir) = out
        .parent()
        .filter(|d| !d.as_os_str().is_empty() && !d.is_dir())
    {
        bail!(
            "-o {}: directory {} does not exist; create it first",
            out.display(),
            dir.display()
        );
    }
    // Replacing the running `cove` with an app is never what was meant.
    let running = std::env::current_exe().and_then(|p| p.canonicalize()).ok();
    if running.is_some() && out.canonicalize().ok() == running {
        bail!(
            "-o {} is this cove executable itself; choose another output path",
            out.display()
        );
    }
    Ok(out)
}

/// The files of an app, read for packing.
struct Collected {
    name: String,
    files: BTreeMap<String, Vec<u8>>,
    /// What [`LeaveOut`] kept out: top-level entries (`tests/`, `README.md`).
    left_out: Vec<String>,
}

impl Collected {
    fn total(&self) -> u64 {
        self.files.values().map(|b| b.len() as u64).sum()
    }
}

/// Read every file the app ships (`walk_app_dir`). Skipped with a note on
/// stderr: `output` and earlier `cove build` outputs (packing one would nest
/// a copy of Cove). Refused: a file the server itself would refuse to read
/// (a symlink out of the app directory) — serving without it would differ
/// from serving the directory only in a less visible way, so the build
/// stops and says which link to fix.
fn collect(root: &Path, output: Option<&Path>, leave: &LeaveOut) -> Result<Collected> {
    let output = output.and_then(|o| o.canonicalize().ok());
    let dir = AppFiles::Dir(root.to_path_buf());
    let rels = walk_app_dir(root).with_context(|| format!("cannot list {}", root.display()))?;
    let mut files = BTreeMap::new();
    let mut left_out = Vec::new();
    for rel in rels {
        if leave.leaves(&rel) {
            let top = match rel.split_once('/') {
                Some((dir, _)) => format!("{dir}/"),
                None => rel.clone(),
            };
            if !left_out.contains(&top) {
                left_out.push(top);
            }
            continue;
        }
        let path = root.join(&rel);
        let bytes = match dir.read(&rel) {
            Ok(b) => b.into_owned(),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => bail!(
                "{}: links out of the app directory, so the app cannot read it and cove build \
                 will not pack it; copy the file into the app directory or remove the link",
                path.display()
            ),
            Err(e) => return Err(anyhow!(e).context(format!("cannot read {}", path.display()))),
        };
        let is_output = output.is_some() && path.canonicalize().ok() == output;
        let is_built = is_built_exe(&bytes);
        if is_output && !is_built {
            bail!(
                "-o {} would overwrite the app's own file {rel}; choose another output path",
                path.display()
            );
        }
        if is_built {
            eprintln!("note: skipped {rel}: an executable written by cove build");
            continue;
        }
        files.insert(rel, bytes);
    }
    Ok(Collected {
        name: app_name(root),
        files,
        left_out,
    })
}

fn is_built_exe(bytes: &[u8]) -> bool {
    matches!(pack::find_in(bytes), Ok(Some(_)))
}

/// `cove build --list`: what a directory would pack, or what a built
/// executable holds.
fn list(target: &Path, leave: &LeaveOut) -> Result<i32> {
    let (name, files, origin) = if target.is_file() {
        let pack = pack::read(target)?.ok_or_else(|| {
            anyhow!(
                "{} is not an executable written by cove build (it carries no app); \
                 pass an app directory or a built executable",
                target.display()
            )
        })?;
        let Pack { name, files } = pack;
        (name, files, format!("built into {}", target.display()))
    } else {
        let root = app_root(target)?;
        let c = collect(&root, None, leave)?;
        (c.name, c.files, format!("from {}", target.display()))
    };
    print!("{}", listing(&name, &files, &origin));
    Ok(0)
}

fn listing(name: &str, files: &BTreeMap<String, Vec<u8>>, origin: &str) -> String {
    let total: u64 = files.values().map(|b| b.len() as u64).sum();
    let mut out = format!(
        "{name} ({origin}): {}, {}\n",
        count(files.len()),
        human(total)
    );
    for (path, bytes) in files {
        let _ = writeln!(out, "{:>10}  {path}", bytes.len());
    }
    out
}

pub(crate) fn count(n: usize) -> String {
    format!("{n} file{}", if n == 1 { "" } else { "s" })
}

/// `812 B`, `4.1 KiB`, `60.2 MiB`.
pub(crate) fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// How to name `path` in a command the user can paste: relative to the
/// current directory when inside it, with `./` so a shell runs it.
fn shown_path(path: &Path) -> String {
    let rel = std::env::current_dir().ok().and_then(|cwd| {
        let full = path.canonicalize().ok()?;
        full.strip_prefix(cwd.canonicalize().ok()?)
            .ok()
            .map(Path::to_path_buf)
    });
    match rel {
        Some(r) => format!("./{}", r.display()),
        None => path.display().to_string(),
    }
}

/// Start of a built executable: its command line takes the server flags
/// only, then the packed app is served as `cove <dir>` would serve it —
/// with `--verify-sig`, only once its signature checks out.
pub fn serve_built(built: pack::Built) -> Result<i32> {
    let name = built.pack.name.clone();
    let matches = match crate::cli::built_command(&name).try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            let code = match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => 0,
                _ => 1,
            };
            return Ok(code);
        }
    };
    let args = ServeArgs::from_arg_matches(&matches)?;
    if let Some(app) = &args.app {
        bail!(
            "this executable serves the app {name} built into it and takes no APP argument \
             (got {}); serve another app with `cove {}`",
            app.display(),
            app.display()
        );
    }
    let verified = match &args.verify_sig {
        Some(pubkey) => {
            serve::init(&args);
            let verified = sign::verify_at_start(&built, pubkey)?;
            cove_core::log::info(&verified.summary);
            Some(verified.manifest)
        }
        None => None,
    };
    serve::run_verified(&args, app::from_pack(built.pack)?, verified)?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human(0), "0 B");
        assert_eq!(human(1023), "1023 B");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(60 << 20), "60.0 MiB");
    }

    #[test]
    fn listing_shows_name_sizes_and_paths() {
        let mut files = BTreeMap::new();
        files.insert("app.lua".to_string(), vec![0; 12]);
        files.insert("migrations/001.sql".to_string(), vec![0; 3]);
        let text = listing("demo", &files, "from demo");
        assert_eq!(
            text,
            "demo (from demo): 2 files, 15 B\n        12  app.lua\n         3  migrations/001.sql\n"
        );
    }
}
