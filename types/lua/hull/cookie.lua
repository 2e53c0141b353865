---@meta hull.cookie
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---Parse Cookie headers and build Set-Cookie values
---@class hull.cookie
local cookie = {}

---the cookies of a Cookie header as name → value (of a repeated name the first; JS strips quotes and decodes %XX); anything but a string gives an empty table
---@param header string?
---@return table<string, any>
function cookie.parse(header) end

---a Set-Cookie value, by default with Path=/, HttpOnly, Secure, SameSite=Lax (options: Lua path httponly secure samesite max_age domain expires; JS path httpOnly secure sameSite maxAge domain expires; false drops one)
---@param name string
---@param value string
---@param options? table<string, any>
---@return string
function cookie.serialize(name, value, options) end

---a Set-Cookie value that deletes the cookie (Max-Age=0); pass the path and domain it was set with
---@param name string
---@param options? table<string, any>
---@return string
function cookie.clear(name, options) end

return cookie
