---@meta hull.middleware.ratelimit
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---Fixed-window rate limiting, counted in the kv store shared by every worker
---@class hull.middleware.ratelimit
local ratelimit = {}

---a middleware answering 429 over the limit, with X-RateLimit-* headers (options: limit 60, window 60 s, key, max_keys, name)
---@param options? table<string, any>
---@return hull.Middleware
function ratelimit.middleware(options) end

---Hull's helper on a table the caller keeps: counts one request for the key; also returns the new bucket count
---@param buckets table<string, any>
---@param key string
---@param limit integer
---@param window integer
---@param now integer
---@param bucket_count? integer
---@return hull.RateLimitCheck
function ratelimit.check(buckets, key, limit, window, now, bucket_count) end

return ratelimit
