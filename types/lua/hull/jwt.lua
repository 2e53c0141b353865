---@meta hull.jwt
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---HS256 JSON Web Tokens
---@class hull.jwt
local jwt = {}

---an HS256 token for the payload, iat added unless set (Lua: an exp below 2e9 is relative to now; a missing payload or secret gives nil and the reason, JS throws)
---@param payload table<string, any>
---@param secret string
---@return string?
function jwt.sign(payload, secret) end

---the payload if the token is HS256 signed with the secret and within exp/nbf; else Lua nil and the reason, JS an array [null, reason]
---@param token string
---@param secret string
---@return table<string, any>?
function jwt.verify(token, secret) end

---the payload without checking anything (for display, never for trust), or nil/null if malformed
---@param token string
---@return table<string, any>?
function jwt.decode(token) end

return jwt
