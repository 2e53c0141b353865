// Cove's JavaScript implementation of the `ws` benchmark routes
// (bench/peers/README.md), the twin of app.lua: /echo sends every message
// back to its sender (a string stays text, a Uint8Array binary);
// /broadcast subscribes each connection to "room" when it opens, and
// publishes every message it receives to "room": every subscriber gets it,
// the sender included.

import { app } from "hull:app";

// The readiness check of the harness.
app.get("/hello", (req, res) => {
  res.text("Hello World!");
});

app.ws("/echo", {
  message(ws, data, isBinary) {
    ws.send(data);
  },
});

app.ws("/broadcast", {
  open(ws, req) {
    ws.subscribe("room");
  },
  message(ws, data) {
    app.publish("room", data);
  },
});
