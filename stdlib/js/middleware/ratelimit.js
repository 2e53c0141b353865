// hull:middleware:ratelimit — fixed-window rate limiting (Hull §10.2).
//
// Hull kept its buckets in the VM. Cove runs one VM per worker, so the
// middleware counts in the shared kv store instead: the window's start is
// part of the key, and kv.incr is atomic, so every worker adds to the same
// count and the limit holds however requests spread over workers. Keys
// expire with their window.

import { kv } from "hull:kv";
import { time } from "hull:time";
import { crypto } from "hull:crypto";
import { log } from "hull:log";

const MAX_BUCKETS = 10000;

// The pure in-object helper of Hull: one fixed window per key in `buckets`
// (an object the caller keeps) → {allowed, remaining, reset}. When `buckets`
// holds 10000 live keys, new keys are refused.
function check(buckets, key, limit, window, now) {
  let b = buckets[key];
  if (b && now >= b.reset) {
    delete buckets[key];
    b = undefined;
  }
  if (!b) {
    let keys = Object.keys(buckets);
    if (keys.length >= MAX_BUCKETS) {
      for (const k of keys) if (now >= buckets[k].reset) delete buckets[k];
      keys = Object.keys(buckets);
    }
    if (keys.length >= MAX_BUCKETS) return { allowed: false, remaining: 0, reset: now + window };
    b = buckets[key] = { count: 0, reset: now - (now % window) + window };
  }
  b.count += 1;
  return { allowed: b.count <= limit, remaining: Math.max(0, limit - b.count), reset: b.reset };
}

function positiveInteger(v, what) {
  if (!Number.isInteger(v) || v < 1) {
    throw new TypeError(`ratelimit.middleware: opts.${what} must be a positive whole number, got ${v}`);
  }
  return v;
}

// Middleware instances are numbered in the order the app creates them.
// Every worker loads the same app file, so the n-th middleware has the
// same number (and the same buckets) in all of them.
let instances = 0;

// Until when this worker stays quiet about a failing kv store.
let warnedUntil = 0;

// A middleware for `opts`: limit (60 requests), window (60 s), key (a
// string or function(req) returning one; default "global": one bucket for
// all clients), maxKeys (10000 distinct keys per window), name (names the
// buckets instead of the creation order).
function middleware(opts = {}) {
  const limit = positiveInteger(opts.limit ?? 60, "limit");
  const window = positiveInteger(opts.window ?? 60, "window");
  const maxKeys = positiveInteger(opts.maxKeys ?? opts.max_keys ?? MAX_BUCKETS, "maxKeys");
  const keyOf = opts.key ?? "global";
  instances += 1;
  const prefix = `hull:ratelimit:${opts.name ?? instances}:`;

  return (req, res) => {
    let key = String((typeof keyOf === "function" ? keyOf(req) : keyOf) ?? "global");
    if (key.length > 128) key = crypto.sha256(key); // kv keys are bounded; long keys are hashed

    const now = time.now();
    const reset = now - (now % window) + window;
    const ttl = reset - now;
    const bucket = `${prefix}${reset - window}:`;
    let count;
    try {
      count = kv.incr(bucket + key, 1, ttl);
    } catch (e) {
      // The store is down (Redis unreachable): serve rather than refuse
      // everyone, and say so (once a window per worker).
      if (now >= warnedUntil) {
        warnedUntil = reset;
        log.warn(`ratelimit: the kv store failed, so requests pass unlimited: ${e?.message ?? e}`);
      }
      return 0;
    }
    // The first request of a key in this window also counts the window's
    // keys, so client-chosen keys cannot fill the store.
    if (count === 1 && kv.incr(`${bucket}#keys`, 1, ttl) > maxKeys) {
      kv.delete(bucket + key);
      count = limit + 1;
    }

    res.header("X-RateLimit-Limit", String(limit));
    res.header("X-RateLimit-Remaining", String(Math.max(0, limit - count)));
    res.header("X-RateLimit-Reset", String(reset));
    if (count > limit) {
      res.header("Retry-After", String(ttl));
      res.json({ error: "rate limit exceeded", retry_after: ttl }, 429);
      return 1;
    }
    return 0;
  };
}

export const ratelimit = { middleware, check };
