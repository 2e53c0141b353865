-- hull.middleware.ratelimit: fixed-window rate limiting (Hull §10.2).
--
-- Hull kept its buckets in the VM. Cove runs one VM per worker, so the
-- middleware counts in the shared kv store instead: the window's start is
-- part of the key, and kv.incr is atomic, so every worker adds to the same
-- count and the limit holds however requests spread over workers. Keys
-- expire with their window.

local kv = require("hull.kv")

local ratelimit = {}

local MAX_BUCKETS = 10000

local function count_keys(t)
  local n = 0
  for _ in pairs(t) do
    n = n + 1
  end
  return n
end

-- The pure in-table helper of Hull: one fixed window per key in `buckets`
-- (a table the caller keeps). Returns {allowed, remaining, reset} and the
-- new number of buckets (counted when `bucket_count` is not given). When
-- `buckets` holds 10000 live keys, new keys are refused.
function ratelimit.check(buckets, key, limit, window, now, bucket_count)
  bucket_count = bucket_count or count_keys(buckets)
  local b = buckets[key]
  if b and now >= b.reset then
    buckets[key] = nil
    bucket_count = bucket_count - 1
    b = nil
  end
  if not b then
    if bucket_count >= MAX_BUCKETS then
      for k, old in pairs(buckets) do
        if now >= old.reset then
          buckets[k] = nil
          bucket_count = bucket_count - 1
        end
      end
    end
    if bucket_count >= MAX_BUCKETS then
      return { allowed = false, remaining = 0, reset = now + window }, bucket_count
    end
    b = { count = 0, reset = now - now % window + window }
    buckets[key] = b
    bucket_count = bucket_count + 1
  end
  b.count = b.count + 1
  return { allowed = b.count <= limit, remaining = math.max(0, limit - b.count), reset = b.reset },
    bucket_count
end

local function positive_integer(v, what)
  if math.type(v) ~= "integer" or v < 1 then
    error("ratelimit.middleware: opts." .. what .. " must be a positive whole number, got "
      .. tostring(v), 3)
  end
  return v
end

-- Middleware instances are numbered in the order the app creates them.
-- Every worker loads the same app file, so the n-th middleware has the
-- same number (and the same buckets) in all of them.
local instances = 0

-- Until when this worker stays quiet about a failing kv store.
local warned_until = 0

-- A middleware for `opts`: limit (60 requests), window (60 s), key (a
-- string or function(req) returning one; default "global": one bucket for
-- all clients), max_keys (10000 distinct keys per window), name (names the
-- buckets instead of the creation order).
function ratelimit.middleware(opts)
  opts = opts or {}
  local limit = positive_integer(opts.limit or 60, "limit")
  local window = positive_integer(opts.window or 60, "window")
  local max_keys = positive_integer(opts.max_keys or MAX_BUCKETS, "max_keys")
  local key_of = opts.key or "global"
  instances = instances + 1
  local prefix = "hull:ratelimit:" .. tostring(opts.name or instances) .. ":"

  return function(req, res)
    local key = key_of
    if type(key_of) == "function" then
      key = key_of(req)
    end
    key = tostring(key or "global")
    if #key > 128 then
      key = crypto.sha256(key) -- kv keys are bounded; long keys are hashed
    end

    local now = time.now()
    local reset = now - now % window + window
    local ttl = reset - now
    local bucket = prefix .. (reset - window) .. ":"
    local ok, count = pcall(kv.incr, bucket .. key, 1, ttl)
    if not ok then
      -- The store is down (Redis unreachable): serve rather than refuse
      -- everyone, and say so (once a window per worker).
      if now >= warned_until then
        warned_until = reset
        log.warn("ratelimit: the kv store failed, so requests pass unlimited: " .. tostring(count))
      end
      return 0
    end
    -- The first request of a key in this window also counts the window's
    -- keys, so client-chosen keys cannot fill the store.
    if count == 1 and kv.incr(bucket .. "#keys", 1, ttl) > max_keys then
      kv.delete(bucket .. key)
      count = limit + 1
    end

    res:header("X-RateLimit-Limit", tostring(limit))
    res:header("X-RateLimit-Remaining", tostring(math.max(0, limit - count)))
    res:header("X-RateLimit-Reset", tostring(reset))
    if count > limit then
      res:header("Retry-After", tostring(ttl))
      res:json({ error = "rate limit exceeded", retry_after = ttl }, 429)
      return 1
    end
    return 0
  end
end

return ratelimit
