---@meta hull.middleware.auth
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---Session-cookie and JWT authentication (names, cookies and ctx keys differ by language, as in Hull)
---@class hull.middleware.auth
local auth = {}

---a middleware requiring a session cookie (Lua hull_session, JS hull.sid): sets req.ctx.session and the id (Lua session_id, JS sessionId); else 401, unless optional or a login path is set
---@param options? table<string, any>
---@return hull.Middleware
function auth.session_middleware(options) end

---a middleware requiring Authorization: Bearer <jwt> signed with options.secret (Lua sets req.ctx.user; JS req.ctx.claims and req.ctx.token); else 401, unless optional
---@param options table<string, any>
---@return hull.Middleware
function auth.jwt_middleware(options) end

---end the session the request carried, start one holding data and send its cookie; the session id
---@param req hull.Request
---@param res hull.Response
---@param data table<string, any>
---@param options? table<string, any>
---@return string
function auth.login(req, res, data, options) end

---end the request's session and send a cookie that clears it
---@param req hull.Request
---@param res hull.Response
---@param options? table<string, any>
function auth.logout(req, res, options) end

return auth
