// The dispatchers of Cove's WebSocket endpoints (prelude.js), compiled on
// an app's first `app.ws`: given the natives (`raw`), it returns the maker
// of an endpoint's dispatcher from its handlers, which `app.ws` (the
// capability table's, caps.rs) registers. The engine calls an endpoint's
// dispatcher for each event of a connection,
// with the upgrade request's req for `open` (so `req.ctx` holds what
// middleware put there); the connection's `ws` object lives from `open`
// to `close`, on the worker that holds the connection.
"use strict";
(function (raw) {
  const { wsEvent, wsMethods } = raw;
  // The open connections by id: an object, not a Map. QuickJS hashes a Map
  // key through its float64 bits, whose low bits are all zero for small
  // integers, so every id fell into one bucket and a lookup walked them
  // all (~800 instructions a message with 50 connections); an object's
  // integer keys are hashed as themselves.
  const sockets = Object.create(null);
  // Filled by wsEvent with the event's [id, a, b]; one array for every
  // event (each is read before anything else runs).
  const ev = [0, undefined, undefined];
  // A connection's methods (send, close, subscribe, unsubscribe) are the
  // capability table's natives (caps.rs), which read `this.id`.
  function WebSocketConnection(id, ctx) {
    this.id = id;
    this.ctx = ctx;
  }
  WebSocketConnection.prototype = wsMethods;
  // `app.ws` (the capability table's) has checked the handlers.
  return function dispatcher(handlers) {
    // Which handlers there are is read now; each event calls its handler
    // as a method of `handlers` (a method call, where `.call` would add a
    // native call of ~400 instructions to every message).
    const { open, message, close } = handlers;
    return function (req) {
      const kind = wsEvent(ev);
      const id = ev[0], a = ev[1], b = ev[2];
      ev[1] = ev[2] = undefined; // not kept alive until the next event
      if (kind === 2) {
        if (message) return handlers.message(sockets[id], a, b);
      } else if (kind === 1) {
        const ws = new WebSocketConnection(id, req.ctx);
        sockets[id] = ws;
        if (open) return handlers.open(ws, req);
      } else if (kind === 3) {
        const ws = sockets[id];
        delete sockets[id];
        if (close && ws) return handlers.close(ws, a, b);
      }
    };
  };
})
