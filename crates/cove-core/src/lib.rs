//! The app model: routes, middleware, the request/response exchange and the
//! pipeline that runs them. It knows nothing of Lua or JavaScript: a script
//! runtime implements [`Engine`] and the pipeline calls it by [`HandlerId`].

mod append;
pub mod audit;
mod cap_error;
pub mod date;
mod events;
mod exchange;
pub mod fault;
mod files;
pub mod io;
mod job;
mod limits;
pub mod location;
pub mod log;
mod pipeline;
mod query;
mod response;
mod router;
mod suggest;
pub mod telemetry;
mod text;
mod url;
mod websocket;

pub use append::{append, Room};
pub use cap_error::CapError;
pub use events::{
    check_message, check_topic, event, published_so_far, EventStream, Feed, LiveParts, Published,
    Publisher, MAX_MESSAGE, MAX_OUTBOX, MAX_TOPIC, MAX_TOPICS as MAX_EVENT_TOPICS,
    PUBLISH_OUTSIDE_REQUEST,
};
pub use exchange::{header_map, Exchange, HeaderMap, Request, ScriptConfig};
pub use files::{clean_relative, walk_app_dir, AppFiles, Pack};
pub use job::{block_on, waiting_in_place, Job, JobFuture, JobOutput, JobWork};
pub use limits::{release_heap, set_heap_release, LimitHit, Limits, OUT_OF_HEAP, OVER_BUDGET};
pub use pipeline::{
    run_main, run_main_blocking, run_pre, run_pre_blocking, App, DbTurn, Engine, Flow, ScriptApp,
    ScriptError, Step, TurnTx, TurnUse, UPGRADE_REQUIRED,
};
pub use query::{parse_query, percent_decode};
pub use response::{Response, ResponseError, DEFAULT_CSP};
pub use router::{
    HandlerId, MiddlewarePattern, Params, Phase, Plan, RouteError, RouteTable, Target,
};
pub use suggest::{closest, hint};
pub use text::{js_number, lua_float, utf8_lossy};
pub use url::redact_url;
pub use websocket::{
    check_close, SocketTurn, WsApp, WsCommand, WsConn, WsEvent, WsFuture, MAX_CLOSE_REASON,
    MAX_COMMANDS, WS_NOT_RUNNING,
};
