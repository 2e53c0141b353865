---@meta hull.middleware.cors
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---CORS headers and preflight answers
---@class hull.middleware.cors
local cors = {}

---a pre-body middleware adding CORS headers for allowed origins and answering their preflights with 204 (options: origins, methods, headers, credentials, max_age)
---@param options? table<string, any>
---@return hull.Middleware
function cors.middleware(options) end

---whether the origin is in the list or the list holds "*"
---@param origin string
---@param origins string[]
---@return boolean
function cors.is_allowed_origin(origin, origins) end

return cors
