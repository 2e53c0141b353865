//! The `smtp` global (Hull §6.8): `smtp.send(opts)` over cove-caps' smtp,
//! converting the options and the `{ok, error}` result only. A slow
//! function (suspend.rs): the options are checked here, the message sent
//! off the worker's thread once the handler can suspend.

use mlua::{Lua, LuaSerdeExt, MultiValue, Value};

use cove_caps::smtp::{self, SmtpError};
use cove_core::{Job, JobOutput};

use crate::http::hosts;
use crate::suspend::{output, slow_function, Start};

/// `{ok = true}` or `{ok = false, error = "..."}`.
fn result(lua: &Lua, sent: Result<(), SmtpError>) -> mlua::Result<MultiValue> {
    let t = lua.create_table_with_capacity(0, 2)?;
    t.raw_set("ok", sent.is_ok())?;
    if let Err(e) = sent {
        t.raw_set("error", e.to_string())?;
    }
    Ok(MultiValue::from_iter([Value::Table(t)]))
}

fn finish(lua: &Lua, out: JobOutput) -> mlua::Result<Result<MultiValue, String>> {
    match output::<Result<(), SmtpError>>(out) {
        Ok(sent) => result(lua, sent).map(Ok),
        Err(msg) => Ok(Err(msg)),
    }
}

pub(crate) fn install(lua: &Lua) -> mlua::Result<()> {
    let send = slow_function(lua, |lua, args: MultiValue| {
        let opts = args.into_iter().next().unwrap_or(Value::Nil);
        let opts: serde_json::Value = lua
            .from_value(opts)
            .map_err(|e| mlua::Error::runtime(format!("smtp.send: options: {e}")))?;
        match smtp::prepare(&hosts(lua), &opts) {
            Ok(prepared) => Ok(Start::Job(Job::new(move || prepared.send()), finish)),
            Err(e) if e.raises() => Err(mlua::Error::runtime(e.to_string())),
            Err(e) => result(lua, Err(e)).map(Start::Done),
        }
    })?;
    let t = lua.create_table()?;
    t.raw_set("send", send)?;
    lua.globals().raw_set("smtp", t)
}
