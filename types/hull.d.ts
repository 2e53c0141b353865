// Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
// do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

declare namespace Hull {
  /** The request (req), passed to every handler and middleware; valid only during its own request */
  interface Request {
    /** the method as sent: "GET", "POST", … */
    method: string;
    /** the path without the query string, as sent (not percent-decoded) */
    path: string;
    /** the route's :name captures, percent-decoded strings */
    params: Record<string, any>;
    /** the query string parsed into name → value (strings; of a repeated name the last) */
    query: Record<string, any>;
    /** request headers by lower-case name; repeated ones joined with ", " */
    headers: Record<string, any>;
    /** the whole body, or nil/null when there is none and always in app.use middleware */
    body: string | null;
    /** starts empty; the same table/object for every middleware and the handler of one request */
    ctx: Record<string, any>;
    /** case-insensitive lookup in req.headers (undefined when absent) */
    header(name: string): string | null;
    /** every field but ctx, as JSON.stringify(req) and res.json(req) encode it */
    toJSON(): Record<string, any>;
  }
  /** The response being built (res); the last body method called wins, and nothing is sent until the handler returns */
  interface Response {
    /** set the status code (200-599); returns res, so calls chain */
    status(code: number): Hull.Response;
    /** add a response header (again for another line; Content-Type and Location replace); returns res */
    header(name: string, value: string): Hull.Response;
    /** send data as JSON (Content-Type: application/json), optionally setting the status */
    json(data: any, status?: number): void;
    /** send the body as text/plain; charset=utf-8 */
    text(body: string): void;
    /** send the body as text/html; charset=utf-8 with the app's Content-Security-Policy */
    html(body: string): void;
    /** redirect to the URL: the status (default 302), Location and an empty body */
    redirect(url: string, status?: number): void;
    /** make the response a Server-Sent Events stream that carries every message published to topic (as an event named after it); call again for more topics; returns res */
    subscribe(topic: string): Hull.Response;
    /** make the response a Server-Sent Events stream and send this event first (data: a string, or anything else as JSON); returns res */
    event(data: any, name?: string, id?: string): Hull.Response;
  }
  /** A route handler: function(req, res) / (req, res) => …; its result is ignored (a JS promise is awaited first) */
  type Handler = (req: Hull.Request, res: Hull.Response) => unknown;
  /** A middleware: function(req, res) / (req, res) => …; a non-zero number or true stops the request and sends res as it is, anything else goes on (a JS promise is awaited first) */
  type Middleware = (req: Hull.Request, res: Hull.Response) => unknown;
  /** One WebSocket connection (ws), given to its endpoint's handlers; usable only inside them (reach other connections with subscribe and app.publish) */
  interface WebSocket {
    /** the connection's number, unique among the open connections of its worker */
    id: number;
    /** the upgrade request's req.ctx (what middleware put there); keep the connection's own state here */
    ctx: Record<string, any>;
    /** send a message once the handler returns and its writes commit: a string as text (as binary when binary is true), JS bytes as binary, anything else as JSON text */
    send(data: any, binary?: boolean): void;
    /** close the connection (code 1000 by default; 1000-1003, 1007-1014 or 3000-4999; a reason of at most 123 bytes) */
    close(code?: number, reason?: string): void;
    /** send this connection every message app.publish sends to topic, from any worker or process */
    subscribe(topic: string): void;
    /** stop sending this connection the topic's messages */
    unsubscribe(topic: string): void;
  }
  /** The handlers of a WebSocket endpoint, given to app.ws; each optional, each run under the same instruction budget as a request handler; one that fails closes the connection with 1011 */
  interface WebSocketHandlers {
    /** function(ws, req): the connection is open; req is the upgrade request, after its middleware */
    open?: (...args: any[]) => any;
    /** function(ws, data, is_binary): a whole message; data is a string (JS: a Uint8Array when binary) */
    message?: (...args: any[]) => any;
    /** function(ws, code, reason): the connection has ended (1006 when it broke without a close frame); sends are dropped */
    close?: (...args: any[]) => any;
  }
  /** What the app may reach, given to app.manifest; other fields are kept and returned by app.get_manifest */
  interface Manifest {
    /** the environment variables env.get may read */
    env?: Array<string>;
    /** the hosts http and smtp may reach (exact names, no port, no wildcards) */
    hosts?: Array<string>;
    /** the Content-Security-Policy res:html sends; false sends none */
    csp?: string | boolean;
  }
  /** A row: column name → value (Lua: a NULL column is absent; JS: null; a BLOB is a Lua string / JS ArrayBuffer) */
  interface Row {
    [name: string]: any;
  }
  /** A key pair in hex: Lua returns the two as separate results (public, secret) */
  interface KeyPair {
    /** the public key, hex */
    publicKey: string;
    /** the secret key, hex */
    secretKey: string;
  }
  /** What every http function returns; a non-2xx status is a normal result */
  interface HttpResponse {
    /** the status code */
    status: number;
    /** the body (JS: decoded as UTF-8) */
    body: string;
    /** lower-case header names to values (of duplicates, the last) */
    headers: Record<string, any>;
  }
  /** Options of a request */
  interface HttpOptions {
    /** the request body (sent with Content-Length) */
    body?: string;
    /** header names to values */
    headers?: Record<string, any>;
  }
  /** The message and the server to send it through */
  interface SmtpOptions {
    /** the SMTP server; must be in the manifest's hosts */
    host: string;
    /** default 587 */
    port?: number;
    /** false/0 (default): plain text; true/1: STARTTLS (required); 2: TLS from the start */
    tls?: boolean | number;
    /** AUTH user (refused over plain text) */
    username?: string;
    /** AUTH password */
    password?: string;
    /** the sender; may be "Name <a@b.c>" */
    from: string;
    /** the recipient; a comma-separated list for several */
    to: string;
    /** the subject */
    subject: string;
    /** the body */
    body: string;
    /** addresses to copy */
    cc?: Array<string>;
    /** a Reply-To address */
    reply_to?: string;
    /** default text/plain ("; charset=utf-8" is added) */
    content_type?: string;
  }
  /** The outcome of a send */
  interface SmtpResult {
    /** whether the server accepted the message */
    ok: boolean;
    /** why not: "body required", "smtp send failed: <reason>" */
    error?: string;
  }
  /** What metrics.counter returns; labels, if given, are a table/object of names to strings, numbers or booleans */
  interface Counter {
    /** the series' name: app_<name>_total for a counter, app_<name> for the others */
    series: string;
    /** add n (a whole number >= 0, default 1) to the series of these labels */
    inc(n?: number, labels?: Record<string, any>): void;
  }
  /** What metrics.gauge returns; labels, if given, are a table/object of names to strings, numbers or booleans */
  interface Gauge {
    /** the series' name: app_<name>_total for a counter, app_<name> for the others */
    series: string;
    /** set the series of these labels to v */
    set(v: number, labels?: Record<string, any>): void;
    /** add n (default 1) to the series of these labels */
    inc(n?: number, labels?: Record<string, any>): void;
    /** subtract n (default 1) from the series of these labels */
    dec(n?: number, labels?: Record<string, any>): void;
  }
  /** What metrics.histogram returns; labels, if given, are a table/object of names to strings, numbers or booleans */
  interface Histogram {
    /** the series' name: app_<name>_total for a counter, app_<name> for the others */
    series: string;
    /** add the sample v to the series of these labels */
    observe(v: number, labels?: Record<string, any>): void;
  }
  /** A test request's options */
  interface TestOptions {
    /** the request body (Lua: also a number) */
    body?: string;
    /** header names to string values (names lower-cased) */
    headers?: Record<string, any>;
    /** true runs the app's middleware too (default: only the route handler, as in Hull) */
    middleware?: boolean;
  }
  /** The response to a test request */
  interface TestResult {
    /** the status code (404 for no route, 500 for a handler error) */
    status: number;
    /** the body, when not empty */
    body?: string;
    /** the decoded body, when it is a JSON object or array */
    json?: any;
    /** response headers by lower-case name (duplicates joined with ", ") */
    headers: Record<string, any>;
  }
  /** One email and how to send it (snake_case in both languages) */
  interface EmailOptions {
    /** the sender */
    from: string;
    /** the recipient */
    to: string;
    /** the subject */
    subject: string;
    /** the body */
    body: string;
    /** addresses to copy */
    cc?: Array<string>;
    /** a Reply-To address */
    reply_to?: string;
    /** default text/plain; text/html picks the APIs' HTML field */
    content_type?: string;
    /** default "smtp" */
    provider?: "smtp" | "postmark" | "sendgrid" | "resend";
    /** the SMTP server (required for smtp) */
    smtp_host?: string;
    /** default 587 */
    smtp_port?: number;
    /** AUTH user */
    smtp_user?: string;
    /** AUTH password */
    smtp_pass?: string;
    /** true (default): STARTTLS; false: plain; 2: TLS from the start */
    smtp_tls?: boolean | number;
    /** the API provider's key (required for an API) */
    api_key?: string;
    /** send the API request elsewhere (a proxy, a test server) */
    api_url?: string;
  }
  /** The outcome of a send; every failure is reported here */
  interface EmailResult {
    /** whether the message was accepted */
    ok: boolean;
    /** why not: "to required", "postmark: <response body>", … */
    error?: string;
  }
  /** The SQL words that differ by database */
  interface DialectWords {
    /** INTEGER / BIGINT */
    int: string;
    /** INTEGER PRIMARY KEY AUTOINCREMENT / BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY */
    id: string;
    /** empty / FOR UPDATE SKIP LOCKED */
    lock: string;
  }
  /** A message to deliver */
  interface OutboxItem {
    /** "webhook" or "http" (posted by flush); other kinds fail */
    kind: string;
    /** the URL to post to */
    destination: string;
    /** the body; a table/object is JSON-encoded */
    payload: string | Record<string, any>;
    /** request headers, or their JSON */
    headers?: Record<string, any> | string;
    /** sent as Idempotency-Key (JS also idempotencyKey) */
    idempotency_key?: string;
    /** tries before the item fails (JS also maxAttempts) */
    max_attempts?: number;
    /** seconds before the first attempt */
    delay?: number;
  }
  /** What a flush did */
  interface OutboxFlush {
    /** items delivered */
    delivered: number;
    /** items that used their last attempt */
    failed: number;
    /** items to try again later */
    retried: number;
  }
  /** Items by state */
  interface OutboxStats {
    /** not delivered yet */
    pending: number;
    /** delivered */
    delivered: number;
    /** given up */
    failed: number;
  }
  /** The state of a key's window */
  interface RateLimitCheck {
    /** whether the request is within the limit */
    allowed: boolean;
    /** requests left in the window */
    remaining: number;
    /** epoch seconds when the window ends */
    reset: number;
  }
}

/** What Cove's capabilities throw when they fail: `code` names the failure (`db.reserved`, `kv.unavailable`, …; docs/api.md). */
declare class CoveError extends Error {
  constructor(message: string, code: string);
  code: string;
}

declare module "hull:app" {
  /** Routes, middleware and the manifest; registered while the app file loads */
  export const app: {
    /** register a handler for GET (and HEAD) requests whose path matches the pattern */
    get(pattern: string, handler: Hull.Handler): void;
    /** register a handler for POST requests whose path matches the pattern */
    post(pattern: string, handler: Hull.Handler): void;
    /** register a handler for PUT requests whose path matches the pattern */
    put(pattern: string, handler: Hull.Handler): void;
    /** register a handler for PATCH requests whose path matches the pattern */
    patch(pattern: string, handler: Hull.Handler): void;
    /** register a handler for DELETE requests whose path matches the pattern */
    delete(pattern: string, handler: Hull.Handler): void;
    /** Hull's name for app.delete */
    del(pattern: string, handler: Hull.Handler): void;
    /** register a handler for OPTIONS requests whose path matches the pattern */
    options(pattern: string, handler: Hull.Handler): void;
    /** register a pre-body middleware (runs before the body is read) for a method ("*": any) and an exact path or a "/prefix/*" */
    use(method: string, pattern: string, middleware: Hull.Middleware): void;
    /** register a post-body middleware (runs after the body is read, just before the handler) */
    usePost(method: string, pattern: string, middleware: Hull.Middleware): void;
    /** declare what the app may reach (env variables, outbound hosts, CSP); once, while the app loads */
    manifest(manifest: Hull.Manifest): void;
    /** the value given to app.manifest, or nil/undefined when there was none */
    getManifest(): Hull.Manifest | null;
    /** accepted for Hull apps; does nothing observable */
    config(value: any): void;
    /** accepted for Hull apps; does nothing (files under static/ are served at /static/* anyway) */
    static(prefix: string, dir: string): void;
    /** register a WebSocket endpoint: GET requests to the pattern upgrade once the middleware has run, and each event of a connection calls one of the handlers on the worker that holds it */
    ws(pattern: string, handlers: Hull.WebSocketHandlers): void;
    /** send data (a string, bytes, or anything else as JSON) to every subscriber of topic on every worker and, with --kv redis://, every process; sent once this request's writes commit, not at all if its handler fails */
    publish(topic: string, data: any): void;
  };
}

declare module "hull:db" {
  /** The app's SQL database (SQLite or PostgreSQL); db.dialect is the string "sqlite" or "postgres" */
  export const db: {
    /** run one statement with ? placeholders and return its rows (none: an empty list) */
    query(sql: string, params?: Array<any>): Array<Hull.Row>;
    /** db.query as a promise: the worker serves other requests while PostgreSQL answers */
    queryAsync(sql: string, params?: Array<any>): Promise<Array<Hull.Row>>;
    /** run a statement that changes data and return how many rows it changed (without params: several statements) */
    exec(sql: string, params?: Array<any>): number;
    /** db.exec as a promise: the worker serves other requests while PostgreSQL answers */
    execAsync(sql: string, params?: Array<any>): Promise<number>;
    /** the id of the row the last INSERT on this worker's connection created */
    lastId(): number;
    /** run fn in a transaction: commit if it returns, roll back and re-raise if it raises; returns what fn returns (JS: fn must be synchronous) */
    batch(fn: (...args: any[]) => any): any;
  };
}

declare module "hull:json" {
  /** JSON encoding and decoding */
  export const json: {
    /** the value as JSON text (Lua: keys sorted, an empty table is []; JS: JSON.stringify, undefined gives "null") */
    encode(value: any): string;
    /** the value of JSON text (Lua: null becomes nil; JS: JSON.parse) */
    decode(text: string): any;
  };
}

declare module "hull:time" {
  /** The current time, in UTC */
  export const time: {
    /** Unix time in seconds */
    now(): number;
    /** Unix time in milliseconds */
    nowMs(): number;
    /** milliseconds on a monotonic clock started with the process (for durations, not dates) */
    clock(): number;
    /** today's date in UTC: "2026-11-27" */
    date(): string;
    /** now in UTC: "2026-11-27T08:55:53Z" */
    datetime(): string;
  };
}

declare module "hull:env" {
  /** The environment variables the manifest lists */
  export const env: {
    /** an environment variable the manifest lists in env, or nil/null when not listed or not set */
    get(name: string): string | null;
  };
}

declare module "hull:log" {
  /** Log lines to stderr, tagged [app] (JS: console.log/info/debug/warn/error write the same) */
  export const log: {
    /** log each value as its own debug line (shown with -l debug) */
    debug(...args: Array<any>): void;
    /** log each value as its own info line */
    info(...args: Array<any>): void;
    /** log each value as its own warning line */
    warn(...args: Array<any>): void;
    /** log each value as its own error line */
    error(...args: Array<any>): void;
  };
}

declare module "hull:crypto" {
  /** Hashes, HMAC, passwords, Ed25519 signatures, NaCl secretbox/box, base64url and random bytes */
  export const crypto: {
    /** SHA-256 of the data, as 64 hex chars */
    sha256(data: string | ArrayBuffer | Uint8Array): string;
    /** SHA-512 of the data, as 128 hex chars */
    sha512(data: string | ArrayBuffer | Uint8Array): string;
    /** n random bytes (1-65536) */
    random(n: number): ArrayBuffer | Uint8Array;
    /** a PBKDF2-HMAC-SHA256 hash to store: "pbkdf2:100000:<salt>:<hash>" */
    hashPassword(password: string | ArrayBuffer | Uint8Array): string;
    /** a PBKDF2-HMAC-SHA256 hash to store: "pbkdf2:100000:<salt>:<hash>" */
    hashPasswordAsync(password: string | ArrayBuffer | Uint8Array): Promise<string>;
    /** whether the password matches a stored hash (constant time) */
    verifyPassword(password: string | ArrayBuffer | Uint8Array, stored: string | ArrayBuffer | Uint8Array): boolean;
    /** whether the password matches a stored hash (constant time) */
    verifyPasswordAsync(password: string | ArrayBuffer | Uint8Array, stored: string | ArrayBuffer | Uint8Array): Promise<boolean>;
    /** a new Ed25519 key pair, hex (Lua: two results) */
    ed25519Keypair(): Hull.KeyPair;
    /** the Ed25519 signature of the data, 128 hex chars */
    ed25519Sign(data: string | ArrayBuffer | Uint8Array, secret_key: string | ArrayBuffer | Uint8Array): string;
    /** whether the signature is the key's signature of the data */
    ed25519Verify(data: string | ArrayBuffer | Uint8Array, signature: string | ArrayBuffer | Uint8Array, public_key: string | ArrayBuffer | Uint8Array): boolean;
    /** NaCl crypto_auth (HMAC-SHA512/256) tag, 64 hex chars; key 32 bytes hex */
    auth(message: string | ArrayBuffer | Uint8Array, key: string | ArrayBuffer | Uint8Array): string;
    /** whether the tag authenticates the message */
    authVerify(tag: string | ArrayBuffer | Uint8Array, message: string | ArrayBuffer | Uint8Array, key: string | ArrayBuffer | Uint8Array): boolean;
    /** XSalsa20-Poly1305 sealed message (hex); nonce 24 bytes, key 32, both hex */
    secretbox(message: string | ArrayBuffer | Uint8Array, nonce: string | ArrayBuffer | Uint8Array, key: string | ArrayBuffer | Uint8Array): string;
    /** the opened message, or nil/null if it does not authenticate */
    secretboxOpen(sealed: string | ArrayBuffer | Uint8Array, nonce: string | ArrayBuffer | Uint8Array, key: string | ArrayBuffer | Uint8Array): string | null;
    /** NaCl box (Curve25519-XSalsa20-Poly1305) sealed message, hex */
    box(message: string | ArrayBuffer | Uint8Array, nonce: string | ArrayBuffer | Uint8Array, public_key: string | ArrayBuffer | Uint8Array, secret_key: string | ArrayBuffer | Uint8Array): string;
    /** the opened box, or nil/null if it does not authenticate */
    boxOpen(sealed: string | ArrayBuffer | Uint8Array, nonce: string | ArrayBuffer | Uint8Array, public_key: string | ArrayBuffer | Uint8Array, secret_key: string | ArrayBuffer | Uint8Array): string | null;
    /** a new Curve25519 key pair for box, hex (Lua: two results) */
    boxKeypair(): Hull.KeyPair;
    /** HMAC-SHA256 of the data with a hex key, 64 hex chars */
    hmacSha256(data: string | ArrayBuffer | Uint8Array, key: string | ArrayBuffer | Uint8Array): string;
    /** whether the HMAC matches (constant time) */
    hmacSha256Verify(data: string | ArrayBuffer | Uint8Array, key: string | ArrayBuffer | Uint8Array, expected: string | ArrayBuffer | Uint8Array): boolean;
    /** URL-safe base64 without padding */
    base64urlEncode(data: string | ArrayBuffer | Uint8Array): string;
    /** the decoded bytes (JS: as UTF-8 text), or nil/null if invalid */
    base64urlDecode(text: string | ArrayBuffer | Uint8Array): string | null;
    /** JWT HS256 signature: base64url HMAC-SHA256 keyed with the secret's bytes */
    hs256Sign(data: string | ArrayBuffer | Uint8Array, secret: string | ArrayBuffer | Uint8Array): string;
    /** whether a JWT HS256 signature matches (constant time) */
    hs256Verify(data: string | ArrayBuffer | Uint8Array, secret: string | ArrayBuffer | Uint8Array, signature: string | ArrayBuffer | Uint8Array): boolean;
  };
}

declare module "hull:template" {
  /** Server-side templates from the app's templates/ directory (syntax: docs/templates.md) */
  export const template: {
    /** render templates/<name> with data (parsed on first use, cached per worker) */
    render(name: string, data?: Record<string, any>): string;
    /** compile the source (not cached) and render it with data */
    renderString(source: string, data?: Record<string, any>): string;
    /** parse and cache templates/<name> now; a function that renders it with data */
    compile(name: string): (...args: any[]) => any;
    /** forget this worker's compiled templates */
    clearCache(): void;
  };
}

declare module "hull:kv" {
  /** A key-value store shared by every worker (and every process with --kv redis://) */
  export const kv: {
    /** the value stored under the key, or nil/null */
    get(key: string): string | number | boolean | null;
    /** the value stored under the key, or nil/null */
    getAsync(key: string): Promise<string | number | boolean | null>;
    /** store a value (string, number, boolean), with an optional ttl in seconds */
    set(key: string, value: string | number | boolean, ttl?: number): void;
    /** store a value (string, number, boolean), with an optional ttl in seconds */
    setAsync(key: string, value: string | number | boolean, ttl?: number): Promise<void>;
    /** store a value only if the key is absent; whether it was stored */
    add(key: string, value: string | number | boolean, ttl?: number): boolean;
    /** store a value only if the key is absent; whether it was stored */
    addAsync(key: string, value: string | number | boolean, ttl?: number): Promise<boolean>;
    /** add step (default 1) to an integer value (absent: 0) and return it */
    incr(key: string, step?: number, ttl?: number): number;
    /** add step (default 1) to an integer value (absent: 0) and return it */
    incrAsync(key: string, step?: number, ttl?: number): Promise<number>;
    /** remove the key; whether it was there */
    delete(key: string): boolean;
    /** remove the key; whether it was there */
    deleteAsync(key: string): Promise<boolean>;
    /** seconds the key has left, or nil/null when absent or without expiry */
    ttl(key: string): number | null;
    /** seconds the key has left, or nil/null when absent or without expiry */
    ttlAsync(key: string): Promise<number | null>;
  };
}

declare module "hull:http" {
  /** Outbound HTTP to the hosts the manifest lists */
  export const http: {
    /** send a request with any method to a host in the manifest */
    request(method: string, url: string, options?: Hull.HttpOptions): Hull.HttpResponse;
    /** send a request with any method to a host in the manifest */
    requestAsync(method: string, url: string, options?: Hull.HttpOptions): Promise<Hull.HttpResponse>;
    /** send a GET request (no body) */
    get(url: string, options?: Hull.HttpOptions): Hull.HttpResponse;
    /** send a GET request (no body) */
    getAsync(url: string, options?: Hull.HttpOptions): Promise<Hull.HttpResponse>;
    /** send a POST request with a body */
    post(url: string, body?: string, options?: Hull.HttpOptions): Hull.HttpResponse;
    /** send a POST request with a body */
    postAsync(url: string, body?: string, options?: Hull.HttpOptions): Promise<Hull.HttpResponse>;
    /** send a PUT request with a body */
    put(url: string, body?: string, options?: Hull.HttpOptions): Hull.HttpResponse;
    /** send a PUT request with a body */
    putAsync(url: string, body?: string, options?: Hull.HttpOptions): Promise<Hull.HttpResponse>;
    /** send a PATCH request with a body */
    patch(url: string, body?: string, options?: Hull.HttpOptions): Hull.HttpResponse;
    /** send a PATCH request with a body */
    patchAsync(url: string, body?: string, options?: Hull.HttpOptions): Promise<Hull.HttpResponse>;
    /** send a DELETE request (no body) */
    delete(url: string, options?: Hull.HttpOptions): Hull.HttpResponse;
    /** send a DELETE request (no body) */
    deleteAsync(url: string, options?: Hull.HttpOptions): Promise<Hull.HttpResponse>;
    /** send a DELETE request (no body) */
    del(url: string, options?: Hull.HttpOptions): Hull.HttpResponse;
    /** send a DELETE request (no body) */
    delAsync(url: string, options?: Hull.HttpOptions): Promise<Hull.HttpResponse>;
  };
}

declare module "hull:smtp" {
  /** Outbound email over SMTP to the hosts the manifest lists (not configured in cove test) */
  export const smtp: {
    /** send one message through an SMTP server the manifest's hosts list; raises only when smtp is not configured */
    send(options: Hull.SmtpOptions): Hull.SmtpResult;
    /** smtp.send as a promise: the worker serves other requests while the message goes out */
    sendAsync(options: Hull.SmtpOptions): Promise<Hull.SmtpResult>;
  };
}

declare module "hull:metrics" {
  /** The app's own Prometheus metrics, served with Cove's on --metrics (app_<name>; no-ops without it) */
  export const metrics: {
    /** a counter named app_<name>_total (made once per name; later calls return the same series) */
    counter(name: string, help?: string): Hull.Counter;
    /** a gauge named app_<name>: a value that goes up and down */
    gauge(name: string, help?: string): Hull.Gauge;
    /** a histogram named app_<name>, in the server's buckets (0.0005 to 10: seconds suit it) */
    histogram(name: string, help?: string): Hull.Histogram;
  };
}

declare module "hull:cookie" {
  /** Parse Cookie headers and build Set-Cookie values */
  export const cookie: {
    /** the cookies of a Cookie header as name → value (of a repeated name the first; JS strips quotes and decodes %XX); anything but a string gives an empty table */
    parse(header: string | null): Record<string, any>;
    /** a Set-Cookie value, by default with Path=/, HttpOnly, Secure, SameSite=Lax (options: Lua path httponly secure samesite max_age domain expires; JS path httpOnly secure sameSite maxAge domain expires; false drops one) */
    serialize(name: string, value: string, options?: Record<string, any>): string;
    /** a Set-Cookie value that deletes the cookie (Max-Age=0); pass the path and domain it was set with */
    clear(name: string, options?: Record<string, any>): string;
  };
}

declare module "hull:form" {
  /** Parse application/x-www-form-urlencoded bodies */
  export const form: {
    /** a form-encoded body as name → value (+ is a space, %XX decoded; of a repeated name the last); anything but a string gives an empty table */
    parse(body: string | null): Record<string, any>;
  };
}

declare module "hull:validate" {
  /** Check input against per-field rules (required, type, min, max, pattern, oneof, email, fn) */
  export const validate: {
    /** whether the data passes the schema, and a message per failing field: Lua true, nil or false, errors; JS [true, null] or [false, errors] */
    check(data: any, schema?: Record<string, any>): Array<any>;
  };
}

declare module "hull:jwt" {
  /** HS256 JSON Web Tokens */
  export const jwt: {
    /** an HS256 token for the payload, iat added unless set (Lua: an exp below 2e9 is relative to now; a missing payload or secret gives nil and the reason, JS throws) */
    sign(payload: Record<string, any>, secret: string): string;
    /** the payload if the token is HS256 signed with the secret and within exp/nbf; else Lua nil and the reason, JS an array [null, reason] */
    verify(token: string, secret: string): Record<string, any> | Array<any>;
    /** the payload without checking anything (for display, never for trust), or nil/null if malformed */
    decode(token: string): Record<string, any> | null;
  };
}

declare module "hull:i18n" {
  /** Translations and number, date and currency formats; the active locale belongs to the worker */
  export const i18n: {
    /** register a locale's table (e.g. a locales/*.json file) */
    load(name: string, locale: Record<string, any>): void;
    /** set the active locale when given; the active one (initially nil/null) */
    locale(name?: string): string | null;
    /** the translation of a dotted key in the active (or the given) locale, ${name} filled from params; the key when there is none */
    t(key: string, params?: Record<string, any>, locale?: string): string;
    /** the number with the locale's separators (fractions to 10 significant digits) */
    number(n: number): string;
    /** a Unix time (default now) in UTC, in the locale's date pattern */
    date(ts?: number): string;
    /** the amount in the locale's format for the currency code */
    currency(amount: number, code: string): string;
    /** the best loaded locale for an Accept-Language value or a request, or nil/null */
    detect(source: string | Hull.Request): string | null;
    /** forget every locale and the active one */
    reset(): void;
  };
}

declare module "hull:email" {
  /** Send email through SMTP or an HTTP email API with one set of options */
  const email: {
    /** send one email through SMTP or Postmark, SendGrid or Resend; never raises */
    send(options: Hull.EmailOptions): Hull.EmailResult;
    /** email.send as a promise: the worker serves other requests while the mail goes out */
    sendAsync(options: Hull.EmailOptions): Promise<Hull.EmailResult>;
  };
  export default email;
}

declare module "hull:dialect" {
  /** The SQL words that differ between SQLite and PostgreSQL */
  export const dialect: {
    /** this database's words for {int}, {id} and {lock} */
    words(): Hull.DialectWords;
  };
}

declare module "hull:middleware:auth" {
  /** Session-cookie and JWT authentication (names, cookies and ctx keys differ by language, as in Hull) */
  export const auth: {
    /** a middleware requiring a session cookie (Lua hull_session, JS hull.sid): sets req.ctx.session and the id (Lua session_id, JS sessionId); else 401, unless optional or a login path is set */
    sessionMiddleware(options?: Record<string, any>): Hull.Middleware;
    /** a middleware requiring Authorization: Bearer <jwt> signed with options.secret (Lua sets req.ctx.user; JS req.ctx.claims and req.ctx.token); else 401, unless optional */
    jwtMiddleware(options: Record<string, any>): Hull.Middleware;
    /** end the session the request carried, start one holding data and send its cookie; the session id */
    login(req: Hull.Request, res: Hull.Response, data: Record<string, any>, options?: Record<string, any>): string;
    /** end the request's session and send a cookie that clears it */
    logout(req: Hull.Request, res: Hull.Response, options?: Record<string, any>): void;
  };
}

declare module "hull:middleware:cors" {
  /** CORS headers and preflight answers */
  export const cors: {
    /** a pre-body middleware adding CORS headers for allowed origins and answering their preflights with 204 (options: origins, methods, headers, credentials, max_age) */
    middleware(options?: Record<string, any>): Hull.Middleware;
    /** whether the origin is in the list or the list holds "*" */
    isAllowedOrigin(origin: string, origins: Array<string>): boolean;
  };
}

declare module "hull:middleware:csrf" {
  /** CSRF tokens tied to the request's session */
  export const csrf: {
    /** a CSRF token for the session */
    generate(session_id: string, secret: string): string;
    /** whether the token was made for the session with the secret at most max_age (3600) seconds ago */
    verify(token: string, session_id: string, secret: string, max_age?: number): boolean;
    /** a post-body middleware: safe methods get req.ctx.csrf_token, other methods of a request with a session need a valid token in X-CSRF-Token or the _csrf field (else 403) */
    middleware(options: Record<string, any>): Hull.Middleware;
  };
}

declare module "hull:middleware:idempotency" {
  /** Replay the response of a request retried with the same Idempotency-Key */
  export const idempotency: {
    /** create the keys table if needed; options.ttl: seconds a key and its response are kept (default 86400) */
    init(options?: Record<string, any>): void;
    /** a post-body middleware that replays the stored response to a retry with the same Idempotency-Key (409 for another body or one still running) */
    middleware(options?: Record<string, any>): Hull.Middleware;
    /** send data as JSON with the status (and extra headers), stored for retries of the request's key */
    respond(req: Hull.Request, res: Hull.Response, status: number, data: any, headers?: Record<string, any>): void;
    /** mark the request's key done without storing a response */
    complete(req: Hull.Request): void;
    /** delete expired keys; how many */
    cleanup(): number;
  };
}

declare module "hull:middleware:inbox" {
  /** Remember processed message ids so a redelivered message is handled once */
  export const inbox: {
    /** create the table if needed; options.ttl: seconds an id is remembered (default 604800) */
    init(options?: Record<string, any>): void;
    /** whether message id from source (default "default") was processed and has not expired */
    isDuplicate(id: string, source?: string): boolean;
    /** record message id from source as processed (options.ttl overrides the ttl) */
    markProcessed(id: string, source?: string, options?: Record<string, any>): void;
    /** true if the id was already processed; else record it and return false (atomic) */
    checkAndMark(id: string, source?: string, options?: Record<string, any>): boolean;
    /** delete expired ids; how many */
    cleanup(): number;
  };
}

declare module "hull:middleware:logger" {
  /** One log line per request, with a request id unique across workers */
  export const logger: {
    /** a middleware logging one line per request and setting req.ctx.request_id and X-Request-ID (options: skip, include_headers) */
    middleware(options?: Record<string, any>): Hull.Middleware;
    /** the next request id (lowercase hex), unique across the server's workers */
    generateId(): string;
    /** a list of {key, value} pairs as one logfmt line */
    formatLine(entries: Array<Array<any>>): string;
    /** whether the path is one of the exact paths in the list */
    shouldSkip(path: string, list?: Array<string>): boolean;
  };
}

declare module "hull:middleware:outbox" {
  /** The transactional outbox: HTTP messages enqueued with the change they announce, delivered and retried afterwards */
  export const outbox: {
    /** create the table if needed; options.max_attempts (JS maxAttempts): tries before an item fails (default 5) */
    init(options?: Record<string, any>): void;
    /** add a message to deliver (in the caller's transaction, if any); its id */
    enqueue(item: Hull.OutboxItem): number;
    /** deliver the due items (at most options.limit, default 50), retrying failures with backoff */
    flush(options?: Record<string, any>): Hull.OutboxFlush;
    /** outbox.flush as a promise: the worker serves other requests while it posts */
    flushAsync(options?: Record<string, any>): Promise<Hull.OutboxFlush>;
    /** a middleware marking the request for flush_if_needed */
    middleware(): Hull.Middleware;
    /** outbox.flush(options) if the outbox middleware ran for the request, else nil/null */
    flushIfNeeded(req: Hull.Request, options?: Record<string, any>): Hull.OutboxFlush | null;
    /** how many items are pending, delivered and failed */
    stats(): Hull.OutboxStats;
    /** items, newest first (filter: destination, state, kind, limit = 50) */
    list(filter?: Record<string, any>): Array<Record<string, any>>;
    /** delete delivered items older than max_age seconds (default 7 days); how many */
    cleanup(max_age?: number): number;
  };
}

declare module "hull:middleware:ratelimit" {
  /** Fixed-window rate limiting, counted in the kv store shared by every worker */
  export const ratelimit: {
    /** a middleware answering 429 over the limit, with X-RateLimit-* headers (options: limit 60, window 60 s, key, max_keys, name) */
    middleware(options?: Record<string, any>): Hull.Middleware;
    /** Hull's helper on an object the caller keeps: counts one request for the key */
    check(buckets: Record<string, any>, key: string, limit: number, window: number, now: number): Hull.RateLimitCheck;
  };
}

declare module "hull:middleware:session" {
  /** Server-side sessions stored in the database */
  export const session: {
    /** create the sessions table if needed; options.ttl: seconds a session lives after its last use (default 86400) */
    init(options?: Record<string, any>): void;
    /** store data in a new session; its id (64 hex chars) */
    create(data: Record<string, any>): string;
    /** the session's data, or nil/null if missing or expired; slides its expiry */
    load(id: string): Record<string, any> | null;
    /** replace a live session's data and slide its expiry; whether there was one */
    update(id: string, data: Record<string, any>): boolean;
    /** delete the session; whether it existed */
    destroy(id: string): boolean;
    /** delete expired sessions; how many */
    cleanup(): number;
  };
}

declare module "hull:middleware:transaction" {
  /** db.batch under Hull's names */
  export const transaction: {
    /** a middleware that sets req.ctx._txn = true and nothing else (it does not wrap the handler) */
    middleware(): Hull.Middleware;
    /** db.batch(fn): commit, or roll back and re-raise; what fn returns */
    run(fn: (...args: any[]) => any): any;
    /** db.batch(fn) without raising: Lua true, or false and the error; JS [true, null] or [false, error] */
    attempt(fn: (...args: any[]) => any): Array<any>;
  };
}

/** The global of cove test files: test(name, fn) registers a case (run in file order; an async JS fn is awaited), and its functions dispatch requests and assert */
declare const test: {
  /** register a test: fn runs against a fresh in-memory database; an error fails it */
  (name: string, fn: (...args: any[]) => any): void;
  /** dispatch a GET request in-process (the path may carry a ?query) and return the result */
  get(path: string, options?: Hull.TestOptions): Hull.TestResult;
  /** dispatch a POST request in-process and return the result */
  post(path: string, options?: Hull.TestOptions): Hull.TestResult;
  /** dispatch a PUT request in-process and return the result */
  put(path: string, options?: Hull.TestOptions): Hull.TestResult;
  /** dispatch a PATCH request in-process and return the result */
  patch(path: string, options?: Hull.TestOptions): Hull.TestResult;
  /** dispatch a DELETE request in-process and return the result */
  delete(path: string, options?: Hull.TestOptions): Hull.TestResult;
  /** fail unless the two are equal (numbers by value, tables/objects and arrays deeply) */
  eq(actual: any, expected: any, msg?: string): void;
  /** fail unless the value is truthy */
  ok(value: any, msg?: string): void;
  /** call fn and fail unless it raises (with a message containing substring, if given) */
  err(fn: (...args: any[]) => any, substring?: string): void;
};
