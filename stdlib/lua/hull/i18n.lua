-- hull.i18n: translations and number/date/currency formats (Hull §10.10).
--
--   i18n.load("hu", require("./locales/hu.json"))
--   i18n.locale(i18n.detect(req.headers["accept-language"]) or "en")
--   i18n.t("greet", { name = "Anna" })       -- "Szia, ${name}!" → "Szia, Anna!"
--
-- The active locale belongs to this worker's VM, as in Hull: set it at the
-- start of every request, before the first t(). A handler that waits (on a
-- password hash) lets the worker run other requests meanwhile, and they may
-- switch it; pass the locale to t() explicitly after such a wait:
-- i18n.t(key, params, "hu").

local M = {}

local locales = {} -- name → table
local order = {} -- names in load order, so detect() is deterministic
local active = nil

function M.load(name, tbl)
  if type(name) ~= "string" or type(tbl) ~= "table" then
    error("i18n.load: expected (string, table)", 2)
  end
  if locales[name] == nil then
    order[#order + 1] = name
  end
  locales[name] = tbl
end

-- Get, or set and get, the active locale.
function M.locale(name)
  if name ~= nil then
    active = name
  end
  return active
end

function M.reset()
  locales, order, active = {}, {}, nil
end

-- Dotted lookup ("errors.not_found") in a locale table.
local function lookup(tbl, key)
  local node = tbl
  for part in key:gmatch("[^.]+") do
    if type(node) ~= "table" then
      return nil
    end
    node = node[part]
  end
  return node
end

-- The translation of `key` with ${name} placeholders filled from `params`;
-- the key itself when there is none. `lang` (a Cove addition) overrides the
-- active locale for this call.
function M.t(key, params, lang)
  local tbl = locales[lang or active]
  local text = tbl and type(key) == "string" and lookup(tbl, key)
  if type(text) ~= "string" then
    return key
  end
  return (text:gsub("%${([%w_]+)}", function(name)
    local value = params and params[name]
    if value == nil then
      return nil -- keep ${name}
    end
    return tostring(value)
  end))
end

-- The format table of the active locale; both spellings of each key are
-- accepted (Hull's Lua took both, its JS only camelCase).
local function fmt(name)
  local f = (locales[active] or {}).format or {}
  local camel = name:gsub("_(%l)", string.upper)
  if f[camel] ~= nil then
    return f[camel]
  end
  return f[name]
end

-- "1234567" → "1,234,567"
local function group(digits, sep)
  local head = #digits % 3
  local parts = { head > 0 and digits:sub(1, head) or nil }
  for i = head + 1, #digits, 3 do
    parts[#parts + 1] = digits:sub(i, i + 2)
  end
  return table.concat(parts, sep)
end

-- "1,234.5": `abs` rounded half up to `decimals` places (same doubles as JS).
local function fixed(abs, decimals, strip)
  local scale = math.tointeger(10 ^ decimals)
  local scaled = math.floor((abs + 0.0) * scale + 0.5)
  local int, frac = scaled // scale, scaled % scale
  local text = group(string.format("%d", int), fmt("thousands_sep") or ",")
  local digits = decimals > 0 and string.format("%0" .. decimals .. "d", frac) or ""
  if strip then
    digits = digits:gsub("0+$", "")
  end
  if digits ~= "" then
    text = text .. (fmt("decimal_sep") or ".") .. digits
  end
  return text
end

-- Integers in full; fractions to 10 significant digits (at most 10
-- decimals), trailing zeros dropped. Non-numbers as tostring.
function M.number(n)
  if type(n) ~= "number" or n ~= n or math.abs(n) >= 2^53 then
    return tostring(n)
  end
  local abs = math.abs(n)
  local int_digits = abs >= 1 and #string.format("%d", math.floor(abs)) or 0
  local text = fixed(abs, math.max(0, 10 - int_digits), true)
  return (n < 0 and text ~= "0") and "-" .. text or text
end

-- days since 1970-01-01 → year, month, day (proleptic Gregorian).
local function civil(days)
  days = days + 719468
  local era = days // 146097
  local doe = days - era * 146097
  local yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
  local doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
  local mp = (5 * doy + 2) // 153
  local day = doy - (153 * mp + 2) // 5 + 1
  local month = mp < 10 and mp + 3 or mp - 9
  return yoe + era * 400 + (month <= 2 and 1 or 0), month, day
end

-- A Unix time (default now) in the locale's date pattern, in UTC. Tokens:
-- YYYY MM DD HH mm ss (every occurrence).
function M.date(ts)
  ts = math.floor(tonumber(ts) or time.now())
  local secs = ts % 86400
  local y, m, d = civil(ts // 86400)
  local values = {
    YYYY = string.format("%04d", y), MM = string.format("%02d", m), DD = string.format("%02d", d),
    HH = string.format("%02d", secs // 3600), mm = string.format("%02d", secs % 3600 // 60),
    ss = string.format("%02d", secs % 60),
  }
  return (tostring(fmt("date_pattern") or "YYYY-MM-DD"):gsub("YYYY", values.YYYY)
    :gsub("MM", values.MM):gsub("DD", values.DD):gsub("HH", values.HH)
    :gsub("mm", values.mm):gsub("ss", values.ss))
end

-- An amount with the locale's currency format: format.currency[code] =
-- { symbol, position = "after" | "before", decimal_digits = 2 }.
function M.currency(amount, code)
  local spec = (fmt("currency") or {})[code]
  if type(spec) ~= "table" or type(amount) ~= "number" or math.abs(amount) >= 2^53 then
    return M.number(amount) .. " " .. tostring(code)
  end
  local decimals = spec.decimal_digits or spec.decimalDigits or 2
  local text = fixed(math.abs(amount), decimals, false)
  local sign = amount < 0 and "-" or ""
  if spec.position == "after" then
    return sign .. text .. " " .. tostring(spec.symbol or code)
  end
  return sign .. tostring(spec.symbol or code) .. text
end

-- A loaded locale for a language tag: exact (case-insensitive), its base
-- language ("en-US" → "en"), or a loaded variant of the base ("pt" → "pt-BR").
local function match(tag)
  tag = tag:lower()
  local base = tag:match("^([^-_]+)")
  for _, name in ipairs(order) do
    if name:lower() == tag then
      return name
    end
  end
  for _, name in ipairs(order) do
    if name:lower() == base then
      return name
    end
  end
  for _, name in ipairs(order) do
    local lower = name:lower()
    if lower:sub(1, #base + 1) == base .. "-" or lower:sub(1, #base + 1) == base .. "_" then
      return name
    end
  end
  return nil
end

-- The best loaded locale for an Accept-Language value (or a request, whose
-- header is read): tags by q-value, highest first, ties in header order;
-- q=0 and "*" are skipped. nil when nothing matches.
function M.detect(source)
  local header = source
  if type(source) == "table" then
    header = source.headers and source.headers["accept-language"]
  end
  if type(header) ~= "string" then
    return nil
  end
  local tags = {}
  for item in header:gmatch("[^,]+") do
    local tag = item:match("^%s*([^;%s]+)")
    local q = tonumber(item:match(";%s*[qQ]%s*=%s*([%d.]+)") or "1") or 0
    if tag and tag ~= "*" and q > 0 then
      tags[#tags + 1] = { tag = tag, q = q, i = #tags }
    end
  end
  table.sort(tags, function(a, b)
    if a.q ~= b.q then
      return a.q > b.q
    end
    return a.i < b.i
  end)
  for _, t in ipairs(tags) do
    local name = match(t.tag)
    if name then
      return name
    end
  end
  return nil
end

return M
