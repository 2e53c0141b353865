// middleware: request ids and logging, a rate limit and CORS on /api/*,
// all from the stdlib, plus a request counter of the app's own. The
// JavaScript twin of app.lua.
//
//   cove -p 8080 examples/middleware/app.js
//   curl -i localhost:8080/api/items
//   curl -i -X OPTIONS -H 'Origin: http://localhost:5173' localhost:8080/api/items
//
// Pre-body middleware runs in the order it is registered, for every
// request whose path matches (also when no route does).

import { app } from "hull:app";
import { json } from "hull:json";
import { kv } from "hull:kv";
import { logger } from "hull:middleware:logger";
import { ratelimit } from "hull:middleware:ratelimit";
import { cors } from "hull:middleware:cors";

// 1. An id per request (req.ctx.request_id and the X-Request-ID header)
//    and one log line: `req method=GET path=/api/items req_id=3 body_in=0`.
app.use("*", "/*", logger.middleware({ skip: ["/health"] }));

// 2. Count requests. Each worker has its own JS VM, so a module-level
//    counter would count per worker; the kv store is one for the server.
app.use("*", "/*", () => {
  kv.incr("total_requests");
  return 0;
});

// 3. CORS for the browser front end (a dev server on 5173 or 3001). It
//    comes before the rate limit: preflights are answered without using
//    up the limit, and a 429 still carries the CORS headers a browser
//    needs to show it to the page.
app.use("*", "/api/*", cors.middleware({
  origins: ["http://localhost:5173", "http://localhost:3001"],
}));

// 4. 60 requests a minute to /api/*, counted for all clients together
//    (and across all workers).
app.use("*", "/api/*", ratelimit.middleware({ limit: 60, window: 60 }));

// A preflight from an allowed origin is answered by the CORS middleware;
// this route answers the others.
app.options("/api/items", (req, res) => {
  res.status(204);
});

app.get("/health", (req, res) => res.json({ status: "ok" }));

app.get("/", (req, res) => {
  res.json({ message: "Middleware example", request_id: req.ctx.request_id });
});

app.get("/api/items", (req, res) => {
  res.json({ items: ["apple", "banana", "cherry"], request_id: req.ctx.request_id });
});

app.post("/api/items", (req, res) => {
  let item = null;
  try {
    item = json.decode(req.body ?? "");
  } catch {
    // not JSON: item stays null
  }
  // JSON `null` is refused too, as in app.lua (where it decodes to nil).
  if (item === null) return res.json({ error: "invalid JSON" }, 400);
  res.json({ created: item, request_id: req.ctx.request_id }, 201);
});

app.get("/api/debug", (req, res) => {
  res.json({ request_id: req.ctx.request_id, total_requests: kv.get("total_requests") ?? 0 });
});
