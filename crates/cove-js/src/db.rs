//! What `db` (Hull §5) needs beyond the capability table, whose loop binds
//! `query`, `exec`, `lastId` and the `…Async` forms (caps.rs):
//! `raw.dbDialect`, and the batch steps the prelude's `db.batch` wraps (it
//! takes a function, which no capability value carries).

use std::rc::Rc;

use rquickjs::{Ctx, Object};

use cove_db::{Db, DbError};

use crate::bind::set_fn;
use crate::host::Host;

fn batch_step(
    ctx: &Ctx<'_>,
    host: &Host,
    step: fn(&mut Db) -> Result<(), DbError>,
) -> rquickjs::Result<()> {
    let result = step(&mut host.db.borrow_mut());
    result.map_err(|e| crate::bind::throw_cap(ctx, &e.cap("db.batch")))
}

pub(crate) fn add<'js>(raw: &Object<'js>, host: &Rc<Host>) -> rquickjs::Result<()> {
    let dialect = host.db.borrow().dialect().name();
    raw.set("dbDialect", dialect)?;
    for (name, step) in [
        (
            "dbBegin",
            Db::begin_batch as fn(&mut Db) -> Result<(), DbError>,
        ),
        ("dbCommit", Db::commit_batch),
        ("dbRollback", Db::rollback_batch),
    ] {
        let h = host.clone();
        set_fn(raw, name, move |ctx: Ctx<'js>| batch_step(&ctx, &h, step))?;
    }
    Ok(())
}
