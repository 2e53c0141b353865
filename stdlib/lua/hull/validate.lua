-- hull.validate: check a table of input against a schema (Hull §10.8).
--
--   local ok, errors = validate.check(body, {
--     email = { required = true, email = true },
--     password = { required = true, min = 8, message = "too short" },
--   })
--
-- Per field the rules run in this order and stop at the first failure:
-- trim, required, type, min, max, pattern (a Lua pattern), oneof, email, fn.
-- `message` replaces the built-in message of every rule but `fn`.

local M = {}

local TYPES = {
  string = { "a string", function(v) return type(v) == "string" end },
  number = { "a number", function(v) return type(v) == "number" end },
  integer = { "an integer", function(v) return type(v) == "number" and v == math.floor(v) end },
  boolean = { "a boolean", function(v) return type(v) == "boolean" end },
}

-- 8, not 8.0, for integral numbers in messages.
local function show(v)
  if type(v) == "number" and v == math.floor(v) and math.abs(v) < 2^53 then
    return string.format("%d", v)
  end
  return tostring(v)
end

-- Characters, not bytes (Hull's Lua counted bytes and its JS UTF-16 units);
-- bytes for text that is not UTF-8.
local function length(s)
  return utf8.len(s) or #s
end

-- The built-in message for the first rule `value` fails, or nil.
local function first_failure(value, rule, field)
  if rule.required and (value == nil or value == "") then
    return "is required"
  end
  if rule.type then
    local t = TYPES[rule.type]
    if not t then
      error(string.format("validate.check: field %q has unknown type %q (use string, number, integer or boolean)",
        field, tostring(rule.type)), 3)
    end
    if not t[2](value) then
      return "must be " .. t[1]
    end
  end
  local size, unit = nil, ""
  if type(value) == "string" then
    size, unit = length(value), " characters"
  elseif type(value) == "number" then
    size = value
  end
  if rule.min and size and size < rule.min then
    return "must be at least " .. show(rule.min) .. unit
  end
  if rule.max and size and size > rule.max then
    return "must be at most " .. show(rule.max) .. unit
  end
  if rule.pattern and (type(value) ~= "string" or not value:find(rule.pattern)) then
    return "does not match the required pattern"
  end
  if rule.oneof then
    local found = false
    for _, allowed in ipairs(rule.oneof) do
      found = found or allowed == value
    end
    if not found then
      local names = {}
      for i, allowed in ipairs(rule.oneof) do
        names[i] = show(allowed)
      end
      return "must be one of: " .. table.concat(names, ", ")
    end
  end
  if rule.email and (type(value) ~= "string" or not value:find("^[^%s@]+@[^%s@]+%.[^%s@]+$")) then
    return "is not a valid email"
  end
  return nil
end

-- ok, errors: `true, nil`, or `false, { field = message }` (one per field).
function M.check(data, schema)
  if type(data) ~= "table" then
    data = {}
  end
  if type(schema) ~= "table" then
    return true, nil
  end
  local errors = nil
  for field, rule in pairs(schema) do
    if type(rule) ~= "table" then
      error(string.format("validate.check: the rules of field %q must be a table", tostring(field)), 2)
    end
    if rule.trim and type(data[field]) == "string" then
      data[field] = data[field]:match("^%s*(.-)%s*$")
    end
    local value = data[field]
    -- An optional field that is absent is not checked further.
    if rule.required or value ~= nil then
      local message = first_failure(value, rule, field)
      if message then
        message = rule.message or message
      elseif rule.fn then
        local custom = rule.fn(value, field, data)
        if type(custom) == "string" and custom ~= "" then
          message = custom
        end
      end
      if message then
        errors = errors or {}
        errors[field] = message
      end
    end
  end
  return errors == nil, errors
end

return M
