---@meta hull.middleware.inbox
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---Remember processed message ids so a redelivered message is handled once
---@class hull.middleware.inbox
local inbox = {}

---create the table if needed; options.ttl: seconds an id is remembered (default 604800)
---@param options? table<string, any>
function inbox.init(options) end

---whether message id from source (default "default") was processed and has not expired
---@param id string
---@param source? string
---@return boolean
function inbox.is_duplicate(id, source) end

---record message id from source as processed (options.ttl overrides the ttl)
---@param id string
---@param source? string
---@param options? table<string, any>
function inbox.mark_processed(id, source, options) end

---true if the id was already processed; else record it and return false (atomic)
---@param id string
---@param source? string
---@param options? table<string, any>
---@return boolean
function inbox.check_and_mark(id, source, options) end

---delete expired ids; how many
---@return integer
function inbox.cleanup() end

return inbox
