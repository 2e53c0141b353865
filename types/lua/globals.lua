---@meta
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---The request (req), passed to every handler and middleware; valid only during its own request
---@class hull.Request
---@field method string the method as sent: "GET", "POST", …
---@field path string the path without the query string, as sent (not percent-decoded)
---@field params table<string, any> the route's :name captures, percent-decoded strings
---@field query table<string, any> the query string parsed into name → value (strings; of a repeated name the last)
---@field headers table<string, any> request headers by lower-case name; repeated ones joined with ", "
---@field body string? the whole body, or nil/null when there is none and always in app.use middleware
---@field ctx table<string, any> starts empty; the same table/object for every middleware and the handler of one request
local HullRequest = {}

---The response being built (res); the last body method called wins, and nothing is sent until the handler returns
---@class hull.Response
local HullResponse = {}

---set the status code (200-599); returns res, so calls chain
---@param code integer
---@return hull.Response
function HullResponse:status(code) end

---add a response header (again for another line; Content-Type and Location replace); returns res
---@param name string
---@param value string
---@return hull.Response
function HullResponse:header(name, value) end

---send data as JSON (Content-Type: application/json), optionally setting the status
---@param data any
---@param status? integer
function HullResponse:json(data, status) end

---send the body as text/plain; charset=utf-8
---@param body string
function HullResponse:text(body) end

---send the body as text/html; charset=utf-8 with the app's Content-Security-Policy
---@param body string
function HullResponse:html(body) end

---redirect to the URL: the status (default 302), Location and an empty body
---@param url string
---@param status? integer
function HullResponse:redirect(url, status) end

---make the response a Server-Sent Events stream that carries every message published to topic (as an event named after it); call again for more topics; returns res
---@param topic string
---@return hull.Response
function HullResponse:subscribe(topic) end

---make the response a Server-Sent Events stream and send this event first (data: a string, or anything else as JSON); returns res
---@param data any
---@param name? string
---@param id? string
---@return hull.Response
function HullResponse:event(data, name, id) end

---A route handler: function(req, res) / (req, res) => …; its result is ignored (a JS promise is awaited first)
---@alias hull.Handler fun(req: hull.Request, res: hull.Response): any

---A middleware: function(req, res) / (req, res) => …; a non-zero number or true stops the request and sends res as it is, anything else goes on (a JS promise is awaited first)
---@alias hull.Middleware fun(req: hull.Request, res: hull.Response): any

---One WebSocket connection (ws), given to its endpoint's handlers; usable only inside them (reach other connections with subscribe and app.publish)
---@class hull.WebSocket
---@field id integer the connection's number, unique among the open connections of its worker
---@field ctx table<string, any> the upgrade request's req.ctx (what middleware put there); keep the connection's own state here
local HullWebSocket = {}

---send a message once the handler returns and its writes commit: a string as text (as binary when binary is true), JS bytes as binary, anything else as JSON text
---@param data any
---@param binary? boolean
function HullWebSocket:send(data, binary) end

---close the connection (code 1000 by default; 1000-1003, 1007-1014 or 3000-4999; a reason of at most 123 bytes)
---@param code? integer
---@param reason? string
function HullWebSocket:close(code, reason) end

---send this connection every message app.publish sends to topic, from any worker or process
---@param topic string
function HullWebSocket:subscribe(topic) end

---stop sending this connection the topic's messages
---@param topic string
function HullWebSocket:unsubscribe(topic) end

---The handlers of a WebSocket endpoint, given to app.ws; each optional, each run under the same instruction budget as a request handler; one that fails closes the connection with 1011
---@class hull.WebSocketHandlers
---@field open? function function(ws, req): the connection is open; req is the upgrade request, after its middleware
---@field message? function function(ws, data, is_binary): a whole message; data is a string (JS: a Uint8Array when binary)
---@field close? function function(ws, code, reason): the connection has ended (1006 when it broke without a close frame); sends are dropped
local HullWebSocketHandlers = {}

---What the app may reach, given to app.manifest; other fields are kept and returned by app.get_manifest
---@class hull.Manifest
---@field env? string[] the environment variables env.get may read
---@field hosts? string[] the hosts http and smtp may reach (exact names, no port, no wildcards)
---@field csp? string|boolean the Content-Security-Policy res:html sends; false sends none
local HullManifest = {}

---A row: column name → value (Lua: a NULL column is absent; JS: null; a BLOB is a Lua string / JS ArrayBuffer)
---@class hull.Row
local HullRow = {}

---A key pair in hex: Lua returns the two as separate results (public, secret)
---@class hull.KeyPair
---@field publicKey string the public key, hex
---@field secretKey string the secret key, hex
local HullKeyPair = {}

---What every http function returns; a non-2xx status is a normal result
---@class hull.HttpResponse
---@field status integer the status code
---@field body string the body (JS: decoded as UTF-8)
---@field headers table<string, any> lower-case header names to values (of duplicates, the last)
local HullHttpResponse = {}

---Options of a request
---@class hull.HttpOptions
---@field body? string the request body (sent with Content-Length)
---@field headers? table<string, any> header names to values
local HullHttpOptions = {}

---The message and the server to send it through
---@class hull.SmtpOptions
---@field host string the SMTP server; must be in the manifest's hosts
---@field port? integer default 587
---@field tls? boolean|integer false/0 (default): plain text; true/1: STARTTLS (required); 2: TLS from the start
---@field username? string AUTH user (refused over plain text)
---@field password? string AUTH password
---@field from string the sender; may be "Name <a@b.c>"
---@field to string the recipient; a comma-separated list for several
---@field subject string the subject
---@field body string the body
---@field cc? string[] addresses to copy
---@field reply_to? string a Reply-To address
---@field content_type? string default text/plain ("; charset=utf-8" is added)
local HullSmtpOptions = {}

---The outcome of a send
---@class hull.SmtpResult
---@field ok boolean whether the server accepted the message
---@field error? string why not: "body required", "smtp send failed: <reason>"
local HullSmtpResult = {}

---What metrics.counter returns; labels, if given, are a table/object of names to strings, numbers or booleans
---@class hull.Counter
---@field series string the series' name: app_<name>_total for a counter, app_<name> for the others
local HullCounter = {}

---add n (a whole number >= 0, default 1) to the series of these labels
---@param n? number
---@param labels? table<string, any>
function HullCounter:inc(n, labels) end

---What metrics.gauge returns; labels, if given, are a table/object of names to strings, numbers or booleans
---@class hull.Gauge
---@field series string the series' name: app_<name>_total for a counter, app_<name> for the others
local HullGauge = {}

---set the series of these labels to v
---@param v number
---@param labels? table<string, any>
function HullGauge:set(v, labels) end

---add n (default 1) to the series of these labels
---@param n? number
---@param labels? table<string, any>
function HullGauge:inc(n, labels) end

---subtract n (default 1) from the series of these labels
---@param n? number
---@param labels? table<string, any>
function HullGauge:dec(n, labels) end

---What metrics.histogram returns; labels, if given, are a table/object of names to strings, numbers or booleans
---@class hull.Histogram
---@field series string the series' name: app_<name>_total for a counter, app_<name> for the others
local HullHistogram = {}

---add the sample v to the series of these labels
---@param v number
---@param labels? table<string, any>
function HullHistogram:observe(v, labels) end

---A test request's options
---@class hull.TestOptions
---@field body? string the request body (Lua: also a number)
---@field headers? table<string, any> header names to string values (names lower-cased)
---@field middleware? boolean true runs the app's middleware too (default: only the route handler, as in Hull)
local HullTestOptions = {}

---The response to a test request
---@class hull.TestResult
---@field status integer the status code (404 for no route, 500 for a handler error)
---@field body? string the body, when not empty
---@field json? any the decoded body, when it is a JSON object or array
---@field headers table<string, any> response headers by lower-case name (duplicates joined with ", ")
local HullTestResult = {}

---One email and how to send it (snake_case in both languages)
---@class hull.EmailOptions
---@field from string the sender
---@field to string the recipient
---@field subject string the subject
---@field body string the body
---@field cc? string[] addresses to copy
---@field reply_to? string a Reply-To address
---@field content_type? string default text/plain; text/html picks the APIs' HTML field
---@field provider? "smtp"|"postmark"|"sendgrid"|"resend" default "smtp"
---@field smtp_host? string the SMTP server (required for smtp)
---@field smtp_port? integer default 587
---@field smtp_user? string AUTH user
---@field smtp_pass? string AUTH password
---@field smtp_tls? boolean|integer true (default): STARTTLS; false: plain; 2: TLS from the start
---@field api_key? string the API provider's key (required for an API)
---@field api_url? string send the API request elsewhere (a proxy, a test server)
local HullEmailOptions = {}

---The outcome of a send; every failure is reported here
---@class hull.EmailResult
---@field ok boolean whether the message was accepted
---@field error? string why not: "to required", "postmark: <response body>", …
local HullEmailResult = {}

---The SQL words that differ by database
---@class hull.DialectWords
---@field int string INTEGER / BIGINT
---@field id string INTEGER PRIMARY KEY AUTOINCREMENT / BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY
---@field lock string empty / FOR UPDATE SKIP LOCKED
local HullDialectWords = {}

---A message to deliver
---@class hull.OutboxItem
---@field kind string "webhook" or "http" (posted by flush); other kinds fail
---@field destination string the URL to post to
---@field payload string|table<string, any> the body; a table/object is JSON-encoded
---@field headers? table<string, any>|string request headers, or their JSON
---@field idempotency_key? string sent as Idempotency-Key (JS also idempotencyKey)
---@field max_attempts? integer tries before the item fails (JS also maxAttempts)
---@field delay? number seconds before the first attempt
local HullOutboxItem = {}

---What a flush did
---@class hull.OutboxFlush
---@field delivered integer items delivered
---@field failed integer items that used their last attempt
---@field retried integer items to try again later
local HullOutboxFlush = {}

---Items by state
---@class hull.OutboxStats
---@field pending integer not delivered yet
---@field delivered integer delivered
---@field failed integer given up
local HullOutboxStats = {}

---The state of a key's window
---@class hull.RateLimitCheck
---@field allowed boolean whether the request is within the limit
---@field remaining integer requests left in the window
---@field reset integer epoch seconds when the window ends
local HullRateLimitCheck = {}

---Routes, middleware and the manifest; registered while the app file loads
---@class hull.app
app = {}

---register a handler for GET (and HEAD) requests whose path matches the pattern
---@param pattern string
---@param handler hull.Handler
function app.get(pattern, handler) end

---register a handler for POST requests whose path matches the pattern
---@param pattern string
---@param handler hull.Handler
function app.post(pattern, handler) end

---register a handler for PUT requests whose path matches the pattern
---@param pattern string
---@param handler hull.Handler
function app.put(pattern, handler) end

---register a handler for PATCH requests whose path matches the pattern
---@param pattern string
---@param handler hull.Handler
function app.patch(pattern, handler) end

---register a handler for DELETE requests whose path matches the pattern
---@param pattern string
---@param handler hull.Handler
function app.delete(pattern, handler) end

---Hull's name for app.delete
---@param pattern string
---@param handler hull.Handler
function app.del(pattern, handler) end

---register a handler for OPTIONS requests whose path matches the pattern
---@param pattern string
---@param handler hull.Handler
function app.options(pattern, handler) end

---register a pre-body middleware (runs before the body is read) for a method ("*": any) and an exact path or a "/prefix/*"
---@param method string
---@param pattern string
---@param middleware hull.Middleware
function app.use(method, pattern, middleware) end

---register a post-body middleware (runs after the body is read, just before the handler)
---@param method string
---@param pattern string
---@param middleware hull.Middleware
function app.use_post(method, pattern, middleware) end

---declare what the app may reach (env variables, outbound hosts, CSP); once, while the app loads
---@param manifest hull.Manifest
function app.manifest(manifest) end

---the value given to app.manifest, or nil/undefined when there was none
---@return hull.Manifest?
function app.get_manifest() end

---accepted for Hull apps; does nothing observable
---@param value any
function app.config(value) end

---register a WebSocket endpoint: GET requests to the pattern upgrade once the middleware has run, and each event of a connection calls one of the handlers on the worker that holds it
---@param pattern string
---@param handlers hull.WebSocketHandlers
function app.ws(pattern, handlers) end

---send data (a string, bytes, or anything else as JSON) to every subscriber of topic on every worker and, with --kv redis://, every process; sent once this request's writes commit, not at all if its handler fails
---@param topic string
---@param data any
function app.publish(topic, data) end

---The app's SQL database (SQLite or PostgreSQL); db.dialect is the string "sqlite" or "postgres"
---@class hull.db
db = {}

---run one statement with ? placeholders and return its rows (none: an empty list)
---@param sql string
---@param params? any[]
---@return hull.Row[]
function db.query(sql, params) end

---run a statement that changes data and return how many rows it changed (without params: several statements)
---@param sql string
---@param params? any[]
---@return integer
function db.exec(sql, params) end

---the id of the row the last INSERT on this worker's connection created
---@return integer
function db.last_id() end

---run fn in a transaction: commit if it returns, roll back and re-raise if it raises; returns what fn returns (JS: fn must be synchronous)
---@param fn function
---@return any
function db.batch(fn) end

---JSON encoding and decoding
---@class hull.json
json = {}

---the value as JSON text (Lua: keys sorted, an empty table is []; JS: JSON.stringify, undefined gives "null")
---@param value any
---@return string
function json.encode(value) end

---the value of JSON text (Lua: null becomes nil; JS: JSON.parse)
---@param text string
---@return any
function json.decode(text) end

---The current time, in UTC
---@class hull.time
time = {}

---Unix time in seconds
---@return integer
function time.now() end

---Unix time in milliseconds
---@return integer
function time.now_ms() end

---milliseconds on a monotonic clock started with the process (for durations, not dates)
---@return integer
function time.clock() end

---today's date in UTC: "2026-11-27"
---@return string
function time.date() end

---now in UTC: "2026-11-27T08:55:53Z"
---@return string
function time.datetime() end

---The environment variables the manifest lists
---@class hull.env
env = {}

---an environment variable the manifest lists in env, or nil/null when not listed or not set
---@param name string
---@return string?
function env.get(name) end

---Log lines to stderr, tagged [app] (JS: console.log/info/debug/warn/error write the same)
---@class hull.log
log = {}

---log each value as its own debug line (shown with -l debug)
---@param ...? any
function log.debug(...) end

---log each value as its own info line
---@param ...? any
function log.info(...) end

---log each value as its own warning line
---@param ...? any
function log.warn(...) end

---log each value as its own error line
---@param ...? any
function log.error(...) end

---Hashes, HMAC, passwords, Ed25519 signatures, NaCl secretbox/box, base64url and random bytes
---@class hull.crypto
crypto = {}

---SHA-256 of the data, as 64 hex chars
---@param data string|string
---@return string
function crypto.sha256(data) end

---SHA-512 of the data, as 128 hex chars
---@param data string|string
---@return string
function crypto.sha512(data) end

---n random bytes (1-65536)
---@param n integer
---@return string
function crypto.random(n) end

---a PBKDF2-HMAC-SHA256 hash to store: "pbkdf2:100000:<salt>:<hash>"
---@param password string|string
---@return string
function crypto.hash_password(password) end

---whether the password matches a stored hash (constant time)
---@param password string|string
---@param stored string|string
---@return boolean
function crypto.verify_password(password, stored) end

---a new Ed25519 key pair, hex (Lua: two results)
---@return string public_key
---@return string secret_key
function crypto.ed25519_keypair() end

---the Ed25519 signature of the data, 128 hex chars
---@param data string|string
---@param secret_key string|string
---@return string
function crypto.ed25519_sign(data, secret_key) end

---whether the signature is the key's signature of the data
---@param data string|string
---@param signature string|string
---@param public_key string|string
---@return boolean
function crypto.ed25519_verify(data, signature, public_key) end

---NaCl crypto_auth (HMAC-SHA512/256) tag, 64 hex chars; key 32 bytes hex
---@param message string|string
---@param key string|string
---@return string
function crypto.auth(message, key) end

---whether the tag authenticates the message
---@param tag string|string
---@param message string|string
---@param key string|string
---@return boolean
function crypto.auth_verify(tag, message, key) end

---XSalsa20-Poly1305 sealed message (hex); nonce 24 bytes, key 32, both hex
---@param message string|string
---@param nonce string|string
---@param key string|string
---@return string
function crypto.secretbox(message, nonce, key) end

---the opened message, or nil/null if it does not authenticate
---@param sealed string|string
---@param nonce string|string
---@param key string|string
---@return string?
function crypto.secretbox_open(sealed, nonce, key) end

---NaCl box (Curve25519-XSalsa20-Poly1305) sealed message, hex
---@param message string|string
---@param nonce string|string
---@param public_key string|string
---@param secret_key string|string
---@return string
function crypto.box(message, nonce, public_key, secret_key) end

---the opened box, or nil/null if it does not authenticate
---@param sealed string|string
---@param nonce string|string
---@param public_key string|string
---@param secret_key string|string
---@return string?
function crypto.box_open(sealed, nonce, public_key, secret_key) end

---a new Curve25519 key pair for box, hex (Lua: two results)
---@return string public_key
---@return string secret_key
function crypto.box_keypair() end

---HMAC-SHA256 of the data with a hex key, 64 hex chars
---@param data string|string
---@param key string|string
---@return string
function crypto.hmac_sha256(data, key) end

---whether the HMAC matches (constant time)
---@param data string|string
---@param key string|string
---@param expected string|string
---@return boolean
function crypto.hmac_sha256_verify(data, key, expected) end

---URL-safe base64 without padding
---@param data string|string
---@return string
function crypto.base64url_encode(data) end

---the decoded bytes (JS: as UTF-8 text), or nil/null if invalid
---@param text string|string
---@return string?
function crypto.base64url_decode(text) end

---JWT HS256 signature: base64url HMAC-SHA256 keyed with the secret's bytes
---@param data string|string
---@param secret string|string
---@return string
function crypto.hs256_sign(data, secret) end

---whether a JWT HS256 signature matches (constant time)
---@param data string|string
---@param secret string|string
---@param signature string|string
---@return boolean
function crypto.hs256_verify(data, secret, signature) end

---Outbound HTTP to the hosts the manifest lists
---@class hull.http
http = {}

---send a request with any method to a host in the manifest
---@param method string
---@param url string
---@param options? hull.HttpOptions
---@return hull.HttpResponse
function http.request(method, url, options) end

---send a GET request (no body)
---@param url string
---@param options? hull.HttpOptions
---@return hull.HttpResponse
function http.get(url, options) end

---send a POST request with a body
---@param url string
---@param body? string
---@param options? hull.HttpOptions
---@return hull.HttpResponse
function http.post(url, body, options) end

---send a PUT request with a body
---@param url string
---@param body? string
---@param options? hull.HttpOptions
---@return hull.HttpResponse
function http.put(url, body, options) end

---send a PATCH request with a body
---@param url string
---@param body? string
---@param options? hull.HttpOptions
---@return hull.HttpResponse
function http.patch(url, body, options) end

---send a DELETE request (no body)
---@param url string
---@param options? hull.HttpOptions
---@return hull.HttpResponse
function http.delete(url, options) end

---Outbound email over SMTP to the hosts the manifest lists (not configured in cove test)
---@class hull.smtp
smtp = {}

---send one message through an SMTP server the manifest's hosts list; raises only when smtp is not configured
---@param options hull.SmtpOptions
---@return hull.SmtpResult
function smtp.send(options) end

---The app's own Prometheus metrics, served with Cove's on --metrics (app_<name>; no-ops without it)
---@class hull.metrics
metrics = {}

---a counter named app_<name>_total (made once per name; later calls return the same series)
---@param name string
---@param help? string
---@return hull.Counter
function metrics.counter(name, help) end

---a gauge named app_<name>: a value that goes up and down
---@param name string
---@param help? string
---@return hull.Gauge
function metrics.gauge(name, help) end

---a histogram named app_<name>, in the server's buckets (0.0005 to 10: seconds suit it)
---@param name string
---@param help? string
---@return hull.Histogram
function metrics.histogram(name, help) end

---The global of cove test files: test(name, fn) registers a case (run in file order; an async JS fn is awaited), and its functions dispatch requests and assert
---@class hull.test
---@overload fun(name: string, fn: function)
test = {}

---dispatch a GET request in-process (the path may carry a ?query) and return the result
---@param path string
---@param options? hull.TestOptions
---@return hull.TestResult
function test.get(path, options) end

---dispatch a POST request in-process and return the result
---@param path string
---@param options? hull.TestOptions
---@return hull.TestResult
function test.post(path, options) end

---dispatch a PUT request in-process and return the result
---@param path string
---@param options? hull.TestOptions
---@return hull.TestResult
function test.put(path, options) end

---dispatch a PATCH request in-process and return the result
---@param path string
---@param options? hull.TestOptions
---@return hull.TestResult
function test.patch(path, options) end

---dispatch a DELETE request in-process and return the result
---@param path string
---@param options? hull.TestOptions
---@return hull.TestResult
function test.delete(path, options) end

---fail unless the two are equal (numbers by value, tables/objects and arrays deeply)
---@param actual any
---@param expected any
---@param msg? string
function test.eq(actual, expected, msg) end

---fail unless the value is truthy
---@param value any
---@param msg? string
function test.ok(value, msg) end

---call fn and fail unless it raises (with a message containing substring, if given)
---@param fn function
---@param substring? string
function test.err(fn, substring) end

---The code of a Cove capability error caught by `pcall` (`"db.constraint"`), or nil for any other string
---@param s string
---@return string?
function string.code(s) end
