-- The reference for Cove's Lua JSON encoders (stack.rs, layout.rs, rows.rs):
-- Hull's rules from docs/compat.md ("JSON (Lua)") written out in plain Lua,
-- slowly and without any of Cove's code. Errors are raised as
-- { kind = "..." }, named as cove_caps::json::JsonError's variants.
--
-- * nil is null; integers are written exactly; floats that are integral and
--   below 2^53 in magnitude print as integers (-0.0 as 0); other floats in
--   a form that reads back as the same double; NaN and infinities fail.
-- * Strings: invalid UTF-8 becomes U+FFFD (each maximal invalid subpart, as
--   Rust's String::from_utf8_lossy does); `"`, `\` and bytes below 0x20 are
--   escaped (\b \f \n \r \t, else \u00XX); nothing else is.
-- * Tables: raw reads only (metatables are not consulted). A table whose
--   raw length is above 0 is an array and must hold exactly the keys
--   1..#t; any other table is an object with string keys only, written with
--   its keys sorted bytewise; an empty one is `[]`. At most 128 levels.
--
-- Errors come in walk order: a table's keys are checked (in `next` order)
-- before its values are visited, values in key order.

local MAX_DEPTH = 128
local REPLACEMENT = "\u{FFFD}"

local function fail(kind)
  error({ kind = kind }, 0)
end

-- Replace each maximal invalid subpart of `s` with U+FFFD.
local function lossy(s)
  if not s:find("[\128-\255]") then
    return s
  end
  local out, i, n = {}, 1, #s
  while i <= n do
    local c = s:byte(i)
    -- How many continuation bytes follow the lead byte, and the range of
    -- the first one (it excludes overlong forms, surrogates, > U+10FFFF).
    local need, lo, hi = -1, 0x80, 0xBF
    if c < 0x80 then
      need = 0
    elseif c >= 0xC2 and c <= 0xDF then
      need = 1
    elseif c == 0xE0 then
      need, lo = 2, 0xA0
    elseif (c >= 0xE1 and c <= 0xEC) or c == 0xEE or c == 0xEF then
      need = 2
    elseif c == 0xED then
      need, hi = 2, 0x9F
    elseif c == 0xF0 then
      need, lo = 3, 0x90
    elseif c >= 0xF1 and c <= 0xF3 then
      need = 3
    elseif c == 0xF4 then
      need, hi = 3, 0x8F
    end
    if need < 0 then
      out[#out + 1] = REPLACEMENT
      i = i + 1
    else
      local j, whole = i + 1, true
      for k = 1, need do
        local b = s:byte(j)
        local l, h = 0x80, 0xBF
        if k == 1 then
          l, h = lo, hi
        end
        if not b or b < l or b > h then
          whole = false
          break
        end
        j = j + 1
      end
      out[#out + 1] = whole and s:sub(i, j - 1) or REPLACEMENT
      i = j
    end
  end
  return table.concat(out)
end

local ESCAPES = {
  ['"'] = '\\"',
  ["\\"] = "\\\\",
  ["\b"] = "\\b",
  ["\f"] = "\\f",
  ["\n"] = "\\n",
  ["\r"] = "\\r",
  ["\t"] = "\\t",
}

local function quote(s)
  local body = lossy(s):gsub('[\0-\31"\\]', function(c)
    return ESCAPES[c] or string.format("\\u%04x", c:byte())
  end)
  return '"' .. body .. '"'
end

local function number(x)
  if math.type(x) == "integer" then
    return string.format("%d", x)
  end
  if x ~= x or x == math.huge or x == -math.huge then
    fail("NotFinite")
  end
  if x == math.floor(x) and math.abs(x) < 2 ^ 53 then
    return string.format("%d", math.tointeger(x))
  end
  local s = string.format("%.17g", x)
  -- Keep it a float when read back (2^53 alone would read as an integer).
  if not s:find("[.eEn]") then
    s = s .. ".0"
  end
  return s
end

local walk

local function array(t, n, depth, out)
  local count = 0
  for k in next, t do
    if math.type(k) ~= "integer" or k < 1 then
      fail("MixedKeys")
    end
    if k > n then
      fail("SparseArray")
    end
    count = count + 1
  end
  if count ~= n then
    fail("SparseArray")
  end
  out[#out + 1] = "["
  for i = 1, n do
    if i > 1 then
      out[#out + 1] = ","
    end
    walk(rawget(t, i), depth, out)
  end
  out[#out + 1] = "]"
end

local function object(t, depth, out)
  local keys = {}
  for k in next, t do
    if type(k) ~= "string" then
      fail("MixedKeys")
    end
    keys[#keys + 1] = k
  end
  if #keys == 0 then
    out[#out + 1] = "[]"
    return
  end
  -- Bytewise: Lua compares strings with strcoll, which is strcmp in the
  -- C locale a Rust program runs in.
  table.sort(keys)
  out[#out + 1] = "{"
  for i, k in ipairs(keys) do
    if i > 1 then
      out[#out + 1] = ","
    end
    out[#out + 1] = quote(k)
    out[#out + 1] = ":"
    walk(rawget(t, k), depth, out)
  end
  out[#out + 1] = "}"
end

walk = function(v, depth, out)
  local t = type(v)
  if t == "nil" then
    out[#out + 1] = "null"
  elseif t == "boolean" then
    out[#out + 1] = tostring(v)
  elseif t == "number" then
    out[#out + 1] = number(v)
  elseif t == "string" then
    out[#out + 1] = quote(v)
  elseif t == "table" then
    depth = depth + 1
    if depth > MAX_DEPTH then
      fail("TooDeep")
    end
    local n = rawlen(v)
    if n > 0 then
      array(v, n, depth, out)
    else
      object(v, depth, out)
    end
  else
    fail("Unsupported")
  end
end

REF = {}

-- `true, text` or `false, kind`.
function REF.encode(v)
  local out = {}
  local ok, e = pcall(walk, v, 0, out)
  if ok then
    return true, table.concat(out)
  end
  if type(e) == "table" then
    return false, e.kind
  end
  error(e, 0)
end

-- Cove's json.encode the same way: `true, text` or `false, kind`.
local KINDS = {
  { "NaN or infinity", "NotFinite" },
  { "sparse array", "SparseArray" },
  { "mixed or invalid key", "MixedKeys" },
  { "nested too deeply", "TooDeep" },
  { "cannot encode a", "Unsupported" },
}

function REF.kind(message)
  for _, k in ipairs(KINDS) do
    if message:find(k[1], 1, true) then
      return k[2]
    end
  end
  return "unknown: " .. message
end

function REF.cove(v)
  local ok, r = pcall(json.encode, v)
  if ok then
    return true, r
  end
  return false, REF.kind(r)
end
