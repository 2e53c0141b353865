//! Command-line interface (Hull §1.2 flags, plus `--workers`, `--max-body`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// `cove --version`: the package version, marked when tools/build-pgo built
/// the binary (benchmark reports quote it).
pub const VERSION: &str = match option_env!("COVE_PGO") {
    Some(_) => concat!(env!("CARGO_PKG_VERSION"), " (pgo)"),
    None => env!("CARGO_PKG_VERSION"),
};

/// The visible command names, for "did you mean" on a mistyped one.
pub fn command_names() -> Vec<String> {
    use clap::CommandFactory;
    Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect()
}

/// Serve a Hull-style Lua or JavaScript web app with SQLite built in, on every core.
#[derive(Debug, Parser)]
#[command(
    name = "cove",
    version = VERSION,
    about,
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  cove -p 8080 -d data.db examples/hello/app.lua\n  cove -p 8080 examples/hello/app.js\n  cove examples/rest_api          (a directory: its app.js, else its app.lua, is served)\n  cove new blog && cove test blog && cove dev blog\n  cove build blog                 (writes blog/blog: one file, Cove and the app)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the app: the same as `cove [OPTIONS] [APP]`.
    Serve(ServeArgs),
    /// Run the app's tests (test_*.lua / test_*.js / test_*.ts) in-process against an in-memory database.
    Test(TestArgs),
    /// Create a new app: entry file, first migration and a passing test.
    New(NewArgs),
    /// Serve the app and reload it whenever one of its files changes.
    Dev(DevArgs),
    /// Apply pending migrations, show their status, or create a new one.
    #[command(
        after_help = "Migrations are migrations/NNN_name.sql, applied in name order, each in \
its own transaction, recorded in _hull_migrations.\n\
Where SQL differs between SQLite and PostgreSQL, put NNN_name.postgres.sql or \
NNN_name.sqlite.sql beside NNN_name.sql: on its backend a variant replaces the plain \
file, the other backend ignores it; all are recorded as NNN_name.sql.\n\
On PostgreSQL (-d postgres://…) an advisory lock makes processes that start at once \
apply each file exactly once.\n\n\
Examples:\n  cove migrate\n  cove migrate status -d postgres://app:secret@db/app\n  \
cove migrate new add_tags"
    )]
    Migrate(MigrateArgs),
    /// Pack Cove and the app into one executable file.
    Build(BuildArgs),
    /// Write a key pair for signing builds: NAME.key (secret) and NAME.pub.
    Keygen(KeygenArgs),
    /// Show what a built executable holds, who signed it, and whether it is intact.
    Inspect(InspectArgs),
    /// Print the app's routes and middleware as JSON.
    Routes(RoutesArgs),
    /// Inspect the app's database: schema or a query, as JSON.
    Db(DbArgs),
    /// Send one HTTP request to the running `cove dev` server; the response as JSON.
    #[command(
        after_help = "The port is -p, else the one in <app>/.cove/dev.json (written by `cove dev`), \
else 3000.\n\nExamples:\n  cove request GET /tasks\n  \
cove request POST /tasks -H 'Content-Type: application/json' -d '{\"title\":\"x\"}'"
    )]
    Request(RequestArgs),
    /// Serve the app's tools to a coding agent over the Model Context Protocol (stdio, or --http).
    #[command(
        after_help = "Attaches to the app's running `cove dev` server, or starts one and stops it \
when the session ends. See docs/agents.md.\n\nExamples:\n  claude mcp add cove -- cove mcp /path/to/app\n  \
cove mcp --http 127.0.0.1:8765 blog"
    )]
    Mcp(McpArgs),
    /// Print the last error of the app's dev server as JSON (`{"errors":[]}` when none).
    Errors(AppDirArgs),
    /// Print whether the app's dev server runs, and on which port, as JSON.
    Status(StatusArgs),
    /// Hull's `hull agent …` commands, printing Hull's JSON shapes (docs/agents.md).
    #[command(
        after_help = "Each prints one JSON line; see docs/agents.md.\n\nExamples:\n  \
cove agent routes\n  cove agent db query \"SELECT * FROM todos\"\n  cove agent status\n  \
cove agent test"
    )]
    Agent(AgentArgs),
    /// Write the editor types (TypeScript declarations, LuaLS annotations) into the app's .cove/types/, and an editor config if it has none.
    Types(TypesArgs),
    /// Serve `Hello World!` on /hello and a fixed JSON body elsewhere, with no script: the benchmark's HTTP baseline.
    #[command(hide = true)]
    Baseline(BaselineArgs),
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// App directory (default: the current directory).
    pub dir: Option<PathBuf>,
    /// Run the suites against PostgreSQL (postgres://…) instead of an
    /// in-memory SQLite database: each runtime's suite gets a schema of its
    /// own in that database, dropped afterwards.
    #[arg(short, long)]
    pub db: Option<String>,
    /// Print one JSON line per runtime instead of text (each case with its
    /// status, duration and, when it failed, the error's file and line).
    #[arg(long)]
    pub json: bool,
    /// Run only this test file: its path in the app (tests/test_app.lua)
    /// or its file name (test_app.lua). Repeatable.
    #[arg(long = "file", value_name = "NAME")]
    pub files: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Runtime {
    Lua,
    Js,
}

/// The language `cove new` writes an app in: TypeScript runs on the
/// JavaScript runtime, its types stripped at load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum NewRuntime {
    Lua,
    Js,
    Ts,
}

#[derive(Debug, Args)]
pub struct TypesArgs {
    /// App directory (default: the current directory).
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// Directory to create (its last part names the app).
    pub name: PathBuf,
    /// Language of the app (ts: TypeScript, with a tsconfig.json for `tsc`).
    #[arg(long, value_enum, default_value = "lua")]
    pub runtime: NewRuntime,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct MigrateArgs {
    #[command(subcommand)]
    pub command: Option<MigrateCommand>,
    /// App directory (default: the current directory).
    pub dir: Option<PathBuf>,
    #[command(flatten)]
    pub target: MigrateDb,
}

/// The database `cove migrate` and `cove migrate status` work on.
#[derive(Debug, Args)]
pub struct MigrateDb {
    /// SQLite database file (relative to the current directory), or a PostgreSQL URL.
    #[arg(
        short,
        long,
        env = "DATABASE_URL",
        default_value = "data.db",
        hide_env_values = true
    )]
    pub db: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum MigrateCommand {
    /// List every migration, applied (with its time) or pending.
    Status {
        /// App directory (default: the current directory).
        dir: Option<PathBuf>,
        #[command(flatten)]
        target: MigrateDb,
    },
    /// Create migrations/NNN_<name>.sql with the next number.
    New {
        /// Letters, digits and underscores.
        name: String,
        /// App directory (default: the current directory).
        dir: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// App directory (default: the current directory); with --list, also a built executable.
    pub dir: Option<PathBuf>,
    /// The executable to write (default: <dir>/<app name>).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Only list the files that are (or would be) packed, with their sizes.
    #[arg(long, conflicts_with = "output")]
    pub list: bool,
    /// Leave out files matching PATTERN too (a glob relative to the app
    /// directory, e.g. `scripts` or `static/*.map`; repeatable). tests/ and
    /// top-level *.md are always left out unless --include keeps them.
    #[arg(long, value_name = "PATTERN")]
    pub exclude: Vec<String>,
    /// Pack files matching PATTERN even if left out by default or by --exclude (repeatable).
    #[arg(long, value_name = "PATTERN")]
    pub include: Vec<String>,
    /// Sign the executable with the secret key KEY (NAME.key from `cove
    /// keygen`); the built file then starts with `--verify-sig NAME.pub`.
    #[arg(long, value_name = "KEY", conflicts_with = "list")]
    pub sign: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "NAME.key holds the secret key (128 hex digits: seed and public key, mode 600); \
NAME.pub the public key (64 hex digits). Neither is ever overwritten.\n\n\
Example:\n  cove keygen release && cove build --sign release.key blog && blog/blog --verify-sig release.pub"
)]
pub struct KeygenArgs {
    /// Path and name of the key files, without .key/.pub.
    #[arg(default_value = "developer")]
    pub name: PathBuf,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// An executable written by `cove build`.
    pub file: PathBuf,
    /// Also require a signature by this public key (NAME.pub): exit 1 if
    /// the file is unsigned or signed by another key, as `--verify-sig` would refuse it.
    #[arg(long, value_name = "PUBKEY")]
    pub key: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RoutesArgs {
    /// App directory or entry file (default: the current directory).
    pub dir: Option<PathBuf>,
    /// Which entry to load when the directory has both app.lua and app.js
    /// (default: lua, as Hull's `agent routes`).
    #[arg(long, value_enum)]
    pub runtime: Option<Runtime>,
}

#[derive(Debug, Clone, Args)]
pub struct DevArgs {
    #[command(flatten)]
    pub serve: ServeArgs,
    /// Print what happens as JSON lines on stdout, for coding agents: started,
    /// reloaded, reload_failed, request_error, migrated, log, stopped
    /// (docs/agents.md). The same lines go to .cove/events.jsonl either way.
    #[arg(long)]
    pub agent: bool,
    /// Stop when the process that started this one exits (`cove mcp`'s dev
    /// server, which must not outlive a killed session).
    #[arg(long, hide = true)]
    pub stop_with_parent: bool,
}

#[derive(Debug, Args)]
pub struct AppDirArgs {
    /// App directory (default: the current directory).
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// App directory (default: the current directory).
    pub dir: Option<PathBuf>,
    /// Port to probe (default: the one .cove/dev.json records, else 3000).
    #[arg(short, long)]
    pub port: Option<u16>,
}

#[derive(Debug, Args)]
pub struct AgentArgs {
    #[command(subcommand)]
    pub command: AgentCommand,
}

/// Hull's agent subcommands (hull-api §1.4).
#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// The app's routes and middleware (`cove routes`).
    Routes(RoutesArgs),
    /// The database's schema, or a query's rows (`cove db`).
    Db(DbArgs),
    /// One request to the dev server (`cove request`, the body as text).
    Request(RequestArgs),
    /// Whether the dev server runs (`cove status`).
    Status(StatusArgs),
    /// The dev server's last error (`cove errors`).
    Errors(AppDirArgs),
    /// Run the tests of one runtime (Lua if the app has both) as one JSON line.
    Test(AppDirArgs),
}

#[derive(Debug, Args)]
pub struct DbArgs {
    #[command(subcommand)]
    pub command: DbCommand,
}

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Tables and columns as JSON.
    Schema {
        /// App directory (default: the current directory).
        dir: Option<PathBuf>,
        /// Database file or PostgreSQL URL (default: <dir>/data.db if it exists, else an
        /// in-memory database with the migrations applied).
        #[arg(short, long)]
        db: Option<PathBuf>,
    },
    /// Run one SQL statement (read-only unless --write) and print the rows as JSON.
    Query {
        /// The SQL statement.
        sql: String,
        /// Allow statements that change the database.
        #[arg(long)]
        write: bool,
        /// App directory (default: the current directory).
        dir: Option<PathBuf>,
        /// Database file or PostgreSQL URL (default: <dir>/data.db if it exists, else an
        /// in-memory database with the migrations applied).
        #[arg(short, long)]
        db: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct RequestArgs {
    /// HTTP method (GET, POST, …).
    pub method: String,
    /// Path and query, e.g. /tasks?done=1.
    pub path: String,
    /// A request header `Name: value` (repeatable).
    #[arg(short = 'H', long, value_name = "HEADER")]
    pub header: Vec<String>,
    /// The request body.
    #[arg(short, long, value_name = "BODY")]
    pub data: Option<String>,
    /// Port of the server on 127.0.0.1.
    #[arg(short, long)]
    pub port: Option<u16>,
    /// App directory whose .cove/dev.json names the port (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub app: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// App directory (default: the current directory).
    pub app: Option<PathBuf>,
    /// Port for the `cove dev` server it starts when none is running (0: a free one).
    #[arg(short, long, default_value_t = 0)]
    pub port: u16,
    /// Database file of that server (default: data.db in the app directory).
    #[arg(short, long)]
    pub db: Option<PathBuf>,
    /// Let the `query` tool run statements that change the database.
    #[arg(long)]
    pub allow_writes: bool,
    /// Serve MCP over streamable HTTP at http://ADDR/mcp instead of stdio
    /// (a loopback address: the endpoint has no authentication).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
}

#[derive(Debug, Args)]
pub struct BaselineArgs {
    #[arg(short, long, default_value_t = 3000)]
    pub port: u16,
    #[arg(short, long, default_value = "127.0.0.1")]
    pub bind: String,
    #[arg(long)]
    pub workers: Option<usize>,
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// App file or directory (default: app.js, else app.ts, else app.lua, in the current directory).
    pub app: Option<PathBuf>,

    /// Port to listen on (0 picks a free port; the startup line shows it).
    #[arg(short, long, default_value_t = 3000)]
    pub port: u16,

    /// Address to bind (IPv4 or IPv6 literal).
    #[arg(short, long, default_value = "127.0.0.1")]
    pub bind: String,

    /// SQLite database file (relative to the current directory), or a
    /// PostgreSQL URL: postgres://user:password@host:port/database.
    #[arg(
        short,
        long,
        env = "DATABASE_URL",
        default_value = "data.db",
        hide_env_values = true
    )]
    pub db: PathBuf,

    /// Put the shared kv store on Redis (redis://host:port/db), so every
    /// process of a deployment shares rate limits, counters and app data
    /// (default: in this process).
    #[arg(long, env = "COVE_KV_URL", hide_env_values = true)]
    pub kv: Option<String>,

    /// Log level.
    #[arg(short, long, default_value = "info",
          value_parser = ["trace", "debug", "info", "warn", "error", "fatal"])]
    pub log_level: String,

    /// Heap limit of each script VM (e.g. 64m, 512k, 1g).
    #[arg(short = 'm', long = "max-heap", default_value = "64m", value_parser = parse_size)]
    pub max_heap: usize,

    /// Largest accepted request body; bigger ones get 413.
    #[arg(long, default_value = "1m", value_parser = parse_size)]
    pub max_body: usize,

    /// Largest WebSocket message (and frame) a client may send; a bigger
    /// one closes its connection with 1009.
    #[arg(long, default_value = "1m", value_parser = parse_size)]
    pub ws_max_message: usize,

    /// Instructions a handler or middleware call may run before it is
    /// stopped with a 500 (a runaway loop); 0 is taken as the default, as in Hull.
    #[arg(
        long,
        env = "HULL_MAX_INSTRUCTIONS",
        hide_env_values = true,
        default_value_t = 100_000_000
    )]
    pub max_instructions: u64,

    /// Milliseconds in-flight requests get to finish on SIGINT/SIGTERM.
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(0..=300_000))]
    pub drain_timeout: u64,

    /// Take the listening sockets over from the Cove server listening for
    /// a takeover at PATH (its --takeover-socket), instead of binding the
    /// port; once this one serves, that one drains and exits
    /// (docs/operations.md, "Deploys").
    #[arg(long, value_name = "PATH")]
    pub takeover: Option<PathBuf>,

    /// Listen on the Unix socket PATH for a new process started with
    /// --takeover PATH, and hand it the listening sockets.
    #[arg(long, value_name = "PATH")]
    pub takeover_socket: Option<PathBuf>,

    /// Largest request head (request line and headers); a bigger one gets
    /// 431 and the connection is closed.
    #[arg(long, default_value = "64k", value_parser = parse_size)]
    pub max_header: usize,

    /// Longest request target (path and query); a longer one gets 414.
    #[arg(long, default_value = "8k", value_parser = parse_size)]
    pub max_url: usize,

    /// Milliseconds a client has to send a whole request head, counted from
    /// connecting or from the first byte of a later request; then it gets
    /// 408 and is disconnected.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub header_timeout: u64,

    /// Milliseconds a kept-alive connection may wait for its next request,
    /// or for the client to read more of a response, before it is closed.
    #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub idle_timeout: u64,

    /// Commit each write on its own instead of grouping the writes of one
    /// event-loop turn into one transaction (reads then also take a snapshot
    /// each instead of sharing one per turn).
    #[arg(long)]
    pub no_group_commit: bool,

    /// Do not apply pending migrations at start.
    #[arg(long)]
    pub no_migrate: bool,

    /// Serve without the kernel sandbox (Linux: Landlock and seccomp), which
    /// otherwise limits the server, once the app has loaded, to the files,
    /// ports and system calls the app needs. `cove dev` never applies it.
    #[arg(long)]
    pub no_sandbox: bool,

    /// Write the audit log: one JSON line on stderr per capability use (env
    /// reads, outbound http and smtp, the stdlib's writes to its tables,
    /// crypto with keys, the sandbox); see docs/security.md. HULL_AUDIT=1
    /// turns it on too.
    #[arg(long, env = "COVE_AUDIT", value_parser = clap::builder::BoolishValueParser::new())]
    pub audit: bool,

    /// Serve Prometheus metrics at http://ADDR/metrics (e.g.
    /// 127.0.0.1:9100), a live dashboard at http://ADDR/ and the last errors
    /// at /errors, on a listener of their own; never the app's address. Off
    /// by default. See docs/operations.md.
    #[arg(long, value_name = "ADDR", env = "COVE_METRICS")]
    pub metrics: Option<std::net::SocketAddr>,

    /// Write an access log: one line per request (client, request line,
    /// status, bytes, request id, route pattern, duration, worker) to
    /// `stdout` or FILE, appended; written off the request path by a thread
    /// of its own, and reopened on SIGUSR1 (logrotate). See
    /// docs/operations.md.
    #[arg(long, value_name = "stdout|FILE", env = "COVE_ACCESS_LOG")]
    pub access_log: Option<cove_server::access_log::Target>,

    /// The access log's lines: `combined` (Apache/nginx's, Cove's fields
    /// appended) or `json` (one object per line).
    #[arg(
        long,
        value_name = "combined|json",
        default_value = "combined",
        env = "COVE_ACCESS_LOG_FORMAT"
    )]
    pub access_log_format: cove_server::access_log::Format,

    /// Tests only: once a thread has entered the sandbox, try OP (read=PATH,
    /// write=PATH, spawn=PATH, exec=PATH, connect=ADDR, bind=ADDR, udp) and
    /// print what the kernel answered (repeatable).
    #[arg(long, hide = true, value_name = "OP")]
    pub sandbox_probe: Vec<String>,

    /// Worker threads, each with its own VM and SQLite connection (default: cores).
    #[arg(short = 'w', long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub workers: Option<u64>,

    /// Serve HTTPS with this certificate chain (PEM, the server's certificate
    /// first); needs --tls-key. HTTP/2 and HTTP/1.1 are offered by ALPN. The
    /// pair is read again on SIGHUP and when the files change.
    #[arg(
        long,
        value_name = "FILE",
        requires = "tls_key",
        help_heading = "HTTPS and HTTP/2"
    )]
    pub tls_cert: Option<PathBuf>,

    /// The private key of --tls-cert (PEM: PKCS#8, RSA or EC).
    #[arg(
        long,
        value_name = "FILE",
        requires = "tls_cert",
        help_heading = "HTTPS and HTTP/2"
    )]
    pub tls_key: Option<PathBuf>,

    /// With --tls-cert or --acme: also listen for plain HTTP on PORT and answer every
    /// request with a 308 redirect to the same URL over HTTPS.
    #[arg(
        long,
        value_name = "PORT",
        requires = "tls_cert",
        help_heading = "HTTPS and HTTP/2"
    )]
    pub redirect_http: Option<u16>,

    /// Serve HTTPS with certificates obtained and renewed automatically over
    /// ACME (Let's Encrypt unless --acme-dir says otherwise) for these domains
    /// (comma-separated). The CA checks each domain by connecting to this
    /// server's port (TLS-ALPN-01), so the domains must point here and the
    /// port must be the one the CA connects to (443).
    #[arg(
        long,
        value_name = "DOMAIN,…",
        value_delimiter = ',',
        conflicts_with = "tls_cert",
        help_heading = "HTTPS and HTTP/2"
    )]
    pub acme: Vec<String>,

    /// With --acme: the contact address for the ACME account (expiry notices).
    #[arg(long, value_name = "EMAIL", help_heading = "HTTPS and HTTP/2")]
    pub acme_email: Option<String>,

    /// With --acme: the CA's directory URL (e.g. Let's Encrypt's staging
    /// directory while testing).
    #[arg(long, value_name = "URL", default_value = cove_server::LETS_ENCRYPT,
          help_heading = "HTTPS and HTTP/2")]
    pub acme_dir: String,

    /// With --acme: where the account key and certificates are kept (created
    /// with mode 0700), so restarts reuse them.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "acme",
        help_heading = "HTTPS and HTTP/2"
    )]
    pub acme_cache: PathBuf,

    /// With --acme: a root certificate (PEM) to trust for the directory's own
    /// HTTPS besides the public roots: a private or test CA.
    #[arg(long, value_name = "FILE", help_heading = "HTTPS and HTTP/2")]
    pub acme_ca: Option<PathBuf>,

    /// On a plain-HTTP port, also speak HTTP/2 to clients that start with its
    /// preface (h2c "prior knowledge", e.g. behind a proxy that speaks h2c).
    #[arg(long, conflicts_with_all = ["tls_cert", "acme"], help_heading = "HTTPS and HTTP/2")]
    pub h2c: bool,

    /// HTTP/2: requests one connection may have in progress at once.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=10_000),
          help_heading = "HTTPS and HTTP/2")]
    pub h2_max_streams: u32,

    /// Start only if this executable (written by `cove build --sign`) is
    /// signed by PUBKEY (NAME.pub from `cove keygen`) and its Cove binary,
    /// files and manifest are the ones signed; plain `cove` refuses it.
    #[arg(long, value_name = "PUBKEY", env = "COVE_VERIFY_SIG")]
    pub verify_sig: Option<PathBuf>,
}

/// The command line of an executable written by `cove build`: the server
/// flags only, under the app's name. `APP` stays parseable but hidden so a
/// stray path gets a message that explains it (see `build::serve_built`)
/// rather than clap's "unexpected argument".
pub fn built_command(app: &str) -> clap::Command {
    let cove = VERSION;
    // clap keeps names as `&'static str`; this runs once per process.
    let name: &'static str = Box::leak(app.to_string().into_boxed_str());
    let version: &'static str = Box::leak(format!("(built with cove {cove})").into_boxed_str());
    let bin = std::env::args_os()
        .next()
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string());
    ServeArgs::augment_args(clap::Command::new(name))
        .bin_name(bin.clone())
        .version(version)
        .about(format!(
            "Serves the app {app}, built into this file with cove {cove} (`cove build`). \
             Its code, migrations and files come from inside this executable; the \
             database is the file given by --db."
        ))
        .after_help(format!(
            "Example:\n  {bin} -p 8080 -d data.db    (the same flags as `cove [flags] <app dir>`)"
        ))
        .mut_arg("app", |a| a.hide(true))
}

/// `64m` → 67108864. Suffixes k, m, g (powers of 1024), case-insensitive.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_lowercase() {
                'k' => 1usize << 10,
                'm' => 1 << 20,
                'g' => 1 << 30,
                _ => return Err(format!("unknown size suffix in {s:?} (use k, m or g)")),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    let n: usize = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size (examples: 1048576, 512k, 64m, 1g)"))?;
    n.checked_mul(mult)
        .filter(|&v| v > 0)
        .ok_or_else(|| format!("{s:?} is out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("64m"), Ok(64 << 20));
        assert_eq!(parse_size("2K"), Ok(2048));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert!(parse_size("12x").is_err());
        assert!(parse_size("m").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("-5").is_err());
    }

    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        built_command("demo").debug_assert();
    }
}
