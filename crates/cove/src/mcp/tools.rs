//! The MCP tools. Each returns one JSON text; a failure is a tool result
//! with `isError` (MCP's way for errors the agent should read and act on),
//! its text naming file:line where the underlying error does.

use std::collections::BTreeMap;
use std::fs;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router, ErrorData as McpError};
use serde::Deserialize;
use serde_json::{json, Value as Json};

use super::{events, CoveMcp, Ctx};
use crate::agent::state;
use crate::agent::state::dev_json;
use crate::cli::{RoutesArgs, Runtime};
use crate::inspect::{query_json, routes_json, schema_json, WRITE_REFUSED};

/// How long `reload` and `migrate` wait for the dev server's answer.
const RELOAD_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct QueryParams {
    /// One SQL statement, e.g. `SELECT * FROM items LIMIT 10`.
    pub sql: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RequestParams {
    /// GET, POST, PUT, DELETE, …
    pub method: String,
    /// Path and query, e.g. `/items?done=1`.
    pub path: String,
    /// Request headers, e.g. {"Content-Type": "application/json"}.
    pub headers: Option<BTreeMap<String, String>>,
    /// The request body (text; JSON as a string).
    pub body: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct TestParams {
    /// Only this test file, e.g. `tests/test_items.lua` (default: all).
    pub file: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct LogParams {
    /// How many of the last events to return (default 100).
    pub lines: Option<usize>,
    /// Only events of this kind: started, reloaded, reload_failed,
    /// request_error, migrated, log, stopped.
    pub event: Option<String>,
}

/// Runs `f` off the async runtime (it blocks: files, sockets, SQLite,
/// subprocesses) and turns its outcome into a tool result.
async fn blocking(
    ctx: &Arc<Ctx>,
    f: impl FnOnce(&Ctx) -> Result<Json> + Send + 'static,
) -> Result<CallToolResult, McpError> {
    let ctx = ctx.clone();
    let outcome = tokio::task::spawn_blocking(move || f(&ctx))
        .await
        .map_err(|e| McpError::internal_error(format!("tool panicked: {e}"), None))?;
    Ok(match outcome {
        Ok(v) => CallToolResult::success(vec![ContentBlock::text(v.to_string())]),
        Err(e) => CallToolResult::error(vec![ContentBlock::text(format!("{e:#}"))]),
    })
}

#[tool_router(vis = "pub(super)")]
impl CoveMcp {
    #[tool(
        description = "List the app's routes and middleware (method, pattern, phase) in the order a request meets them."
    )]
    async fn routes(&self) -> Result<CallToolResult, McpError> {
        blocking(&self.ctx, |ctx| {
            let runtime = dev_json(&ctx.dir).and_then(|d| match d["runtime"].as_str() {
                Some("js") => Some(Runtime::Js),
                Some("lua") => Some(Runtime::Lua),
                _ => None,
            });
            routes_json(&RoutesArgs {
                dir: Some(ctx.dir.clone()),
                runtime,
            })
        })
        .await
    }

    #[tool(
        description = "Tables and columns (type, notnull, default, pk) of the app's dev database."
    )]
    async fn schema(&self) -> Result<CallToolResult, McpError> {
        blocking(&self.ctx, |ctx| schema_json(Some(&ctx.dir), ctx.db_file())).await
    }

    #[tool(
        description = "Run one SQL statement on the app's dev database; returns columns and rows. Read-only unless the server was started with --allow-writes."
    )]
    async fn query(
        &self,
        Parameters(p): Parameters<QueryParams>,
    ) -> Result<CallToolResult, McpError> {
        blocking(&self.ctx, move |ctx| {
            // The app may not touch Cove's own tables, so neither may its agent
            // (Hull's lexical rule: the name anywhere in the text).
            if cove_db::mentions_reserved(&p.sql) {
                bail!(
                    "the _hull_* tables are Cove's own (migrations, sessions, kv) and the app                      cannot touch them, so this tool does not either; read them with                      `cove db query` in a terminal"
                );
            }
            query_json(&p.sql, ctx.allow_writes, Some(&ctx.dir), ctx.db_file()).map_err(|e| {
                if e.to_string().starts_with(WRITE_REFUSED) {
                    anyhow!(
                        "{WRITE_REFUSED}, and this MCP server is read-only: restart it with \
                         `cove mcp --allow-writes` to allow writes"
                    )
                } else {
                    e
                }
            })
        })
        .await
    }

    #[tool(
        description = "Send an HTTP request to the app through its dev server (middleware, limits and sandbox apply); returns status, headers and body (parsed when JSON), plus the script error with file:line on a 500."
    )]
    async fn request(
        &self,
        Parameters(p): Parameters<RequestParams>,
    ) -> Result<CallToolResult, McpError> {
        blocking(&self.ctx, move |ctx| {
            let port = ctx.link().port()?;
            let headers: Vec<(String, String)> =
                p.headers.unwrap_or_default().into_iter().collect();
            let since = events::mark(&ctx.dir);
            let mut response = crate::request::send(
                port,
                &p.method,
                &p.path,
                &headers,
                p.body.as_deref().map(str::as_bytes),
            )?;
            if response["status"].as_u64().is_some_and(|s| s >= 500) {
                // dev appends the event as it answers; give the write a moment.
                let error = events::wait_for(
                    &ctx.dir,
                    &since,
                    |e| events::is(e, "request_error"),
                    Duration::from_millis(500),
                );
                if let Some(e) = error.and_then(|mut es| es.pop()) {
                    response["error"] = e;
                }
            }
            Ok(response)
        })
        .await
    }

    #[tool(
        description = "Run the app's tests (tests/test_*.lua, .js, .ts), or only one file; returns each test's result as JSON."
    )]
    async fn run_tests(
        &self,
        Parameters(p): Parameters<TestParams>,
    ) -> Result<CallToolResult, McpError> {
        blocking(&self.ctx, move |ctx| run_tests(ctx, p.file.as_deref())).await
    }

    #[tool(
        description = "The dev server's last events (started, reloaded, reload_failed, request_error, migrated, log, stopped), oldest first; optionally only one kind."
    )]
    async fn logs(&self, Parameters(p): Parameters<LogParams>) -> Result<CallToolResult, McpError> {
        blocking(&self.ctx, move |ctx| {
            let events = events::tail(&ctx.dir, p.lines.unwrap_or(100), p.event.as_deref());
            Ok(json!({ "events": events }))
        })
        .await
    }

    #[tool(
        description = "The app's current error (a failed load or a failing request, with file:line), or null, and the recent errors."
    )]
    async fn errors(&self) -> Result<CallToolResult, McpError> {
        blocking(&self.ctx, |ctx| {
            let last = fs::read_to_string(state::path(&ctx.dir, state::LAST_ERROR))
                .ok()
                .and_then(|t| serde_json::from_str::<Json>(&t).ok());
            let mut recent: Vec<Json> = events::all(&ctx.dir)
                .into_iter()
                .filter(|e| e["event"] == "request_error" || e["event"] == "reload_failed")
                .collect();
            recent.drain(..recent.len().saturating_sub(20));
            Ok(json!({ "last_error": last, "recent": recent }))
        })
        .await
    }

    #[tool(
        description = "Reload the app now (pending migrations are applied first); returns the reloaded event, or the error with file:line."
    )]
    async fn reload(&self) -> Result<CallToolResult, McpError> {
        blocking(&self.ctx, |ctx| {
            let (done, migrated) = request_reload(ctx)?;
            Ok(json!({ "result": done, "migrated": migrated }))
        })
        .await
    }

    #[tool(
        description = "Apply the app's pending migrations (migrations/*.sql) to the dev database; returns the names applied."
    )]
    async fn migrate(&self) -> Result<CallToolResult, McpError> {
        blocking(&self.ctx, |ctx| {
            let (_, migrated) = request_reload(ctx)?;
            if migrated.is_empty() {
                return Ok(json!({ "applied": [], "message": "already up to date" }));
            }
            Ok(json!({ "applied": migrated }))
        })
        .await
    }

    #[tool(
        description = "Whether the app's dev server is running, and its port, URL, pid, runtime and entry file."
    )]
    async fn status(&self) -> Result<CallToolResult, McpError> {
        blocking(&self.ctx, |ctx| {
            let link = ctx.link();
            Ok(json!({
                "running": link.port().is_ok(),
                "started_by_mcp": link.started_here(),
                "app": ctx.dir,
                "dev": dev_json(&ctx.dir),
            }))
        })
        .await
    }
}

/// `cove test --json [--file F] DIR` in a child process: a test that
/// crashes or hangs its VM does not take the MCP server with it.
fn run_tests(ctx: &Ctx, file: Option<&str>) -> Result<Json> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args(["test", "--json"]);
    if let Some(file) = file {
        cmd.args(["--file", file]);
    }
    let out = cmd
        .arg(&ctx.dir)
        .stdin(std::process::Stdio::null())
        .output()
        .context("running `cove test`")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let results: Vec<Json> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let code = out.status.code();
    if results.is_empty() {
        bail!(
            "`cove test` printed no results (exit {code:?}): {}{}",
            String::from_utf8_lossy(&out.stderr).trim(),
            stdout.trim()
        );
    }
    // A run that could not start prints `{"error"}` (naming file:line when
    // it has one) instead of suites.
    if let Some(error) = results
        .iter()
        .find_map(|r| r["error"].as_str().filter(|_| r.get("files").is_none()))
    {
        bail!("{error}");
    }
    Ok(json!({ "exit_code": code, "passed": out.status.success(), "results": results }))
}

/// Ask the dev server to reload (`.cove/reload`) and wait for the outcome:
/// the `reloaded` event and the migrations applied before it, or an error
/// naming file:line from a `reload_failed` event.
fn request_reload(ctx: &Ctx) -> Result<(Json, Vec<Json>)> {
    if !ctx.link().running() {
        bail!("no `cove dev` is running for {}", ctx.dir.display());
    }
    let since = events::mark(&ctx.dir);
    fs::create_dir_all(ctx.dir.join(state::DIR))?;
    fs::write(state::path(&ctx.dir, state::RELOAD), "").context("writing .cove/reload")?;
    // A reload the watcher started for an edit may come first; its
    // migrations still count, but the answer is the requested one.
    let answered = |e: &Json| {
        (events::is(e, "reloaded") && e["requested"] == true) || events::is(e, "reload_failed")
    };
    let events = events::wait_for(&ctx.dir, &since, answered, RELOAD_TIMEOUT).ok_or_else(|| {
        anyhow!(
            "the dev server did not answer the reload within {} s (is it a `cove dev` that \
                 watches .cove/reload?)",
            RELOAD_TIMEOUT.as_secs()
        )
    })?;
    let migrated: Vec<Json> = events
        .iter()
        .filter(|e| events::is(e, "migrated"))
        .flat_map(|e| e["applied"].as_array().cloned().unwrap_or_default())
        .collect();
    let done = events.last().cloned().unwrap_or_default();
    if done["event"] == "reload_failed" {
        bail!("{}\n{done}", event_error(&done));
    }
    Ok((done, migrated))
}

/// `file:line: message` of an error event (just the message when the place
/// is unknown).
pub(crate) fn event_error(e: &Json) -> String {
    let message = e["message"]
        .as_str()
        .or(e["error"].as_str())
        .unwrap_or("unknown error");
    match (e["file"].as_str(), e["line"].as_u64()) {
        (Some(file), Some(line)) => format!("{file}:{line}: {message}"),
        (Some(file), None) => format!("{file}: {message}"),
        _ => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::Mutex;

    /// Answers `.cove/reload` requests as `cove dev` does, with `answers`
    /// (event objects without `time`), one request each.
    fn fake_dev(dir: &std::path::Path, answers: Vec<Vec<Json>>) -> std::thread::JoinHandle<()> {
        let dir = dir.to_path_buf();
        std::thread::spawn(move || {
            for answer in answers {
                let reload = state::path(&dir, state::RELOAD);
                while fs::remove_file(&reload).is_err() {
                    std::thread::sleep(Duration::from_millis(10));
                }
                let mut log = fs::OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(state::path(&dir, state::EVENTS))
                    .unwrap();
                for mut event in answer {
                    event["time"] = crate::agent::state::now_ms().into();
                    writeln!(log, "{event}").unwrap();
                }
            }
        })
    }

    #[test]
    fn reload_waits_for_the_answer_and_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join(".cove")).unwrap();
        // An old answer from before the request must not count.
        let old = json!({ "event": "reloaded", "time": 1 });
        fs::write(state::path(dir.path(), state::EVENTS), format!("{old}\n")).unwrap();
        let me = json!({ "port": 1, "pid": std::process::id() });
        fs::write(state::path(dir.path(), state::DEV), me.to_string()).unwrap();
        let ctx = Ctx {
            dir: dir.path().to_path_buf(),
            db: dir.path().join("data.db"),
            allow_writes: false,
            link: Mutex::new(super::super::dev_link::DevLink::attached(dir.path())),
        };
        let dev = fake_dev(
            dir.path(),
            vec![
                vec![
                    json!({ "event": "migrated", "applied": ["002_tags.sql"] }),
                    json!({ "event": "reloaded", "files": [], "requested": true }),
                ],
                vec![
                    json!({ "event": "reload_failed", "file": "app.lua", "line": 3,
                             "message": "unexpected symbol", "error": "app.lua:3: unexpected symbol" }),
                ],
            ],
        );
        let (done, migrated) = request_reload(&ctx).unwrap();
        assert_eq!(done["event"], "reloaded");
        assert_eq!(migrated, [json!("002_tags.sql")]);
        let e = request_reload(&ctx).unwrap_err().to_string();
        assert!(e.starts_with("app.lua:3: unexpected symbol\n"), "{e}");
        dev.join().unwrap();
    }

    #[test]
    fn error_events_read_as_file_line_message() {
        let e = json!({ "file": "app.lua", "line": 7, "message": "boom" });
        assert_eq!(event_error(&e), "app.lua:7: boom");
        assert_eq!(
            event_error(&json!({ "file": null, "line": null, "message": "m" })),
            "m"
        );
        assert_eq!(event_error(&json!({ "error": "x" })), "x");
    }
}
