//! The peer servers: their `peer.json` descriptions, installing them into
//! bench/.peers/, and what the report says about each (version, size).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;

use crate::workloads::Group;

/// One entry of a bench/peers/<folder>/peer.json.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerSpec {
    pub name: String,
    pub label: String,
    /// bench/peers/<folder>: where the install script lives.
    pub folder: String,
    pub groups: Vec<Group>,
    pub cmd: Vec<String>,
    pub env: Vec<(String, String)>,
    pub workers_env: Option<String>,
    pub version: Vec<String>,
    pub size: Vec<String>,
    pub note: Option<String>,
    /// Connections to the database of a group (`pg`, `redis`), shown
    /// beside the rows of that group's table.
    pub pool: Vec<(Group, String)>,
}

fn strings(v: Option<&Value>, what: &str) -> Result<Vec<String>> {
    match v {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(String::from)
                    .ok_or_else(|| anyhow!("{what}: expected strings"))
            })
            .collect(),
        Some(_) => bail!("{what}: expected an array of strings"),
    }
}

/// Parse a peer.json (a JSON array of server entries).
pub fn parse_specs(folder: &str, text: &str) -> Result<Vec<PeerSpec>> {
    let v: Value = serde_json::from_str(text).context("not valid JSON")?;
    let Value::Array(entries) = v else {
        bail!("expected a JSON array of servers");
    };
    entries
        .iter()
        .map(|e| {
            let field = |k: &str| e.get(k).and_then(Value::as_str).map(String::from);
            let name = field("name").ok_or_else(|| anyhow!("an entry has no \"name\""))?;
            let at = |what: &str| format!("{name}: {what}");
            let groups = strings(e.get("groups"), &at("groups"))?
                .iter()
                .map(|g| Group::parse(g).ok_or_else(|| anyhow!("{name}: unknown group {g:?}")))
                .collect::<Result<Vec<_>>>()?;
            let cmd = strings(e.get("cmd"), &at("cmd"))?;
            if cmd.is_empty() {
                bail!("{name}: \"cmd\" is missing or empty");
            }
            let pool = match e.get("pool") {
                None => Vec::new(),
                Some(Value::Object(m)) => m
                    .iter()
                    .map(|(k, v)| {
                        let g = Group::parse(k)
                            .ok_or_else(|| anyhow!("{name}: pool: unknown group {k:?}"))?;
                        let text = v
                            .as_str()
                            .ok_or_else(|| anyhow!("{name}: pool {k} must be a string"))?;
                        Ok((g, text.to_string()))
                    })
                    .collect::<Result<_>>()?,
                Some(_) => bail!("{name}: \"pool\" must be an object (group: connections)"),
            };
            let env = match e.get("env") {
                None => Vec::new(),
                Some(Value::Object(m)) => m
                    .iter()
                    .map(|(k, v)| match v.as_str() {
                        Some(s) => Ok((k.clone(), s.to_string())),
                        None => Err(anyhow!("{name}: env {k} must be a string")),
                    })
                    .collect::<Result<_>>()?,
                Some(_) => bail!("{name}: \"env\" must be an object"),
            };
            Ok(PeerSpec {
                label: field("label").unwrap_or_else(|| name.clone()),
                folder: folder.to_string(),
                groups: if groups.is_empty() {
                    vec![Group::Http]
                } else {
                    groups
                },
                cmd,
                env,
                workers_env: field("workers_env"),
                version: strings(e.get("version"), &at("version"))?,
                size: strings(e.get("size"), &at("size"))?,
                note: field("note"),
                pool,
                name,
            })
        })
        .collect()
}

/// Every bench/peers/*/peer.json, sorted by folder.
pub fn load_all(peers_dir: &Path) -> Result<Vec<PeerSpec>> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(peers_dir)
        .with_context(|| format!("cannot read {}", peers_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("peer.json").is_file())
        .collect();
    folders.sort();
    let mut specs = Vec::new();
    for f in folders {
        let folder = f
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let path = f.join("peer.json");
        let text = std::fs::read_to_string(&path)?;
        specs.extend(parse_specs(&folder, &text).with_context(|| format!("{}", path.display()))?);
    }
    Ok(specs)
}

/// Outcome of one folder's install script.
#[derive(Debug, Clone)]
pub struct Installed {
    pub folder: String,
    pub ok: bool,
    /// The script's last output line when it failed.
    pub reason: String,
}

/// Run bench/peers/<folder>/install for every folder that has peers, with
/// its output in bench/.peers/logs/<folder>.install.log.
pub fn install_all(
    peers_dir: &Path,
    install_dir: &Path,
    folders: &[String],
    progress: &dyn Fn(&str),
) -> Result<Vec<Installed>> {
    let logs = install_dir.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| format!("cannot create {}", logs.display()))?;
    let mut out = Vec::new();
    for (i, folder) in folders.iter().enumerate() {
        progress(&format!(
            "installing peers: {folder} ({}/{})",
            i + 1,
            folders.len()
        ));
        let script = peers_dir.join(folder).join("install");
        let log_path = logs.join(format!("{folder}.install.log"));
        let log = std::fs::File::create(&log_path)?;
        let child = Command::new("bash")
            .arg(&script)
            .current_dir(peers_dir.join(folder))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn();
        let finished = match child {
            Ok(mut c) => {
                crate::servers::track(c.id());
                let done = wait_deadline(&mut c, INSTALL_LIMIT);
                crate::servers::untrack(c.id());
                done.map_err(|e| e.to_string())
            }
            Err(e) => Err(format!("cannot run {}: {e}", script.display())),
        };
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let (ok, reason) = match finished {
            Ok(Some(true)) => (true, String::new()),
            Ok(Some(false)) => (false, format!("install failed: {last}")),
            Ok(None) => (
                false,
                format!(
                    "install did not finish in {} min",
                    INSTALL_LIMIT.as_secs() / 60
                ),
            ),
            Err(e) => (false, e),
        };
        out.push(Installed {
            folder: folder.clone(),
            ok,
            reason,
        });
    }
    Ok(out)
}

/// First non-empty output line of `cmd` run in `dir` (stdout, else stderr).
pub fn version(cmd: &[String], dir: &Path) -> String {
    let Some((program, args)) = cmd.split_first() else {
        return "unknown".into();
    };
    let out = Command::new(resolve(program, dir))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(o) => [o.stdout, o.stderr]
            .iter()
            .flat_map(|b| {
                String::from_utf8_lossy(b)
                    .lines()
                    .map(String::from)
                    .collect::<Vec<_>>()
            })
            .find(|l| !l.trim().is_empty())
            .map(|l| l.trim().to_string())
            .unwrap_or_else(|| "unknown".into()),
        Err(_) => "unknown".into(),
    }
}

/// A program named with a `/` is relative to the peer's folder.
pub fn resolve(program: &str, dir: &Path) -> PathBuf {
    if program.contains('/') && !program.starts_with('/') {
        dir.join(program)
    } else {
        PathBuf::from(program)
    }
}

/// Total size on disk (bytes) of files under `paths`, each counted once.
pub fn disk_size(paths: &[PathBuf]) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut seen = BTreeMap::new();
    let mut stack: Vec<PathBuf> = paths.to_vec();
    while let Some(p) = stack.pop() {
        let Ok(meta) = std::fs::metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(rd) = std::fs::read_dir(&p) {
                stack.extend(rd.filter_map(|e| e.ok().map(|e| e.path())));
            }
        } else {
            seen.insert((meta.dev(), meta.ino()), meta.len());
        }
    }
    seen.values().sum()
}

/// An install (npm with a native build, cargo, apt) can take minutes.
const INSTALL_LIMIT: Duration = Duration::from_secs(20 * 60);

/// Wait for a child with a deadline: `Some(success)`, or `None` after
/// killing it when the deadline passed.
fn wait_deadline(child: &mut std::process::Child, limit: Duration) -> Result<Option<bool>> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(Some(s.success()));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_peer_json() {
        let text = r#"[
          {"name": "node-http", "label": "Node.js node:http", "groups": ["http", "sqlite"],
           "cmd": ["node", "node-http.js"], "env": {"A": "1"}, "workers_env": "WORKERS",
           "version": ["node", "--version"], "size": ["/usr/bin/node"], "note": "n"},
          {"name": "bare", "cmd": ["./run.sh"]}
        ]"#;
        let s = parse_specs("node", text).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].groups, [Group::Http, Group::Sqlite]);
        assert_eq!(s[0].env, [("A".to_string(), "1".to_string())]);
        assert_eq!(s[0].workers_env.as_deref(), Some("WORKERS"));
        assert_eq!(s[1].label, "bare");
        assert_eq!(s[1].groups, [Group::Http]);
        assert_eq!(s[1].folder, "node");
        assert!(s[1].pool.is_empty());
    }

    #[test]
    fn parses_database_peers() {
        let text = r#"[{"name": "go-pgx", "groups": ["pg", "redis"], "cmd": ["./gopeer"],
            "pool": {"pg": "pgxpool MaxConns 10", "redis": "go-redis PoolSize 10"}}]"#;
        let s = parse_specs("go", text).unwrap();
        assert_eq!(s[0].groups, [Group::Pg, Group::Redis]);
        assert_eq!(
            s[0].pool,
            [
                (Group::Pg, "pgxpool MaxConns 10".to_string()),
                (Group::Redis, "go-redis PoolSize 10".to_string())
            ]
        );
        let bad = |pool: &str| {
            parse_specs(
                "go",
                &format!(r#"[{{"name": "a", "cmd": ["a"], "pool": {pool}}}]"#),
            )
            .is_err()
        };
        assert!(bad(r#""10""#));
        assert!(bad(r#"{"mysql": "10"}"#));
        assert!(bad(r#"{"pg": 10}"#));
    }

    #[test]
    fn rejects_bad_entries() {
        assert!(parse_specs("x", "{}").is_err());
        assert!(parse_specs("x", r#"[{"cmd": ["a"]}]"#).is_err());
        assert!(parse_specs("x", r#"[{"name": "a"}]"#).is_err());
        assert!(parse_specs("x", r#"[{"name": "a", "cmd": ["a"], "groups": ["mysql"]}]"#).is_err());
        assert!(parse_specs("x", r#"[{"name": "a", "cmd": ["a"], "env": {"A": 1}}]"#).is_err());
    }

    #[test]
    fn programs_with_a_slash_are_relative() {
        let d = Path::new("/x/y");
        assert_eq!(resolve("./run.sh", d), PathBuf::from("/x/y/./run.sh"));
        assert_eq!(resolve("node", d), PathBuf::from("node"));
        assert_eq!(resolve("/usr/bin/node", d), PathBuf::from("/usr/bin/node"));
    }

    #[test]
    fn sizes_count_files_once() {
        let dir = std::env::temp_dir().join(format!("cove-bench-size-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("a"), [0u8; 100]).unwrap();
        std::fs::write(dir.join("sub/b"), [0u8; 50]).unwrap();
        let size = disk_size(&[dir.clone(), dir.join("a"), dir.join("missing")]);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(size, 150);
    }
}
