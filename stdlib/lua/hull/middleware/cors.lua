-- hull.middleware.cors: Cross-Origin Resource Sharing headers and preflight
-- answers (Hull §10.1). Register it as pre-body middleware, e.g.
--   app.use("*", "/api/*", cors.middleware({ origins = { "http://localhost:5173" } }))
-- It keeps no state, so every worker answers alike.

local cors = {}

-- True if `origin` is listed in `origins` or `origins` contains "*".
function cors.is_allowed_origin(origin, origins)
  for _, allowed in ipairs(origins) do
    if allowed == "*" or allowed == origin then
      return true
    end
  end
  return false
end

-- A middleware for `opts`: origins ({"*"}), methods, headers, credentials
-- (false), max_age (86400 s).
function cors.middleware(opts)
  opts = opts or {}
  local origins = opts.origins or { "*" }
  local methods = opts.methods or "GET, POST, PUT, DELETE, OPTIONS"
  local headers = opts.headers or "Content-Type, Authorization"
  local max_age = tostring(opts.max_age or 86400)
  local credentials = opts.credentials == true

  return function(req, res)
    local origin = req.headers.origin
    if not origin or not cors.is_allowed_origin(origin, origins) then
      return 0
    end
    -- The request's origin is echoed even for "*": a literal "*" would not
    -- be accepted by browsers together with credentials.
    res:header("Access-Control-Allow-Origin", origin)
    res:header("Vary", "Origin")
    res:header("Access-Control-Allow-Methods", methods)
    res:header("Access-Control-Allow-Headers", headers)
    res:header("Access-Control-Max-Age", max_age)
    if credentials then
      res:header("Access-Control-Allow-Credentials", "true")
    end
    if req.method == "OPTIONS" then
      -- A preflight is answered here; no route needs to exist for it.
      res:status(204)
      res:text("")
      return 1
    end
    return 0
  end
end

return cors
