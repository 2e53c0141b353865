---@meta hull.middleware.idempotency
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---Replay the response of a request retried with the same Idempotency-Key
---@class hull.middleware.idempotency
local idempotency = {}

---create the keys table if needed; options.ttl: seconds a key and its response are kept (default 86400)
---@param options? table<string, any>
function idempotency.init(options) end

---a post-body middleware that replays the stored response to a retry with the same Idempotency-Key (409 for another body or one still running)
---@param options? table<string, any>
---@return hull.Middleware
function idempotency.middleware(options) end

---send data as JSON with the status (and extra headers), stored for retries of the request's key
---@param req hull.Request
---@param res hull.Response
---@param status integer
---@param data any
---@param headers? table<string, any>
function idempotency.respond(req, res, status, data, headers) end

---mark the request's key done without storing a response
---@param req hull.Request
function idempotency.complete(req) end

---delete expired keys; how many
---@return integer
function idempotency.cleanup() end

return idempotency
