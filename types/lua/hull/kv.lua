---@meta hull.kv
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---A key-value store shared by every worker (and every process with --kv redis://)
---@class hull.kv
local kv = {}

---the value stored under the key, or nil/null
---@param key string
---@return (string|number|boolean)?
function kv.get(key) end

---store a value (string, number, boolean), with an optional ttl in seconds
---@param key string
---@param value string|number|boolean
---@param ttl? number
function kv.set(key, value, ttl) end

---store a value only if the key is absent; whether it was stored
---@param key string
---@param value string|number|boolean
---@param ttl? number
---@return boolean
function kv.add(key, value, ttl) end

---add step (default 1) to an integer value (absent: 0) and return it
---@param key string
---@param step? integer
---@param ttl? number
---@return integer
function kv.incr(key, step, ttl) end

---remove the key; whether it was there
---@param key string
---@return boolean
function kv.delete(key) end

---seconds the key has left, or nil/null when absent or without expiry
---@param key string
---@return number?
function kv.ttl(key) end

return kv
