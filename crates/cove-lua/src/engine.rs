//! Loading an app into a worker's Lua state and running its handlers.

use std::cell::Cell;
use std::rc::Rc;

use mlua::{Function, Lua, Table, Value};

use cove_caps::{Csp, Registered, Shared};
use cove_core::{
    Engine, Exchange, Flow, HandlerId, JobOutput, ScriptApp, ScriptConfig, ScriptError, Target,
};
use cove_db::{Db, SharedDb};

use crate::app_api::AppState;
use crate::bind::DbCell;
use crate::db;
use crate::error::{describe, out_of_heap};
use crate::modules;
use crate::raw::coroutine::{Call, NewReq, RawRef};
use crate::req;
use crate::suspend::{self, Run};
use crate::vm::{new_state, over_budget_fn, unlimited, Budget};

const PRELUDE: &str = include_str!("prelude.lua");

/// Where the app lives and how it is limited.
pub type LuaConfig = ScriptConfig;

/// A loaded Lua app: its routes and the engine that runs them.
pub type LuaApp = ScriptApp<LuaEngine, SharedDb>;

/// Runs handlers by id in one Lua state.
pub struct LuaEngine {
    pub(crate) lua: Lua,
    handlers: Vec<Function>,
    /// The prelude's dispatcher: calls a handler with `req` and `res`.
    dispatch: Function,
    /// Raw references to the dispatcher and the handlers (raw/coroutine.rs).
    dispatch_ref: RawRef,
    handler_refs: Vec<RawRef>,
    /// The prelude's slot of the req table whose call is in progress.
    current: Table,
    /// The metatable of req tables (lazy fields), `current` and the
    /// prelude's `res`, by raw reference.
    req_meta: RawRef,
    current_ref: RawRef,
    res_ref: RawRef,
    /// The app's Content-Security-Policy for `res:html`.
    csp: Rc<Csp>,
    pub(crate) budget: Rc<Budget>,
    suspend: Rc<suspend::Suspend>,
    /// The worker's connection, also in the VM's app data and the app's
    /// `turn` (the server ends its group commit).
    db: DbCell,
    /// Under `cove test`: set every lazy field of a call's req table before
    /// the call ends, so a test that keeps a `req` can read all of it.
    pub(crate) fill_req: Cell<bool>,
}

/// Per-request script state: the `req` table, shared by every call.
#[derive(Default)]
pub struct ReqState {
    table: Option<Table>,
    has_body: bool,
    /// The handler's coroutine while it waits on a job (suspend.rs).
    suspended: Option<suspend::Suspended>,
}

/// Install the globals and run the prelude; returns its dispatcher, its
/// current-request slot, the metatable of req tables and `res`.
fn install(lua: &Lua, budget: Rc<Budget>) -> mlua::Result<(Function, Table, Table, Table)> {
    crate::caps::install(lua)?;
    crate::error::install_codes(lua)?;
    let raw = lua.create_table()?;
    db::add_raw(lua, &raw)?;
    raw.raw_set("over_budget", over_budget_fn(lua, budget)?)?;
    crate::raw::budget::add_raw(lua, &raw)?;
    raw.raw_set("require", modules::require_fn(lua, lua.create_table()?)?)?;
    raw.raw_set(
        "res",
        crate::caps::methods(lua, cove_caps::response::RESPONSE)?,
    )?;
    req::add_raw(lua, &raw)?;
    crate::ws::add_raw(lua, &raw)?;
    let prelude = lua
        .load(PRELUDE)
        .set_name("=[cove]")
        .call::<(Function, Table, Table, Table)>(raw)?;
    req::set_meta(lua, &prelude.2, &prelude.1)?;
    // After the prelude: its own raw reads (of `req` tables, never query
    // results) keep Lua's functions.
    crate::raw::rows::install(lua)?;
    Ok(prelude)
}

impl LuaEngine {
    /// Run the app file once and collect what it registered. Errors come
    /// back as `file:line: message`.
    pub fn load(config: &LuaConfig, db: Db, shared: &Shared) -> Result<LuaApp, String> {
        let (lua, budget) = new_state(&config.limits).map_err(|e| describe(&e))?;
        let mut db = db;
        db.set_group_commit(config.group_commit);
        let db: DbCell = SharedDb::new(db);
        lua.set_app_data(db.clone());
        let mut state = AppState::new(config.files.clone());
        state.kv = shared.kv.clone();
        state.db = Some(db.clone());
        lua.set_app_data(state);
        lua.set_app_data(shared.clone());
        let suspend = suspend::install(&lua).map_err(|e| describe(&e))?;
        let (dispatch, current, req_meta, res) =
            install(&lua, budget.clone()).map_err(|e| describe(&e))?;

        let display = config.display_name();
        let source = config
            .files
            .read(&config.entry)
            .map_err(|e| format!("{display}: cannot read the app file: {e}"))?
            .into_owned();
        let loaded = budget.run(|| lua.load(source).set_name(format!("@{display}")).exec());
        db.borrow_mut().finish_load();
        loaded.map_err(|e| describe(&e))?;
        let Registered {
            routes,
            handlers,
            csp,
        } = lua
            .app_data_mut::<AppState>()
            .ok_or("app state missing after load")?
            .registry
            .finish()
            .require_routes(
                &display,
                r#"app.get("/", function(req, res) res:text("hi") end)"#,
            )?;
        let raw_ref = |f: &Function| RawRef::new(&lua, f).map_err(|e| describe(&e));
        let dispatch_ref = raw_ref(&dispatch)?;
        let table_ref = |t: &Table| RawRef::new(&lua, t).map_err(|e| describe(&e));
        let req_meta = table_ref(&req_meta)?;
        let current_ref = table_ref(&current)?;
        let res_ref = table_ref(&res)?;
        let handler_refs = handlers.iter().map(raw_ref).collect::<Result<_, _>>()?;
        Ok(ScriptApp {
            routes,
            turn: db.clone(),
            engine: LuaEngine {
                lua,
                handlers,
                dispatch,
                dispatch_ref,
                handler_refs,
                current,
                req_meta,
                current_ref,
                res_ref,
                csp: Rc::new(csp),
                budget,
                suspend,
                db,
                fill_req: Cell::new(false),
            },
        })
    }
}

fn flow_of(v: &Value) -> Flow {
    let stop = match v {
        Value::Integer(i) => *i != 0,
        Value::Number(n) => *n != 0.0,
        Value::Boolean(b) => *b,
        _ => false,
    };
    if stop {
        Flow::Stop
    } else {
        Flow::Continue
    }
}

impl LuaEngine {
    fn with_db<R>(&self, f: impl FnOnce(&mut Db) -> R) -> R {
        f(&mut self.db.borrow_mut())
    }

    /// The manifest the app declared while loading, as it wrote it
    /// (`cove build --sign` records it; `--verify-sig` compares it).
    pub fn manifest(&self) -> Option<serde_json::Value> {
        let state = self.lua.app_data_ref::<AppState>()?;
        state.registry.manifest().map(|m| m.raw.clone())
    }
}

impl Engine for LuaEngine {
    fn heap_used(&self) -> usize {
        self.lua.used_memory()
    }

    type State = ReqState;

    fn call(
        &self,
        id: HandlerId,
        ex: &mut Exchange,
        st: &mut ReqState,
    ) -> Result<Flow, ScriptError> {
        let handler = self.handlers.get(id as usize).ok_or_else(|| ScriptError {
            message: format!("no handler {id}"),
        })?;
        let lua = &self.lua;
        if let Some(t) = &st.table {
            if !st.has_body && ex.req.body.is_some() {
                unlimited(lua, || t.raw_set("body", req::body(lua, &ex.req)?)).map_err(|e| {
                    ScriptError {
                        message: describe(&e),
                    }
                })?;
            }
        }
        st.has_body = ex.req.body.is_some();
        self.budget.run(|| {
            // The route handler is the last call of a request: nothing reuses req.
            let keep = !matches!(&ex.plan.target, Target::Route { handler, .. } if *handler == id);
            let params = std::mem::take(&mut ex.req.params);
            let outcome = self.lend(ex, st, |ex, st| {
                let new = st.table.is_none().then(|| NewReq {
                    with_method_path: keep,
                    body: ex.req.body.as_deref(),
                    params: &params,
                    meta: self.req_meta,
                    current: self.current_ref,
                    res: self.res_ref,
                });
                let call = Call {
                    dispatch: &self.dispatch,
                    handler,
                    refs: (self.dispatch_ref, self.handler_refs[id as usize]),
                    // A table the request already has is not handed back:
                    // the handle made for it cost ~300 instructions a call
                    // (every message of a WebSocket connection).
                    keep: keep && st.table.is_none(),
                    req: st.table.as_ref(),
                    new,
                };
                suspend::start(lua, &self.suspend, call)
            });
            ex.req.params = params;
            self.settle(outcome, ex, st)
        })
    }

    fn resume(
        &self,
        output: JobOutput,
        ex: &mut Exchange,
        st: &mut ReqState,
    ) -> Result<Flow, ScriptError> {
        let suspended = st.suspended.take().ok_or_else(|| ScriptError {
            message: "resumed a call that was not suspended".into(),
        })?;
        // Other requests ran meanwhile: the call in progress is this one again.
        if let Some(t) = &st.table {
            self.current.raw_set(1, t).map_err(|e| ScriptError {
                message: describe(&e),
            })?;
        }
        self.budget.run(|| {
            let outcome = self.lend(ex, st, |_, _| suspend::resume(&self.lua, suspended, output));
            self.settle(outcome, ex, st)
        })
    }
}

impl LuaEngine {
    /// Lend the response and the request's lazy fields to the script for
    /// `f`, then take them back, close any transaction it left open and
    /// note in `ex.turn` what it left in the worker's database turn.
    fn lend<R>(
        &self,
        ex: &mut Exchange,
        st: &mut ReqState,
        f: impl FnOnce(&mut Exchange, &mut ReqState) -> R,
    ) -> R {
        cove_caps::cap::res::begin(&mut ex.res, &self.csp);
        req::begin(&mut ex.req);
        let result = f(ex, st);
        if self.fill_req.get() {
            req::fill_current(&self.lua, &self.current);
        }
        req::end(&mut ex.req);
        cove_caps::cap::res::end(&mut ex.res);
        self.with_db(|db| db.finish_call(&mut ex.turn));
        result
    }

    /// A finished call gives its flow (and keeps the new `req`); a
    /// suspended one hands its job to the pipeline.
    fn settle(
        &self,
        outcome: mlua::Result<Run>,
        ex: &mut Exchange,
        st: &mut ReqState,
    ) -> Result<Flow, ScriptError> {
        let err = |e: mlua::Error| ScriptError {
            message: describe(&e),
        };
        if outcome.as_ref().is_err_and(out_of_heap) {
            reclaim(&self.lua);
        }
        match outcome.map_err(err)? {
            Run::Done(flow, req) => {
                if req.is_some() {
                    st.table = req;
                }
                Ok(flow_of(&flow))
            }
            Run::Wait(job, suspended) => {
                // A first call's req table exists only in the prelude's slot
                // yet: keep it for the resume.
                if st.table.is_none() {
                    st.table = self.current.raw_get(1).map_err(err)?;
                }
                st.suspended = Some(suspended);
                ex.pending = Some(job);
                Ok(Flow::Continue)
            }
        }
    }
}

/// After a call ran out of heap its garbage fills the VM to the cap, and
/// nothing collects it before the next allocation fails (the generational
/// collector's major step waits for the heap to double): collect it now,
/// and hand the freed pages back to the OS.
fn reclaim(lua: &Lua) {
    let _ = lua.gc_collect();
    cove_core::release_heap();
}
