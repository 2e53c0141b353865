---@meta hull.middleware.logger
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---One log line per request, with a request id unique across workers
---@class hull.middleware.logger
local logger = {}

---a middleware logging one line per request and setting req.ctx.request_id and X-Request-ID (options: skip, include_headers)
---@param options? table<string, any>
---@return hull.Middleware
function logger.middleware(options) end

---the next request id (lowercase hex), unique across the server's workers
---@return string
function logger.generate_id() end

---a list of {key, value} pairs as one logfmt line
---@param entries any[][]
---@return string
function logger.format_line(entries) end

---whether the path is one of the exact paths in the list
---@param path string
---@param list? string[]
---@return boolean
function logger.should_skip(path, list) end

return logger
