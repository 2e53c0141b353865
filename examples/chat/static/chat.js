// The chat page's script (served from static/, which the app's
// Content-Security-Policy allows): the online counter on every page, and on
// a room's page the room itself over a WebSocket.
"use strict";

// A page the browser keeps in its back/forward cache after it is left stays
// connected (until the server's pings go unanswered): a person who went to
// another page would still be in the room. So connections close when the
// page is hidden and open again if it is shown from the cache.
function whileShown(open) {
  let close = open();
  addEventListener("pagehide", () => {
    close();
    close = () => {};
  });
  addEventListener("pageshow", (e) => {
    if (e.persisted) close = open();
  });
}

// The "N online" counter: an event stream that sends the count at once and
// again whenever it changes (EventSource reconnects by itself).
const counter = document.getElementById("online");
if (counter) {
  whileShown(() => {
    const events = new EventSource("/events/online");
    events.addEventListener("online", (e) => {
      counter.textContent = String(JSON.parse(e.data).online);
    });
    return () => events.close();
  });
}

const chat = document.getElementById("chat");
if (chat) room(chat);

function room(chat) {
  const me = chat.dataset.user;
  const list = document.getElementById("messages");
  const status = document.getElementById("status");
  const problem = document.getElementById("problem");
  const form = document.getElementById("send");
  const input = document.getElementById("text");
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const url = `${scheme}//${location.host}/ws/rooms/${encodeURIComponent(chat.dataset.room)}`;
  let socket = null;
  let retry = 1000;

  const clock = (at) => new Date(at * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });

  // One line of the room; text goes in as text, never as HTML.
  function add(kind, parts, at) {
    const item = document.createElement("li");
    item.className = kind;
    const time = document.createElement("time");
    time.dateTime = new Date(at * 1000).toISOString();
    time.textContent = clock(at);
    item.append(time);
    for (const [cls, text] of parts) {
      const span = document.createElement("span");
      span.className = cls;
      span.textContent = text;
      item.append(span);
    }
    list.append(item);
    list.scrollTop = list.scrollHeight;
  }

  function said(m) {
    add(m.user === me ? "message mine" : "message", [["who", m.user], ["text", m.text]], m.at);
  }

  function show(m) {
    if (m.type === "history") {
      list.replaceChildren();
      m.messages.forEach(said);
    } else if (m.type === "message") {
      said(m);
    } else if (m.type === "join" || m.type === "leave") {
      add("notice", [["text", `${m.user} ${m.type === "join" ? "joined" : "left"}`]], m.at);
    } else if (m.type === "error") {
      problem.textContent = m.error;
      problem.hidden = false;
    }
  }

  // Open the room's socket; the function that closes it for good.
  function connect() {
    let timer = null;
    const open = () => {
      const ws = new WebSocket(url);
      socket = ws;
      ws.addEventListener("open", () => {
        status.textContent = "Connected";
        chat.classList.add("live");
        retry = 1000;
      });
      ws.addEventListener("message", (e) => show(JSON.parse(e.data)));
      ws.addEventListener("close", () => {
        if (socket !== ws) return; // closed for good, below
        socket = null;
        chat.classList.remove("live");
        // A refused upgrade (signed out elsewhere) or a restart: try
        // again, less and less often.
        status.textContent = "Disconnected; trying again…";
        timer = setTimeout(open, retry);
        retry = Math.min(retry * 2, 30000);
      });
    };
    open();
    return () => {
      clearTimeout(timer);
      if (socket) socket.close(1000, "left the page");
      socket = null;
      chat.classList.remove("live");
      status.textContent = "Connecting…";
    };
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!socket || socket.readyState !== WebSocket.OPEN) return;
    problem.hidden = true;
    socket.send(input.value);
    input.value = "";
    input.focus();
  });

  whileShown(connect);
}
