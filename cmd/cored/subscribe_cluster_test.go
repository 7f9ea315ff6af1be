package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestSubscriptionsAcrossProcesses: two cored processes on one MongoDB
// (the MongoDB-wire test server); a subscriber connected to b, over SSE
// and over a graphql-transport-ws WebSocket, receives in order the events
// of writes made through a, by GraphQL and by REST. The delivery time is
// logged, not asserted (the feed's poller runs every 50 ms).
func TestSubscriptionsAcrossProcesses(t *testing.T) {
	t.Parallel()
	a, b, inst := startPair(t)
	instToken := inst["authorization"]

	guard, stop := context.WithTimeout(context.Background(), 60*time.Second) // a hang guard only
	defer stop()
	const sub = `subscription { subscribe(type: Book) { op id node { ... on Book { title } } } }`
	resp := openEventStream(guard, t, b, inst, sub)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("SSE subscribe on b: %d", resp.StatusCode)
	}
	sse := bufio.NewReader(resp.Body)
	// nextSSE returns the next event's id and its change.
	nextSSE := func() (string, map[string]any) {
		var id string
		for {
			line, err := sse.ReadString('\n')
			if err != nil {
				t.Fatalf("b's event stream: %v", err)
			}
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				id = strings.TrimSpace(v)
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				var ev map[string]any
				if err := json.Unmarshal([]byte(data), &ev); err != nil {
					t.Fatal(err)
				}
				ch, _ := ev["data"].(map[string]any)["subscribe"].(map[string]any)
				if ch == nil {
					t.Fatalf("b's event: %s", data)
				}
				return id, ch
			}
		}
	}

	conn, _, err := websocket.Dial(guard, "ws://"+b.addr+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	send := func(m map[string]any) {
		msg, _ := json.Marshal(m)
		if err := conn.Write(guard, websocket.MessageText, msg); err != nil {
			t.Fatal(err)
		}
	}
	read := func() map[string]any {
		_, msg, err := conn.Read(guard)
		if err != nil {
			t.Fatalf("b's WebSocket: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(msg, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	send(map[string]any{"type": "connection_init", "payload": map[string]any{"core-domain": "shop.test", "authorization": instToken}})
	if m := read(); m["type"] != "connection_ack" {
		t.Fatalf("connection_init: %v", m)
	}
	// The WebSocket resumes after the cursor of a first write, seen on
	// the stream, so that it misses nothing however late b starts it.
	start := time.Now()
	a.call(t, "POST", "/graphql", inst, map[string]any{"query": `mutation { upsert(values: {Book: {core: {id: "b0"}, title: "zero"}}) { id } }`})
	cursor, first := nextSSE()
	t.Logf("a write through a reached the SSE subscriber on b after %v", time.Since(start))
	if first["op"] != "CREATED" || first["id"] != "b0" || cursor == "" {
		t.Fatalf("b's first event: %v (id %q)", first, cursor)
	}
	send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": `subscription($after: String) {
		subscribe(type: Book, after: $after) { op id node { ... on Book { title } } } }`, "variables": map[string]any{"after": cursor}}})

	if st, body := a.call(t, "POST", "/graphql", inst, map[string]any{"query": `mutation { upsert(values: {Book: {core: {id: "b1"}, title: "one"}}) { id } }`}); st != 200 {
		t.Fatalf("GraphQL write on a: %d %v", st, body)
	}
	if st, body := a.call(t, "PUT", "/rest/v1/", inst, map[string]any{"values": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "b1"}, "title": "two"}}}); st != 200 {
		t.Fatalf("REST write on a: %d %v", st, body)
	}
	if st, body := a.call(t, "DELETE", "/rest/v1/Book/b0", inst, nil); st != 200 {
		t.Fatalf("REST delete on a: %d %v", st, body)
	}
	want := []string{"CREATED b1", "UPDATED b1", "DELETED b0"}
	var gotSSE, gotWS []string
	for range want {
		_, ch := nextSSE()
		gotSSE = append(gotSSE, ch["op"].(string)+" "+ch["id"].(string))
		m := read()
		ch, _ = m["payload"].(map[string]any)["data"].(map[string]any)["subscribe"].(map[string]any)
		if m["type"] != "next" || m["id"] != "1" || ch == nil {
			t.Fatalf("b's WebSocket: %v", m)
		}
		gotWS = append(gotWS, ch["op"].(string)+" "+ch["id"].(string))
	}
	if strings.Join(gotSSE, ",") != strings.Join(want, ",") || strings.Join(gotWS, ",") != strings.Join(want, ",") {
		t.Errorf("events on b: SSE %v, WebSocket %v, want %v", gotSSE, gotWS, want)
	}
}

// TestSubscriptionConnectionsAcrossProcesses: processes on one MongoDB
// divide an instance's subscriptionConnections as they divide rate
// limits. With a setting of 2 and two processes, once each counts the
// other, a holds one event stream and refuses a second, naming its part;
// b still takes one of its own.
func TestSubscriptionConnectionsAcrossProcesses(t *testing.T) {
	t.Parallel()
	a, b, inst := startPair(t)
	admin := map[string]string{"authorization": a.tokens()[0]}
	if st, body := a.call(t, "PATCH", "/admin/v1/instances/shop.test", admin, map[string]any{"subscriptionConnections": 2}); st != 200 {
		t.Fatalf("setting: %d %v", st, body)
	}
	guard, stop := context.WithTimeout(context.Background(), 60*time.Second) // a hang guard only
	defer stop()
	open := func(p *coredProcess) *http.Response {
		return openEventStream(guard, t, p, inst, `subscription { subscribe(type: Book) { op } }`)
	}
	held := open(a)
	defer held.Body.Close()
	if held.StatusCode != http.StatusOK {
		t.Fatalf("a first event stream on a: %d", held.StatusCode)
	}
	// Until a counts b (its heartbeats), a allows the whole setting: a
	// second stream opens and is closed again; then a refuses it.
	for {
		second := open(a)
		var body []byte
		if second.StatusCode != http.StatusOK {
			body, _ = io.ReadAll(io.LimitReader(second.Body, 4096))
		}
		second.Body.Close() // an event stream: nothing to read
		// Not divided yet: the stream opened, or the one before was not
		// yet released and the whole setting is taken.
		if second.StatusCode == http.StatusOK || (second.StatusCode == http.StatusTooManyRequests && !strings.Contains(string(body), "its part")) {
			if guard.Err() != nil {
				t.Fatal("a never divided the setting with b")
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if second.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "its part (of 2 processes) of the 2") {
			t.Fatalf("a second event stream on a: %d %s, want 429 naming a's part", second.StatusCode, body)
		}
		break
	}
	onB := open(b)
	defer onB.Body.Close()
	if onB.StatusCode != http.StatusOK {
		t.Fatalf("an event stream on b: %d", onB.StatusCode)
	}
}

// openEventStream sends a subscription to p's /graphql asking for an event
// stream, with the instance's headers; the caller closes the answer.
func openEventStream(ctx context.Context, t *testing.T, p *coredProcess, inst map[string]string, query string) *http.Response {
	t.Helper()
	headers := maps.Clone(inst)
	headers["accept"] = "text/event-stream"
	return p.send(ctx, t, http.MethodPost, "/graphql", headers, map[string]any{"query": query})
}
