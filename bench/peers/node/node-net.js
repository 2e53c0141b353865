'use strict';
// Raw node:net with a hand-rolled HTTP/1.1 server: request line, headers,
// Content-Length bodies, keep-alive (HTTP/1.1 default, HTTP/1.0 on request),
// pipelining (every complete request in a read is answered, in order, with
// one write). Chunked request bodies are refused with 501.

const net = require('node:net');
const { port, run } = require('./workers.js');
const { greetName } = require('./paths.js');

const PORT = port(8002);
const MAX_HEAD = 64 * 1024;
const MAX_BODY = 16 * 1024 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');
const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
const REASONS = { 200: 'OK', 400: 'Bad Request', 404: 'Not Found', 413: 'Content Too Large',
  431: 'Request Header Fields Too Large', 501: 'Not Implemented' };

// The Date header, refreshed once a second.
let date = new Date().toUTCString();
setInterval(() => { date = new Date().toUTCString(); }, 1000).unref();

// `conn`: '' (HTTP/1.1 keep-alive), CLOSE, or KEEP_ALIVE (an HTTP/1.0 client that asked for it).
const CLOSE = 'Connection: close\r\n';
const KEEP_ALIVE = 'Connection: keep-alive\r\n';

function response(status, type, body, conn) {
  return `HTTP/1.1 ${status} ${REASONS[status]}\r\nDate: ${date}\r\nContent-Type: ${type}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n${conn}\r\n${body}`;
}

const text = (body, conn) => response(200, 'text/plain', body, conn);
const json = (value, conn) => response(200, 'application/json', JSON.stringify(value), conn);

// One parsed request -> the response text.
function route(method, target, body, conn) {
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  if (method === 'GET') {
    if (path === '/hey') return text('hey', conn);
    if (path === '/hell') return text('hell', conn);
    if (path === '/hello') return text('Hello World!', conn);
    if (path === '/about') return text('about', conn);
    if (path === '/json') return json({ message: 'Hello, World!' }, conn);
    if (path === '/health') return json({ status: 'ok', runtime: 'node', uptime: process.uptime() }, conn);
    const name = greetName(path);
    if (name !== null) return json({ greeting: `Hello, ${name}!` }, conn);
  } else if (method === 'POST') {
    if (path === '/echo') return json({ body }, conn);
    const name = greetName(path);
    if (name !== null) return json({ greeting: `Hello, ${name}!`, body }, conn);
  }
  return response(404, 'text/plain', 'Not Found', conn);
}

// Per connection: unparsed bytes, and the head of a request whose body has
// not fully arrived yet.
function onConnection(sock) {
  let buf = null;
  let pending = null; // the parsed head: { method, target, conn, length, bodyStart, ... }
  let closed = false;

  const fail = (status, out) => {
    closed = true;
    sock.end(out + response(status, 'text/plain', REASONS[status], CLOSE));
  };

  sock.on('data', (chunk) => {
    if (closed) return;
    buf = buf === null ? chunk : Buffer.concat([buf, chunk]);
    let out = '';
    let pos = 0;
    for (;;) {
      if (pending === null) {
        const end = buf.indexOf(HEAD_END, pos);
        if (end === -1) {
          if (buf.length - pos > MAX_HEAD) return fail(431, out);
          break;
        }
        const head = buf.toString('latin1', pos, end);
        const req = parseHead(head);
        if (req === null) return fail(400, out);
        if (req.chunked) return fail(501, out);
        if (req.length > MAX_BODY) return fail(413, out);
        req.bodyStart = end + 4;
        pending = req;
        if (req.expectContinue && buf.length < req.bodyStart + req.length) out += CONTINUE;
      }
      const bodyEnd = pending.bodyStart + pending.length;
      if (buf.length < bodyEnd) break;
      const body = pending.length === 0 ? '' : buf.toString('utf8', pending.bodyStart, bodyEnd);
      out += route(pending.method, pending.target, body, pending.conn);
      pos = bodyEnd;
      const close = pending.conn === CLOSE;
      pending = null;
      if (close) {
        closed = true;
        sock.end(out);
        return;
      }
    }
    // Keep only the unparsed tail (and the offsets into it).
    if (pos > 0) {
      if (pending !== null) pending.bodyStart -= pos;
      buf = pos === buf.length ? null : buf.subarray(pos);
    }
    if (out !== '') sock.write(out);
  });
  sock.on('error', () => {});
}

// "METHOD target HTTP/1.x\r\nName: value\r\n..." -> request, or null when malformed.
function parseHead(head) {
  let eol = head.indexOf('\r\n');
  if (eol === -1) eol = head.length;
  const sp1 = head.indexOf(' ');
  const sp2 = head.indexOf(' ', sp1 + 1);
  if (sp1 <= 0 || sp2 === -1 || sp2 > eol) return null;
  const method = head.slice(0, sp1);
  const target = head.slice(sp1 + 1, sp2);
  const version = head.slice(sp2 + 1, eol);
  if (target === '' || (version !== 'HTTP/1.1' && version !== 'HTTP/1.0')) return null;
  const req = {
    method, target, conn: version === 'HTTP/1.0' ? CLOSE : '', length: 0, bodyStart: 0,
    chunked: false, expectContinue: false,
  };
  let start = eol + 2;
  while (start < head.length) {
    let end = head.indexOf('\r\n', start);
    if (end === -1) end = head.length;
    const colon = head.indexOf(':', start);
    if (colon === -1 || colon > end) return null;
    const nameLen = colon - start;
    // Only the headers that change how the request is read are looked at.
    if (nameLen === 14 || nameLen === 10 || nameLen === 17 || nameLen === 6) {
      const name = head.slice(start, colon).toLowerCase();
      const value = head.slice(colon + 1, end).trim();
      if (name === 'content-length') {
        if (!/^\d+$/.test(value)) return null;
        req.length = parseInt(value, 10);
      } else if (name === 'connection') {
        const v = value.toLowerCase();
        if (v.includes('close')) req.conn = CLOSE;
        else if (v.includes('keep-alive') && version === 'HTTP/1.0') req.conn = KEEP_ALIVE;
      } else if (name === 'transfer-encoding') {
        req.chunked = true;
      } else if (name === 'expect') {
        req.expectContinue = value.toLowerCase() === '100-continue';
      }
    }
    start = end + 2;
  }
  return req;
}

function start() {
  const server = net.createServer({ noDelay: true }, onConnection);
  server.listen(PORT, '127.0.0.1', () => {
    console.log(`node-net listening on 127.0.0.1:${PORT} (pid ${process.pid})`);
  });
}

run('node-net', start);
