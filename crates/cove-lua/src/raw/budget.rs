//! The instruction budget of a handler or middleware call (Hull §2.2:
//! `--max-instructions`), counted by a Lua count hook.
//!
//! In Lua 5.4 any count hook makes the VM stop at every instruction (~2,200
//! instructions per `/health` request, see docs/benchmarks.md), although
//! almost every call ends long before it could spend a budget. So with a
//! large budget (≥ [`EXACT_BELOW`], the default is 100M) the hook is off
//! while calls are short: a watchdog thread looks at every worker each
//! [`TICK`], and when a worker is still in the call it saw a tick before,
//! it signals that thread, whose handler arms the hook on the Lua thread
//! running there (`lua_sethook` is async-signal-safe, as `lua.c`'s Ctrl-C
//! relies on). Counting then starts: a call is stopped after it has run
//! 10–20 ms plus its budget of instructions. With a smaller budget the hook
//! is on from the start and counts every instruction, as Hull does. When no
//! call has run for [`IDLE_TICKS`] ticks the watchdog parks until the next
//! one starts: an idle server does not wake a hundred times a second (each
//! wake cost ~50 µs of CPU on the reference machine, 0.5% of a core).
#![allow(unsafe_code)]

use std::cell::Cell;
use std::ffi::{c_int, CStr};
use std::ptr::null_mut;

use mlua::ffi;

use super::watchdog::Registration;

/// Instructions between two hook calls.
const STEP: c_int = 1000;

/// Budgets below this are counted from a call's first instruction.
pub(crate) const EXACT_BELOW: u64 = 10_000_000;

/// The instruction budget of the current handler or middleware call.
pub(crate) struct Budget {
    used: Cell<u64>,
    limit: u64,
    pub(crate) exceeded: Cell<bool>,
    /// The VM's main thread, where calls from Rust start.
    main: *mut ffi::lua_State,
    /// The VM, kept alive while a call runs (`main` is its thread).
    vm: mlua::WeakLua,
}

thread_local! {
    // Read by the signal handler: constant-initialised cells without
    // destructors, so reading them there is async-signal-safe.
    /// The Lua thread executing on this OS thread now.
    static RUNNING: Cell<*mut ffi::lua_State> = const { Cell::new(null_mut()) };
    /// The budget of the call in progress (outermost first).
    static CURRENT: Cell<*const Budget> = const { Cell::new(std::ptr::null()) };
    /// Whether the signal handler armed a hook in this call.
    static ARMED: Cell<bool> = const { Cell::new(false) };
    /// This thread's entry in the watchdog's list (not read by the handler).
    static WATCH: Registration = const { Registration::new() };
}

impl Budget {
    /// A budget for `lua`; below [`EXACT_BELOW`] its hook is set now and
    /// inherited by every coroutine.
    pub(crate) fn install(lua: &mlua::Lua, limit: u64) -> mlua::Result<Budget> {
        let mut main = null_mut();
        // SAFETY: reading the registry's main thread (room for one value is
        // checked by `exec_raw`) and setting a hook do not raise.
        unsafe {
            lua.exec_raw::<()>((), |state| {
                ffi::lua_rawgeti(state, ffi::LUA_REGISTRYINDEX, ffi::LUA_RIDX_MAINTHREAD);
                main = ffi::lua_tothread(state, -1);
                ffi::lua_pop(state, 1);
                if limit < EXACT_BELOW {
                    ffi::lua_sethook(main, Some(count_hook), ffi::LUA_MASKCOUNT, STEP);
                }
            })?;
        }
        Ok(Budget {
            used: Cell::new(0),
            limit,
            exceeded: Cell::new(false),
            main,
            vm: lua.weak(),
        })
    }

    fn exact(&self) -> bool {
        self.limit < EXACT_BELOW
    }

    /// Run `f` as a call counted from zero. Calls nest (a test calling the
    /// app); the outer one goes on after.
    pub(crate) fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        // The hooks reach the VM's threads while the call runs: it must
        // live until the end. (Gone, there is nothing to count.)
        let Some(_vm) = self.vm.try_upgrade() else {
            return f();
        };
        let call = self.begin();
        let result = f();
        drop(call);
        result
    }

    /// Start counting a call from zero; the call ends when the guard drops
    /// (which only [`Budget::run`] holds: the hooks read `CURRENT` until
    /// then, so it must not be forgotten).
    fn begin(&self) -> Call {
        self.used.set(0);
        self.exceeded.set(false);
        let outer = CURRENT.replace(self);
        if outer.is_null() {
            RUNNING.set(self.main);
            WATCH.with(|w| w.enter(self.exact()));
        }
        Call { outer }
    }

    pub(crate) fn error(&self, location: Option<String>) -> mlua::Error {
        mlua::Error::RuntimeError(self.message(location))
    }

    fn message(&self, location: Option<String>) -> String {
        let msg = format!(
            "{} ({} instructions per call; raise it with --max-instructions)",
            cove_core::OVER_BUDGET,
            self.limit
        );
        match location {
            Some(loc) => format!("{loc}: {msg}"),
            None => msg,
        }
    }
}

/// A call in progress (see [`Budget::begin`]).
struct Call {
    outer: *const Budget,
}

impl Drop for Call {
    fn drop(&mut self) {
        CURRENT.set(self.outer);
        if self.outer.is_null() {
            WATCH.with(Registration::leave);
            let running = RUNNING.replace(null_mut());
            disarm(running);
            ARMED.set(false);
        }
    }
}

/// Lua runs on `thread` until the guard drops (a handler's coroutine, or
/// one the script resumes); a hook armed on it meanwhile is taken off then.
pub(crate) struct Running<'a> {
    outer: *mut ffi::lua_State,
    thread: *mut ffi::lua_State,
    _co: std::marker::PhantomData<&'a super::coroutine::Coroutine>,
}

impl<'a> Running<'a> {
    /// Run `f`, in which Lua runs `co`. (A guard is not handed out: one
    /// forgotten would leave the signal handler a thread that may be gone.)
    pub(crate) fn with<R>(co: &super::coroutine::Coroutine, f: impl FnOnce() -> R) -> R {
        // SAFETY: `co` keeps its thread alive while it is borrowed here,
        // and the guard drops before the borrow ends.
        let running = unsafe { Running::thread(co.state()) };
        let result = f();
        drop(running);
        result
    }

    /// # Safety
    /// `thread` is a live Lua thread of this OS thread, alive until the
    /// guard drops.
    unsafe fn thread(thread: *mut ffi::lua_State) -> Running<'a> {
        hook_if_exact(thread);
        Running {
            outer: RUNNING.replace(thread),
            thread,
            _co: std::marker::PhantomData,
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        RUNNING.set(self.outer);
        disarm(self.thread);
    }
}

/// Take off a hook the watchdog armed on `thread` (alive: its owner holds
/// it). Only the signal handler sets `ARMED`, and only in watched calls.
fn disarm(thread: *mut ffi::lua_State) {
    if ARMED.get() && !thread.is_null() {
        // SAFETY: `thread` is a live Lua thread of this OS thread.
        unsafe { ffi::lua_sethook(thread, None, 0, 0) };
    }
}

/// With an exact budget, give `thread` the hook if it has none: coroutines
/// inherit it only from the thread that creates them, and the VM's own
/// are made from one without it.
fn hook_if_exact(thread: *mut ffi::lua_State) {
    let budget = CURRENT.get();
    // SAFETY: `CURRENT` points at the budget of a call in progress, and
    // `thread` is a live Lua thread of this OS thread.
    unsafe {
        if !budget.is_null() && (*budget).exact() && ffi::lua_gethookmask(thread) == 0 {
            ffi::lua_sethook(thread, Some(count_hook), ffi::LUA_MASKCOUNT, STEP);
        }
    }
}

/// `coroutine.resume` (wrapped by the prelude) and `coroutine.wrap` as Lua's
/// own, but they tell the budget which Lua thread runs, so the watchdog
/// arms the right one.
pub(crate) fn add_raw(lua: &mlua::Lua, raw: &mlua::Table) -> mlua::Result<()> {
    // SAFETY: both follow the C function protocol (raising only with no
    // Rust value alive).
    unsafe {
        raw.raw_set("co_resume", lua.create_c_function(co_resume)?)?;
        raw.raw_set("co_wrap", lua.create_c_function(co_wrap)?)?;
    }
    Ok(())
}

unsafe extern "C-unwind" fn co_resume(l: *mut ffi::lua_State) -> c_int {
    let co = ffi::lua_tothread(l, 1);
    if co.is_null() {
        let got = ffi::lua_typename(l, ffi::lua_type(l, 1));
        let msg = ffi::lua_pushfstring(l, c"thread expected, got %s".as_ptr(), got);
        return ffi::luaL_argerror(l, 1, msg);
    }
    let n = resume(l, co, ffi::lua_gettop(l) - 1);
    if n < 0 {
        ffi::lua_pushboolean(l, 0);
        ffi::lua_insert(l, -2);
        2
    } else {
        ffi::lua_pushboolean(l, 1);
        ffi::lua_insert(l, -(n + 1));
        n + 1
    }
}

unsafe extern "C-unwind" fn co_wrap(l: *mut ffi::lua_State) -> c_int {
    ffi::luaL_checktype(l, 1, ffi::LUA_TFUNCTION);
    let co = ffi::lua_newthread(l);
    ffi::lua_pushvalue(l, 1);
    ffi::lua_xmove(l, co, 1);
    ffi::lua_pushcclosure(l, co_wrapped, 1);
    1
}

/// The function `coroutine.wrap` returns: an error in the coroutine closes
/// it and is raised again, a string one prefixed with the caller's position.
unsafe extern "C-unwind" fn co_wrapped(l: *mut ffi::lua_State) -> c_int {
    let co = ffi::lua_tothread(l, ffi::lua_upvalueindex(1));
    let n = resume(l, co, ffi::lua_gettop(l));
    if n >= 0 {
        return n;
    }
    let mut status = ffi::lua_status(co);
    if status != ffi::LUA_OK && status != ffi::LUA_YIELD {
        status = ffi::lua_closethread(co, l);
        ffi::lua_xmove(co, l, 1);
    }
    if status != ffi::LUA_ERRMEM && ffi::lua_type(l, -1) == ffi::LUA_TSTRING {
        ffi::luaL_where(l, 1);
        ffi::lua_insert(l, -2);
        ffi::lua_concat(l, 2);
    }
    ffi::lua_error(l)
}

/// Resume `co` with the top `nargs` values of `l`: the number of results
/// moved onto `l`, or -1 with the error on top of `l`.
unsafe fn resume(l: *mut ffi::lua_State, co: *mut ffi::lua_State, nargs: c_int) -> c_int {
    if ffi::lua_checkstack(co, nargs) == 0 {
        ffi::lua_pushstring(l, c"too many arguments to resume".as_ptr());
        return -1;
    }
    if ffi::lua_status(co) == ffi::LUA_OK && ffi::lua_gettop(co) == 0 {
        ffi::lua_pushstring(l, c"cannot resume dead coroutine".as_ptr());
        return -1;
    }
    ffi::lua_xmove(l, co, nargs);
    let running = Running::thread(co);
    let mut nres: c_int = 0;
    let status = ffi::lua_resume(co, l, nargs, &mut nres);
    drop(running);
    if status == ffi::LUA_OK || status == ffi::LUA_YIELD {
        if ffi::lua_checkstack(l, nres + 1) == 0 {
            ffi::lua_pop(co, nres);
            ffi::lua_pushstring(l, c"too many results to resume".as_ptr());
            return -1;
        }
        ffi::lua_xmove(co, l, nres);
        nres
    } else {
        ffi::lua_xmove(co, l, 1);
        -1
    }
}

/// The count hook: adds a step to the call's count and raises once the
/// budget is spent (the message positioned at the running line).
unsafe extern "C-unwind" fn count_hook(l: *mut ffi::lua_State, ar: *mut ffi::lua_Debug) {
    if spent(l, ar) {
        ffi::lua_error(l);
    }
}

/// Whether the budget is spent; if so the message is pushed. Nothing here
/// outlives the return, so `lua_error` after it unwinds no Rust value.
unsafe fn spent(l: *mut ffi::lua_State, ar: *mut ffi::lua_Debug) -> bool {
    let budget = CURRENT.get();
    if budget.is_null() {
        return false;
    }
    let budget = &*budget;
    let used = budget.used.get() + STEP as u64;
    budget.used.set(used);
    if used <= budget.limit {
        return false;
    }
    budget.exceeded.set(true);
    let location =
        (ffi::lua_getinfo(l, c"Sl".as_ptr(), ar) != 0 && (*ar).currentline > 0).then(|| {
            let src = CStr::from_ptr((*ar).short_src.as_ptr()).to_string_lossy();
            format!("{src}:{}", (*ar).currentline)
        });
    let msg = budget.message(location);
    ffi::lua_pushlstring(l, msg.as_ptr().cast(), msg.len());
    true
}

/// The signal handler: arm the count hook on the Lua thread running here.
pub(super) extern "C" fn on_signal(_: c_int) {
    let running = RUNNING.get();
    if !CURRENT.get().is_null() && !running.is_null() {
        ARMED.set(true);
        // SAFETY: documented as callable from a signal handler.
        unsafe { ffi::lua_sethook(running, Some(count_hook), ffi::LUA_MASKCOUNT, STEP) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::new_state;
    use cove_core::Limits;

    /// Coroutine behaviour a script can observe, as one string.
    const PROBE: &str = r##"
local out = {}
local function note(...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = tostring(t[i]) end
  out[#out + 1] = table.concat(t, ",", 1, t.n)
end
local f = coroutine.wrap(function(a) local b = coroutine.yield(a + 1); error("boom " .. b) end)
note(f(1))
note(pcall(function() return f(5) end))
note(pcall(function() local x = f(6) return x end))
note(select(2, pcall(coroutine.wrap(function() error({}) end))) ~= nil)
note(pcall(coroutine.wrap, 42))
local co = coroutine.create(function(...) local n = select("#", ...); local r = { coroutine.yield(n, ...) }; return #r, coroutine.isyieldable(), coroutine.status(coroutine.running()) end)
note(coroutine.resume(co, "a", nil, "c"))
note(coroutine.status(co))
note(coroutine.resume(co, 1, 2))
note(coroutine.status(co), coroutine.resume(co))
note(pcall(coroutine.resume, 42))
note(pcall(coroutine.resume))
local bad = coroutine.create(function() error("inner") end)
note(coroutine.resume(bad))
note(coroutine.status(bad), coroutine.close(bad))
local nested = coroutine.wrap(function() local g = coroutine.wrap(function() coroutine.yield("in") return "done" end); coroutine.yield(g()); coroutine.yield(g()) end)
note(nested(), nested())
return table.concat(out, "\n")
"##;

    fn run(lua: &mlua::Lua) -> String {
        lua.load(PROBE).set_name("@t.lua").eval().unwrap()
    }

    #[test]
    fn coroutines_behave_as_lua_s_own() {
        let want = run(&mlua::Lua::new());
        for limit in [1_000_000, 100_000_000] {
            let (lua, budget, raw) = state(limit);
            let co: mlua::Table = lua.globals().get("coroutine").unwrap();
            co.set("resume", raw.get::<mlua::Function>("co_resume").unwrap())
                .unwrap();
            co.set("wrap", raw.get::<mlua::Function>("co_wrap").unwrap())
                .unwrap();
            let _call = budget.begin();
            assert_eq!(run(&lua), want);
        }
    }

    /// A sandboxed state with `limit` and Cove's coroutine functions.
    fn state(limit: u64) -> (mlua::Lua, std::rc::Rc<Budget>, mlua::Table) {
        let (lua, budget) = new_state(&Limits {
            max_instructions: limit,
            ..Limits::default()
        })
        .unwrap();
        let raw = lua.create_table().unwrap();
        add_raw(&lua, &raw).unwrap();
        (lua, budget, raw)
    }

    fn stopped(limit: u64, script: &str) -> bool {
        let (lua, budget, raw) = state(limit);
        lua.globals()
            .set("wrap", raw.get::<mlua::Function>("co_wrap").unwrap())
            .unwrap();
        let _call = budget.begin();
        match lua.load(script).set_name("@app.lua").exec() {
            Ok(()) => false,
            Err(e) => {
                let msg = e.to_string();
                assert!(
                    msg.contains(&format!("app.lua:1: instruction limit exceeded ({limit} ")),
                    "{msg}"
                );
                assert!(budget.exceeded.get());
                true
            }
        }
    }

    #[test]
    fn a_small_budget_counts_every_instruction() {
        // ~1M instructions: over a 100k budget, under a 2M one.
        let script = "local x = 0 for i = 1, 300000 do x = x + i end";
        assert!(stopped(100_000, script));
        assert!(!stopped(2_000_000, script));
        assert!(stopped(100_000, "wrap(function() while true do end end)()"));
    }

    #[test]
    fn a_large_budget_stops_a_loop_once_the_watchdog_arms_the_hook() {
        assert!(stopped(EXACT_BELOW, "while true do end"));
        assert!(stopped(
            EXACT_BELOW,
            "wrap(function() while true do end end)()"
        ));
        // The hook is off again after the call.
        let (lua, budget) = new_state(&Limits::default()).unwrap();
        {
            let _call = budget.begin();
            let _ = lua
                .load("local t = os and 1 or 0 for i = 1, 3e7 do t = t + 1 end")
                .exec();
        }
        // SAFETY: reading the hook mask of the live main thread.
        assert_eq!(unsafe { ffi::lua_gethookmask(budget.main) }, 0);
    }
}
