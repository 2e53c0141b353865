-- Cove's implementation of the `ws` benchmark routes (bench/peers/README.md):
-- /echo sends every message back to its sender (text stays text, binary
-- stays binary); /broadcast subscribes each connection to "room" when it
-- opens, and publishes every message it receives to "room": every
-- subscriber gets it, the sender included. `bench/run --only ws:` starts it
-- with --workers 1.

-- The readiness check of the harness.
app.get("/hello", function(req, res)
  res:text("Hello World!")
end)

app.ws("/echo", {
  message = function(ws, data, is_binary)
    ws:send(data, is_binary)
  end,
})

app.ws("/broadcast", {
  open = function(ws, req)
    ws:subscribe("room")
  end,
  message = function(ws, data, is_binary)
    app.publish("room", data)
  end,
})
