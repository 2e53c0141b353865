// Cove's JavaScript prelude, evaluated once per worker with the native
// functions (`raw`). It builds Hull's app, db and json objects, closes
// the ways to compile code from strings, and returns the dispatcher the
// engine calls for every handler and middleware.
(function (raw) {
  "use strict";
  const defineProperty = Object.defineProperty;

  // ---- app (Hull §3.1) ----------------------------------------------------
  // The capability table's `app`: its routes, middleware, `app.ws`,
  // `app.publish` and the manifest's functions.
  const app = raw.app;

  // `app.ws(pattern, { open, message, close })` (the capability table's)
  // registers what this makes of an endpoint's handlers: the dispatcher
  // the engine calls for each event of a connection (ws.js). Its code is
  // compiled on the first endpoint: an app without endpoints keeps none of
  // it in its heap (where, compiled with the prelude, it cost ~1.6k
  // instructions a request on a 20-row query, measured: the collector
  // walks every function).
  let dispatcher;
  raw.wsDispatcher((handlers) => (dispatcher ??= raw.wsBuild()(raw))(handlers));

  // ---- db (Hull §5) ---------------------------------------------------------
  const { dbBegin, dbCommit, dbRollback } = raw;
  const getPrototypeOf = Object.getPrototypeOf;
  const AsyncFunctionPrototype = getPrototypeOf(async function () {});
  const isThenable = (v) =>
    v !== null && (typeof v === "object" || typeof v === "function") && typeof v.then === "function";
  // `query`, `exec`, `lastId` and the `…Async` forms (promises that keep
  // the worker free while PostgreSQL answers) are the capability table's
  // (caps.rs).
  const db = raw.db;
  // "sqlite" or "postgres": for SQL that cannot be written portably.
  db.dialect = raw.dbDialect;
  Object.assign(db, {
    // `fn` must be synchronous: the transaction cannot stay open across an
    // `await` (the worker runs other requests meanwhile), and committing at
    // the first `await` would leave what follows outside it. An async
    // function is refused before it runs; a promise returned any other way
    // rolls back what `fn` did.
    batch(fn) {
      if (typeof fn !== "function") throw new TypeError("db.batch requires a function");
      if (getPrototypeOf(fn) === AsyncFunctionPrototype) {
        throw new TypeError(
          "db.batch: the function must be synchronous (it is async); do the awaits before or after the batch");
      }
      dbBegin();
      let result, promised;
      try {
        result = fn();
        promised = isThenable(result);
      } catch (e) {
        dbRollback();
        throw e;
      }
      if (promised) {
        dbRollback();
        throw new TypeError(
          "db.batch: the function must be synchronous (it returned a promise); do the awaits before or after the batch");
      }
      dbCommit();
      return result;
    },
  });

  // ---- req / res (Hull §4) --------------------------------------------------
  // A req starts with no own properties: each field is built from the
  // request in progress on first read (most handlers read few or none) and
  // then becomes an ordinary own property of that req.
  const { resProto, reqGetters } = raw;
  function Req() {}
  Req.prototype.header = function header(name) {
    return this.headers[String(name).toLowerCase()];
  };
  // The getters are native (req.rs): they refuse a req kept past its
  // request, and make the value an own property.
  // The fields (req.rs FIELDS order); all but `ctx` are what a req
  // encoded whole has.
  const reqFields = ["query", "headers", "method", "path", "params", "body", "ctx"];
  for (const name of reqFields) {
    defineProperty(Req.prototype, name, {
      get: reqGetters[name],
      set(value) {
        defineProperty(this, name, { value, writable: true, enumerable: true, configurable: true });
      },
      enumerable: false,
      configurable: true,
    });
  }
  // JSON.stringify(req) and res.json(req) see every field, as Hull's plain
  // object has them (reading one builds it), then the app's own; `ctx` only
  // once built. A req kept past its request gives the fields it has.
  const hasOwnProperty = Object.prototype.hasOwnProperty;
  defineProperty(Req.prototype, "toJSON", {
    value: function toJSON() {
      const out = {};
      for (const name of reqFields) {
        if (name === "ctx") continue;
        try {
          out[name] = this[name];
        } catch (e) {
          // Not built in time: left out.
        }
      }
      for (const name of Object.keys(this)) {
        if (!hasOwnProperty.call(out, name)) out[name] = this[name];
      }
      return out;
    },
    enumerable: false,
    configurable: true,
  });

  // One `res` per worker, as in the Lua runtime (its methods write into the
  // response of the call in progress); making one per request cost ~1k
  // instructions.
  const res = Object.create(resProto);

  // The engine calls every handler and middleware with its request's `req`
  // (made from Req.prototype, kept in the request's state) and this `res`.

  // ---- no code from strings (Hull deletes eval and Function; the
  // constructor route `(function(){}).constructor` is closed too) -----------
  const refuse = function () {
    throw new EvalError("code generation from strings is disabled in Cove apps");
  };
  for (const f of [function () {}, async function () {}, function* () {}, async function* () {}]) {
    defineProperty(Object.getPrototypeOf(f), "constructor", {
      value: refuse, writable: false, enumerable: false, configurable: false,
    });
  }
  // What Cove's capabilities throw: `code` says which failure it is
  // (`db.reserved`, `kv.unavailable`, …: docs/api.md); the name stays
  // "Error", so a message prints as it always has.
  class CoveError extends Error {
    constructor(message, code) {
      super(message);
      this.code = code;
    }
  }
  Object.defineProperty(CoveError.prototype, "name", { value: "Error", writable: true, configurable: true });
  globalThis.CoveError = CoveError;

  delete globalThis.eval;
  delete globalThis.Function;

  // The `db` stdlib modules import (modules.rs): its statements may use the
  // reserved _hull_* tables; the rest is the app's db.
  const stdlibDb = Object.freeze(Object.setPrototypeOf(raw.dbStdlib, db));

  return { res, reqProto: Req.prototype, modules: [app], stdlibDb, CoveError };
})
