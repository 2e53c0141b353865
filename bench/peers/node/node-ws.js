'use strict';
// Node.js with the `ws` package on a node:http server: the `ws` group
// (bench/peers/README.md). Upgrades of /echo and /broadcast go to a
// WebSocketServer in noServer mode (ws's way to serve several paths);
// GET /hello answers the harness's readiness check. /echo sends every
// message back with its type; /broadcast keeps a Set of its connections and
// sends each message to every one of them, the sender included. No
// permessage-deflate (ws's default for servers). ws uses bufferutil and
// utf-8-validate when installed (they are). One process.

const http = require('node:http');
const { WebSocketServer } = require('ws');
const { port } = require('./workers.js');

const PORT = port(8011);
const wss = new WebSocketServer({ noServer: true });
const room = new Set();

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/hello') {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('Hello World!');
    return;
  }
  res.writeHead(404, { 'Content-Type': 'text/plain' });
  res.end('Not Found');
});

server.on('upgrade', (req, socket, head) => {
  const path = req.url;
  if (path !== '/echo' && path !== '/broadcast') {
    socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws) => {
    if (path === '/echo') {
      ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
      return;
    }
    room.add(ws);
    ws.on('close', () => room.delete(ws));
    ws.on('message', (data, isBinary) => {
      for (const peer of room) {
        if (peer.readyState === 1) peer.send(data, { binary: isBinary });
      }
    });
  });
});

server.listen(PORT, '127.0.0.1', () => {
  console.log(`node-ws listening on 127.0.0.1:${PORT} (pid ${process.pid})`);
});
