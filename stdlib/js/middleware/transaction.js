// hull:middleware:transaction — run a function in one database transaction
// (Hull §10.12).
//   transaction.run(() => { ... })                  // errors roll back and re-throw
//   const [ok, err] = transaction.attempt(() => { ... })

import { db } from "hull:db";

// Hull's middleware only marks the request (req.ctx._txn = true); it does
// not wrap the handler. Kept for apps that read the mark.
function middleware() {
  return (req) => {
    req.ctx._txn = true;
    return 0;
  };
}

// db.batch(fn): commit if fn returns, roll back and re-throw if it throws.
// Returns what fn returns.
function run(fn) {
  return db.batch(fn);
}

// Like run, but returns [true, null] or [false, error] instead of throwing.
function attempt(fn) {
  try {
    db.batch(fn);
    return [true, null];
  } catch (err) {
    return [false, err];
  }
}

export const transaction = { middleware, run, attempt };
