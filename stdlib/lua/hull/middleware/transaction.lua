-- hull.middleware.transaction: run a function in one database transaction
-- (Hull §10.12).
--   transaction.run(function() ... end)          -- errors roll back and re-raise
--   local ok, err = transaction.try(function() ... end)

local transaction = {}

-- Hull's middleware only marks the request (req.ctx._txn = true); it does
-- not wrap the handler. Kept for apps that read the mark.
function transaction.middleware()
  return function(req, res)
    req.ctx._txn = true
    return 0
  end
end

-- db.batch(fn): commit if fn returns, roll back and re-raise if it raises.
-- Returns what fn returns.
function transaction.run(fn)
  return db.batch(fn)
end

-- Like run, but returns true, or false and the error, instead of raising.
function transaction.try(fn)
  local ok, err = pcall(db.batch, fn)
  if ok then
    return true
  end
  return false, err
end

return transaction
