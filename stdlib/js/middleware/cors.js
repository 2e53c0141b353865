// hull:middleware:cors — Cross-Origin Resource Sharing headers and preflight
// answers (Hull §10.1). Register it as pre-body middleware, e.g.
//   app.use("*", "/api/*", cors.middleware({ origins: ["http://localhost:5173"] }))
// It keeps no state, so every worker answers alike.

// True if `origin` is listed in `origins` or `origins` contains "*".
function isAllowedOrigin(origin, origins) {
  return origins.some((allowed) => allowed === "*" || allowed === origin);
}

// A middleware for `opts`: origins (["*"]), methods, headers, credentials
// (false), max_age (86400 s; Hull's snake_case name, `maxAge` also works).
function middleware(opts = {}) {
  const origins = opts.origins ?? ["*"];
  const methods = opts.methods ?? "GET, POST, PUT, DELETE, OPTIONS";
  const headers = opts.headers ?? "Content-Type, Authorization";
  const maxAge = String(opts.max_age ?? opts.maxAge ?? 86400);
  const credentials = opts.credentials === true;

  return (req, res) => {
    const origin = req.headers.origin;
    if (!origin || !isAllowedOrigin(origin, origins)) return 0;
    // The request's origin is echoed even for "*": a literal "*" would not
    // be accepted by browsers together with credentials.
    res.header("Access-Control-Allow-Origin", origin);
    res.header("Vary", "Origin");
    res.header("Access-Control-Allow-Methods", methods);
    res.header("Access-Control-Allow-Headers", headers);
    res.header("Access-Control-Max-Age", maxAge);
    if (credentials) res.header("Access-Control-Allow-Credentials", "true");
    if (req.method === "OPTIONS") {
      // A preflight is answered here; no route needs to exist for it.
      res.status(204);
      res.text("");
      return 1;
    }
    return 0;
  };
}

export const cors = { middleware, isAllowedOrigin };
