// hull:middleware:logger — a request id and one logfmt line per request
// (Hull §10.11). Register it first, as pre-body middleware:
//   app.use("*", "/*", logger.middleware({ skip: ["/health"] }))
//
// Ids are Hull's: a counter in lowercase hex from 1. Hull kept the counter
// in its single VM; Cove keeps it in the shared kv store, so no two
// workers hand out the same id.

import { kv } from "hull:kv";
import { log } from "hull:log";

const COUNTER = "hull:logger:request_id";

// The next request id ("1", "2", … "a", …), unique across the server's workers.
function generateId() {
  return kv.incr(COUNTER).toString(16);
}

// True if `path` is one of the exact paths in `list`.
function shouldSkip(path, list = []) {
  return list.includes(path);
}

const ESCAPES = { "\\": "\\\\", '"': '\\"', "\r": "\\r", "\n": "\\n" };

function logfmtValue(v) {
  const s = String(v);
  const escaped = s.replace(/[\\"\r\n]/g, (c) => ESCAPES[c]);
  return /[ ="\r\n]/.test(s) ? `"${escaped}"` : escaped;
}

// `entries` is a list of [key, value] → `key=value key2="a b"` (logfmt).
function formatLine(entries) {
  return entries.map(([k, v]) => `${k}=${logfmtValue(v)}`).join(" ");
}

// A middleware for `opts`: skip (exact paths to leave out), include_headers
// (request header names to add to the line; Hull's snake_case name,
// `includeHeaders` also works). Sets req.ctx.request_id and the
// X-Request-ID response header; never stops the request.
function middleware(opts = {}) {
  const skip = opts.skip ?? [];
  const include = (opts.include_headers ?? opts.includeHeaders ?? []).map((name) => [
    name.toLowerCase(),
    name.toLowerCase().replaceAll("-", "_"),
  ]);

  return (req, res) => {
    if (shouldSkip(req.path, skip)) return 0;
    const id = generateId();
    req.ctx.request_id = id;
    res.header("X-Request-ID", id);
    // Pre-body middleware has no body yet: its size is what the client announced.
    const entries = [
      ["method", req.method],
      ["path", req.path],
      ["req_id", id],
      ["body_in", Number(req.headers["content-length"] ?? 0) || 0],
    ];
    for (const [name, key] of include) {
      const v = req.headers[name];
      if (v !== undefined) entries.push([key, v]);
    }
    log.info(`req ${formatLine(entries)}`);
    return 0;
  };
}

export const logger = { middleware, generateId, formatLine, shouldSkip };
