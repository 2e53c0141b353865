---@meta hull.middleware.transaction
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---db.batch under Hull's names
---@class hull.middleware.transaction
local transaction = {}

---a middleware that sets req.ctx._txn = true and nothing else (it does not wrap the handler)
---@return hull.Middleware
function transaction.middleware() end

---db.batch(fn): commit, or roll back and re-raise; what fn returns
---@param fn function
---@return any
function transaction.run(fn) end

---db.batch(fn) without raising: Lua true, or false and the error; JS [true, null] or [false, error]
---@param fn function
---@return boolean
function transaction.try(fn) end

return transaction
