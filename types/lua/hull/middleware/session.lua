---@meta hull.middleware.session
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---Server-side sessions stored in the database
---@class hull.middleware.session
local session = {}

---create the sessions table if needed; options.ttl: seconds a session lives after its last use (default 86400)
---@param options? table<string, any>
function session.init(options) end

---store data in a new session; its id (64 hex chars)
---@param data table<string, any>
---@return string
function session.create(data) end

---the session's data, or nil/null if missing or expired; slides its expiry
---@param id string
---@return table<string, any>?
function session.load(id) end

---replace a live session's data and slide its expiry; whether there was one
---@param id string
---@param data table<string, any>
---@return boolean
function session.update(id, data) end

---delete the session; whether it existed
---@param id string
---@return boolean
function session.destroy(id) end

---delete expired sessions; how many
---@return integer
function session.cleanup() end

return session
