package gql_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/corehq/core/gql"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// wsClient speaks GraphQL over WebSocket (either subprotocol) with the
// coder/websocket client.
type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
	ctx  context.Context
}

// dial opens a WebSocket to /graphql with a subprotocol and headers.
func (c *client) dial(proto string, headers http.Header) *wsClient {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	c.t.Cleanup(cancel)
	conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(c.env.URL, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{proto}, HTTPHeader: headers})
	if err != nil {
		c.t.Fatalf("dial: %v (%v)", err, resp)
	}
	if conn.Subprotocol() != proto {
		c.t.Fatalf("subprotocol %q, want %q", conn.Subprotocol(), proto)
	}
	c.t.Cleanup(func() { conn.CloseNow() })
	return &wsClient{t: c.t.(*testing.T), conn: conn, ctx: ctx}
}

func (w *wsClient) send(m map[string]any) {
	w.t.Helper()
	b, _ := json.Marshal(m)
	if err := w.conn.Write(w.ctx, websocket.MessageText, b); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

// read returns the next message.
func (w *wsClient) read() map[string]any {
	w.t.Helper()
	_, b, err := w.conn.Read(w.ctx)
	if err != nil {
		w.t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		w.t.Fatalf("message %s: %v", b, err)
	}
	return m
}

// expect reads the next message, which must be of type typ (and id,
// unless empty), and returns it.
func (w *wsClient) expect(typ, id string) map[string]any {
	w.t.Helper()
	m := w.read()
	if m["type"] != typ || (id != "" && m["id"] != id) {
		w.t.Fatalf("message %s, want type %s id %q", dump(m), typ, id)
	}
	return m
}

// closed reads until the server closes, and returns the close code and
// reason.
func (w *wsClient) closed() (websocket.StatusCode, string) {
	w.t.Helper()
	for {
		_, _, err := w.conn.Read(w.ctx)
		if err == nil {
			continue
		}
		var ce websocket.CloseError
		if !asCloseError(err, &ce) {
			w.t.Fatalf("read ended without a close: %v", err)
		}
		return ce.Code, ce.Reason
	}
}

// init sends connection_init with the client's domain and token and
// waits for the ack.
func (w *wsClient) init(c *client) {
	w.t.Helper()
	w.send(map[string]any{"type": "connection_init", "payload": map[string]any{tenant.Header: c.domain, "authorization": c.token}})
	w.expect("connection_ack", "")
}

// event reads a next (data) message of a subscription and returns its
// change.
func (w *wsClient) event(typ, id string) change {
	w.t.Helper()
	m := w.expect(typ, id)
	payload, _ := m["payload"].(map[string]any)
	ch, _ := changeOf(w.t, payload)
	return ch
}

// cursorNow returns a cursor after which every later change of the
// instance is replayed: a WebSocket subscription that starts after it
// misses nothing, however late the server starts it.
func (c *client) cursorNow() string {
	c.t.Helper()
	s := c.sse(`subscription { subscribe(type: URL) { op id cursor } }`, nil, nil)
	c.upsertOne("URL", map[string]any{"path": "/probe"})
	_, cursor := s.change()
	s.close()
	return cursor
}

func TestSubscribeWebSocket(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	w := c.dial("graphql-transport-ws", nil)
	w.init(c)
	w.send(map[string]any{"type": "ping", "payload": map[string]any{"n": 1}})
	if m := w.expect("pong", ""); path(m, "payload", "n") != float64(1) {
		t.Errorf("pong %s, want the ping's payload", dump(m))
	}

	after := c.cursorNow()
	w.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": authorChanges, "variables": map[string]any{"after": after}}})
	c.upsertOne("Book", map[string]any{"core": map[string]any{"id": "b1"}, "title": "Dune"})
	id := c.upsertOne("Author", map[string]any{"name": "ann", "bestbook": map[string]any{"core": map[string]any{"id": "b1"}}})
	node := map[string]any{"name": "ann", "age": nil, "bestbook": map[string]any{"title": "Dune"}}
	wantChange(t, "created", w.event("next", "1"), change{Op: "CREATED", ID: id, Changed: []string{"bestbook", "name"}, Node: node})

	c.rest(http.MethodPut, "/rest/v1/", map[string]any{"values": map[string]any{"Author": map[string]any{"core": map[string]any{"id": id}, "age": 40}}})
	node["age"] = float64(40)
	wantChange(t, "updated", w.event("next", "1"), change{Op: "UPDATED", ID: id, Changed: []string{"age"}, Node: node})
	byID := map[string]any{"q": `core.id = "` + id + `"`}
	c.data(`mutation($q: String!) { trash(type: Author, arcql: $q) }`, byID)
	wantChange(t, "trashed", w.event("next", "1"), change{Op: "TRASHED", ID: id, Changed: []string{}, Node: node})
	c.data(`mutation($q: String!) { untrash(type: Author, arcql: $q) }`, byID)
	wantChange(t, "untrashed", w.event("next", "1"), change{Op: "UNTRASHED", ID: id, Changed: []string{}, Node: node})
	c.data(`mutation($q: String!) { delete(type: Author, arcql: $q) }`, byID)
	wantChange(t, "deleted", w.event("next", "1"), change{Op: "DELETED", ID: id, Changed: []string{}})

	// A query runs once and completes; an id in use closes with 4409.
	w.send(map[string]any{"id": "q", "type": "subscribe", "payload": map[string]any{"query": `{ __typename }`}})
	if m := w.expect("next", "q"); path(m, "payload", "data", "__typename") != "Query" {
		t.Errorf("query over the WebSocket: %s", dump(m))
	}
	w.expect("complete", "q")
	// complete stops a subscription; its id may then be used again.
	w.send(map[string]any{"id": "1", "type": "complete"})
	w.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": bookChanges}})
	w.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": bookChanges}})
	if code, reason := w.closed(); code != 4409 || reason != "Subscriber for 1 already exists" {
		t.Errorf("closed with %d %q, want 4409", code, reason)
	}
}

func TestWebSocketProtocolErrors(t *testing.T) {
	t.Parallel()
	cfg := gql.DefaultConfig()
	cfg.MaxSubscriptions = 2
	c := newBookstore(t, servertest.WithGQLConfig(cfg))
	token := c.token
	initWith := func(p map[string]any) map[string]any { return map[string]any{"type": "connection_init", "payload": p} }
	sub := func(id, query string) map[string]any {
		return map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": query}}
	}
	cases := []struct {
		name   string
		send   []map[string]any
		code   websocket.StatusCode
		reason string
	}{
		{"subscribe before init", []map[string]any{sub("1", bookChanges)}, 4401, "Unauthorized"},
		{"init twice", []map[string]any{initWith(map[string]any{tenant.Header: c.domain, "authorization": token}), initWith(nil)}, 4429, "Too many initialisation requests"},
		{"refused token", []map[string]any{initWith(map[string]any{tenant.Header: c.domain, "authorization": "nope"})}, 4403, "Forbidden: "},
		{"unknown domain", []map[string]any{initWith(map[string]any{tenant.Header: "nowhere.test", "authorization": token})}, 4403, "Forbidden: "},
		{"no domain", []map[string]any{initWith(nil)}, 4403, "Forbidden: core-domain is required"},
		{"not a message", []map[string]any{{"id": "1"}}, 4400, "Invalid message received"},
		{"no init in time", nil, 4408, "Connection initialisation timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cc := *c
			cc.t = t
			w := cc.dial("graphql-transport-ws", nil)
			for _, m := range tc.send {
				w.send(m)
			}
			code, reason := w.closed()
			if code != tc.code || !strings.HasPrefix(reason, tc.reason) {
				t.Errorf("closed with %d %q, want %d %q…", code, reason, tc.code, tc.reason)
			}
		})
	}

	// The upgrade request's headers stand in for the payload; errors of
	// an operation end it alone; a connection runs at most two here.
	w := c.dial("graphql-transport-ws", http.Header{tenant.Header: {c.domain}, "Authorization": {token}})
	w.send(initWith(nil))
	w.expect("connection_ack", "")
	w.send(sub("bad", `subscription { subscribe(type: Nope) { id } }`))
	if m := w.expect("error", "bad"); path(m, "payload", 0, "extensions", "code") != "BAD_REQUEST" {
		t.Errorf("an invalid subscription: %s", dump(m))
	}
	w.send(sub("1", bookChanges))
	w.send(sub("2", bookChanges))
	w.send(sub("3", bookChanges))
	if m := w.expect("error", "3"); path(m, "payload", 0, "extensions", "code") != "SUBSCRIPTION_LIMIT" {
		t.Errorf("a third subscription: %s", dump(m))
	}
	c.books("b1")
	got := map[any]bool{}
	for range 2 {
		m := w.expect("next", "")
		got[m["id"]] = true
	}
	if !got["1"] || !got["2"] {
		t.Errorf("events went to %v, want 1 and 2", got)
	}
}

func TestSubscribeLegacyWebSocket(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	w := c.dial("graphql-ws", nil)
	w.send(map[string]any{"type": "connection_init", "payload": map[string]any{tenant.Header: c.domain, "authorization": c.token}})
	w.expect("connection_ack", "")
	w.expect("ka", "")
	after := c.cursorNow()
	w.send(map[string]any{"id": "1", "type": "start", "payload": map[string]any{"query": authorChanges, "variables": map[string]any{"after": after}}})
	id := c.upsertOne("Author", map[string]any{"name": "ann"})
	wantChange(t, "created", w.event("data", "1"), change{Op: "CREATED", ID: id, Changed: []string{"name"}, Node: map[string]any{"name": "ann", "age": nil, "bestbook": nil}})
	w.send(map[string]any{"id": "1", "type": "stop"})
	w.expect("complete", "1")
	w.send(map[string]any{"id": "2", "type": "start", "payload": map[string]any{"query": `subscription { subscribe(type: Nope) { id } }`}})
	if m := w.expect("error", "2"); path(m, "payload", "extensions", "code") != "BAD_REQUEST" {
		t.Errorf("an invalid subscription: %s", dump(m))
	}
	w.send(map[string]any{"type": "connection_terminate"})
	if code, _ := w.closed(); code != websocket.StatusNormalClosure {
		t.Errorf("closed with %d after connection_terminate, want 1000", code)
	}
}

func asCloseError(err error, ce *websocket.CloseError) bool { return errors.As(err, ce) }

// Each operation a WebSocket starts counts against the instance's rate
// limit, as a request would: the connection does not bypass it.
func TestWebSocketOperationsAreRateLimited(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("bookstore", "v1", bookstoreSDL(t))
	token := env.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{RateLimit: &tenant.RateLimit{RequestsPerSecond: 0.001, Burst: 2}})
	c := &client{t: t, env: env, domain: "books.test", token: token}
	w := c.dial("graphql-transport-ws", nil)
	w.init(c) // the first request
	w.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": `{ __typename }`}})
	w.expect("next", "1")
	w.expect("complete", "1")
	w.send(map[string]any{"id": "2", "type": "subscribe", "payload": map[string]any{"query": bookChanges}})
	if m := w.expect("error", "2"); path(m, "payload", 0, "extensions", "code") != "RATE_LIMITED" {
		t.Errorf("an operation past the rate limit: %s", dump(m))
	}
}

// An instance's setting subscriptionConnections bounds its open event
// streams and WebSockets together.
func TestSubscriptionConnectionsPerInstance(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("bookstore", "v1", bookstoreSDL(t))
	token := env.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{SubscriptionConnections: 1})
	c := &client{t: t, env: env, domain: "books.test", token: token}
	c.sse(bookChanges, nil, nil)
	resp, cancel := c.sseRequest(bookChanges, nil, nil)
	defer cancel()
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a second event stream: status %d, want 429", resp.StatusCode)
	}
	w := c.dial("graphql-transport-ws", nil)
	w.send(map[string]any{"type": "connection_init", "payload": map[string]any{tenant.Header: c.domain, "authorization": c.token}})
	if code, reason := w.closed(); code != websocket.StatusTryAgainLater || !strings.Contains(reason, "subscriptionConnections") {
		t.Errorf("a WebSocket past the bound closed with %d %q, want 1013 naming the setting", code, reason)
	}
	// Other instances are not affected.
	other := &client{t: t, env: env, domain: "other.test", token: env.CreateInstance("other.test", "bookstore", "v1", tenant.Settings{SubscriptionConnections: 1})}
	other.sse(bookChanges, nil, nil)
	// The admin API refuses a bad setting, naming it.
	if st, body := env.Admin(http.MethodPatch, "/instances/other.test", map[string]any{"subscriptionConnections": -1}); st != http.StatusBadRequest ||
		!strings.Contains(dump(body), "subscriptionConnections must be between 0") {
		t.Errorf("a negative subscriptionConnections: %d %s", st, dump(body))
	}
}

// hostile checklist 47: one account cannot take all of an instance's
// subscription connections. Each account (its sessions together) and each
// anonymous client address holds at most its share
// (subscriptionConnectionsPerAccount, by default a tenth of
// subscriptionConnections), so another account still finds room; the
// instance token has no share but the instance's bound.
func TestSubscriptionConnectionsPerAccount(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("bookstore", "v1", bookstoreSDL(t))
	token := env.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{SubscriptionConnections: 20, AnonymousRequests: true})
	admin := &client{t: t, env: env, domain: "books.test", token: token}
	ada, bob, _, _ := admin.adaAndBob()
	refused := func(c *client, who string) {
		t.Helper()
		resp, cancel := c.sseRequest(bookChanges, nil, nil)
		defer cancel()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "SUBSCRIPTION_LIMIT") ||
			!strings.Contains(string(body), who+" 2 subscription connections open, ") || !strings.Contains(string(body), "subscriptionConnectionsPerAccount") {
			t.Errorf("an event stream past the share: %d %s, want 429 SUBSCRIPTION_LIMIT naming the share", resp.StatusCode, body)
		}
	}

	// The default share of 20: 2. Ada's third stream is refused, from
	// another session of hers too, and so is a WebSocket.
	ada.sse(bookChanges, nil, nil)
	ada.sse(bookChanges, nil, nil)
	refused(ada, "this account has")
	refused(admin.login("ada", "correct horse battery"), "this account has")
	w := ada.dial("graphql-transport-ws", nil)
	w.send(map[string]any{"type": "connection_init", "payload": map[string]any{tenant.Header: ada.domain, "authorization": ada.token}})
	if code, reason := w.closed(); code != websocket.StatusTryAgainLater || !strings.Contains(reason, "subscriptionConnectionsPerAccount") {
		t.Errorf("ada's WebSocket past her share closed with %d %q, want 1013 naming the setting", code, reason)
	}
	// Bob has room; so has the instance token, beyond any one share.
	bob.sse(bookChanges, nil, nil)
	wb := bob.dial("graphql-transport-ws", nil)
	wb.init(bob)
	for range 4 {
		admin.sse(bookChanges, nil, nil)
	}
	// Anonymous callers: per client address.
	anon := &client{t: t, env: env, domain: "books.test"}
	anon.sse(bookChanges, nil, nil)
	anon.sse(bookChanges, nil, nil)
	refused(anon, "anonymous callers from this address have")

	// The setting: shown back, checked, and counted at once.
	if st, body := env.Admin(http.MethodPatch, "/instances/books.test", map[string]any{"subscriptionConnectionsPerAccount": 3}); st != http.StatusOK ||
		body["subscriptionConnectionsPerAccount"] != float64(3) {
		t.Fatalf("setting subscriptionConnectionsPerAccount: %d %s", st, dump(body))
	}
	if st, body := env.Admin(http.MethodGet, "/instances/books.test", nil); st != http.StatusOK || body["subscriptionConnectionsPerAccount"] != float64(3) {
		t.Errorf("the instance's settings: %d %s, want subscriptionConnectionsPerAccount 3", st, dump(body))
	}
	ada.sse(bookChanges, nil, nil)
	for _, bad := range []any{-1, 21, "two"} {
		if st, body := env.Admin(http.MethodPatch, "/instances/books.test", map[string]any{"subscriptionConnectionsPerAccount": bad}); st != http.StatusBadRequest ||
			!strings.Contains(dump(body), "subscriptionConnectionsPerAccount") {
			t.Errorf("subscriptionConnectionsPerAccount %v: %d %s, want 400 naming it", bad, st, dump(body))
		}
	}
}
