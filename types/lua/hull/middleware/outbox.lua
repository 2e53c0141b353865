---@meta hull.middleware.outbox
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---The transactional outbox: HTTP messages enqueued with the change they announce, delivered and retried afterwards
---@class hull.middleware.outbox
local outbox = {}

---create the table if needed; options.max_attempts (JS maxAttempts): tries before an item fails (default 5)
---@param options? table<string, any>
function outbox.init(options) end

---add a message to deliver (in the caller's transaction, if any); its id
---@param item hull.OutboxItem
---@return integer
function outbox.enqueue(item) end

---deliver the due items (at most options.limit, default 50), retrying failures with backoff
---@param options? table<string, any>
---@return hull.OutboxFlush
function outbox.flush(options) end

---a middleware marking the request for flush_if_needed
---@return hull.Middleware
function outbox.middleware() end

---outbox.flush(options) if the outbox middleware ran for the request, else nil/null
---@param req hull.Request
---@param options? table<string, any>
---@return hull.OutboxFlush?
function outbox.flush_if_needed(req, options) end

---how many items are pending, delivered and failed
---@return hull.OutboxStats
function outbox.stats() end

---items, newest first (filter: destination, state, kind, limit = 50)
---@param filter? table<string, any>
---@return table<string, any>[]
function outbox.list(filter) end

---delete delivered items older than max_age seconds (default 7 days); how many
---@param max_age? integer
---@return integer
function outbox.cleanup(max_age) end

return outbox
