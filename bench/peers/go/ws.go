package main

// The `ws` group (bench/peers/README.md) with github.com/gorilla/websocket:
// served instead of the HTTP routes when WS=1. /echo sends every message
// back to its sender (text stays text); /broadcast subscribes the
// connection to the one topic, and each message it sends goes to every
// subscriber, the sender included. Each connection has a writer goroutine
// fed by a buffered channel, so a publish never waits for a slow socket
// (gorilla allows one writer at a time per connection).

import (
	"fmt"
	"log"
	"net/http"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/gorilla/websocket"
)

// Messages queued for one subscriber before it is dropped (Cove's limit).
const wsQueue = 256

type wsMessage struct {
	kind int
	data []byte
}

type subscriber struct {
	conn *websocket.Conn
	send chan wsMessage
}

type room struct {
	mu   sync.Mutex
	subs map[*subscriber]struct{}
}

func (r *room) add(s *subscriber) {
	r.mu.Lock()
	r.subs[s] = struct{}{}
	r.mu.Unlock()
}

// remove closes the subscriber's queue (its writer then stops) unless it
// was already removed.
func (r *room) remove(s *subscriber) {
	r.mu.Lock()
	if _, ok := r.subs[s]; ok {
		delete(r.subs, s)
		close(s.send)
	}
	r.mu.Unlock()
}

func (r *room) publish(m wsMessage) {
	r.mu.Lock()
	for s := range r.subs {
		select {
		case s.send <- m:
		default:
			// Too far behind: drop it, as Cove does (close 1008).
			delete(r.subs, s)
			close(s.send)
			go s.conn.Close()
		}
	}
	r.mu.Unlock()
}

func wsRoutes(mux *http.ServeMux) {
	upgrader := websocket.Upgrader{
		ReadBufferSize:  4096,
		WriteBufferSize: 4096,
	}
	chat := &room{subs: make(map[*subscriber]struct{})}

	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("Hello World!"))
	})
	mux.HandleFunc("GET /echo", func(w http.ResponseWriter, r *http.Request) {
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			kind, data, err := c.ReadMessage()
			if err != nil {
				return
			}
			if err := c.WriteMessage(kind, data); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("GET /broadcast", func(w http.ResponseWriter, r *http.Request) {
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		s := &subscriber{conn: c, send: make(chan wsMessage, wsQueue)}
		chat.add(s)
		go func() {
			for m := range s.send {
				if err := c.WriteMessage(m.kind, m.data); err != nil {
					c.Close()
					break
				}
			}
			// Let a publish that queued more go on: drain until closed.
			for range s.send {
			}
		}()
		defer func() {
			chat.remove(s)
			c.Close()
		}()
		for {
			kind, data, err := c.ReadMessage()
			if err != nil {
				return
			}
			chat.publish(wsMessage{kind, data})
		}
	})
	mux.HandleFunc("/", http.NotFound)
	log.Printf("go: WebSocket routes (gorilla/websocket)")
}

func wsVersion() {
	v := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/gorilla/websocket" {
				v = d.Version
			}
		}
	}
	fmt.Printf("%s net/http, gorilla/websocket %s\n", runtime.Version(), v)
}
