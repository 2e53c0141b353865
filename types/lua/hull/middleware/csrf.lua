---@meta hull.middleware.csrf
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---CSRF tokens tied to the request's session
---@class hull.middleware.csrf
local csrf = {}

---a CSRF token for the session
---@param session_id string
---@param secret string
---@return string
function csrf.generate(session_id, secret) end

---whether the token was made for the session with the secret at most max_age (3600) seconds ago
---@param token string
---@param session_id string
---@param secret string
---@param max_age? integer
---@return boolean
function csrf.verify(token, session_id, secret, max_age) end

---a post-body middleware: safe methods get req.ctx.csrf_token, other methods of a request with a session need a valid token in X-CSRF-Token or the _csrf field (else 403)
---@param options table<string, any>
---@return hull.Middleware
function csrf.middleware(options) end

return csrf
