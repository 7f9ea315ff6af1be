package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/corehq/core/server"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store/mongo/mongotest"
	"github.com/corehq/core/tenant"
)

// A shutdown ends the subscriptions instead of waiting for them: the
// event stream completes, the WebSocket closes with 1001, and Serve
// drains at once although its shutdown time-out is an hour.
func TestShutdownEndsSubscriptions(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.ShutdownTimeout = time.Hour }))
	env.PutRelease("bookstore", "v1", bookstoreSDL)
	token := env.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- env.Server.Serve(ctx, ln) }()
	guard, stop := context.WithTimeout(context.Background(), 30*time.Second) // a hang guard only
	defer stop()
	base := "http://" + ln.Addr().String() + "/graphql"
	sub := `subscription { subscribe(type: Book) { id } }`

	resp := openEventStream(t, guard, base, token, sub)

	conn, _, err := websocket.Dial(guard, "ws://"+ln.Addr().String()+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	init, _ := json.Marshal(map[string]any{"type": "connection_init", "payload": map[string]any{tenant.Header: "books.test", "authorization": token}})
	if err := conn.Write(guard, websocket.MessageText, init); err != nil {
		t.Fatal(err)
	}
	if _, ack, err := conn.Read(guard); err != nil || !strings.Contains(string(ack), "connection_ack") {
		t.Fatalf("connection_init: %s %v", ack, err)
	}

	cancel() // what SIGTERM does in cored
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the event stream ended without complete: %v", err)
		}
		if line == "event: complete\n" {
			break
		}
	}
	_, _, err = conn.Read(guard)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway {
		t.Errorf("the WebSocket ended with %v, want close 1001", err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v, want a complete drain", err)
		}
	case <-guard.Done():
		t.Fatal("Serve still drains: the subscriptions held it")
	}
}

// twoProcesses starts two servers on one MongoDB database, each with its
// own store handle (and change-feed poller), as two cored processes; the
// writer publishes the bookstore and makes instance books.test (its token
// returned), which the reader serves at once.
func twoProcesses(t *testing.T) (writer, reader *servertest.Env, token string) {
	t.Helper()
	stores := mongotest.Shared(t, 2)
	writer = servertest.Start(t, servertest.WithStore(stores[0]))
	reader = servertest.Start(t, servertest.WithStore(stores[1]))
	writer.PutRelease("bookstore", "v1", bookstoreSDL)
	token = writer.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{})
	if _, err := reader.Directory.Refresh(context.Background()); err != nil { // what its watch does every interval
		t.Fatal(err)
	}
	return writer, reader, token
}

// Two servers on one MongoDB database, each with its own store handle
// (and change-feed poller), as two cored processes: a subscriber on one
// receives, in order, the events of writes made through the other, by
// GraphQL and by REST.
func TestSubscriptionsAcrossServers(t *testing.T) {
	t.Parallel()
	writer, reader, token := twoProcesses(t)
	guard, stop := context.WithTimeout(context.Background(), 30*time.Second) // a hang guard only
	defer stop()
	resp := openEventStream(t, guard, reader.URL+"/graphql", token, `subscription { subscribe(type: Book) { op node { ... on Book { title } } } }`)
	h := map[string]string{tenant.Header: "books.test", "authorization": token}
	if status, out := writer.GraphQL("books.test", token, `mutation { upsert(values: {Book: {core: {id: "b1"}, title: "one"}}) { id } }`, nil); status != http.StatusOK {
		t.Fatalf("write: %d %v", status, out)
	}
	if status, out := writer.Do(http.MethodPut, "/rest/v1/", h, map[string]any{"values": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "b1"}, "title": "two"}}}); status != http.StatusOK {
		t.Fatalf("write: %d %v", status, out)
	}
	r := bufio.NewReader(resp.Body)
	var got []string
	for len(got) < 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the reader's stream after %v: %v", got, err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var ev map[string]any
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatal(err)
			}
			s, _ := ev["data"].(map[string]any)["subscribe"].(map[string]any)
			got = append(got, s["op"].(string))
		}
	}
	if got[0] != "CREATED" || got[1] != "UPDATED" {
		t.Errorf("events on the reader: %v, want CREATED then UPDATED", got)
	}
}

// An event stream outlives the request time-out that bounds queries: it
// delivers a write made after the time-out has passed.
func TestEventStreamOutlivesRequestTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 3 * time.Second
	env := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.RequestTimeout = timeout }))
	env.PutRelease("bookstore", "v1", bookstoreSDL)
	token := env.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{})
	guard, stop := context.WithTimeout(context.Background(), 30*time.Second) // a hang guard only
	defer stop()
	resp := openEventStream(t, guard, env.URL+"/graphql", token, `subscription { subscribe(type: Book) { op } }`)
	time.Sleep(timeout + 500*time.Millisecond) // past the request time-out: nothing to wait for
	if status, out := env.GraphQL("books.test", token, `mutation { upsert(values: {Book: {title: "late"}}) { id } }`, nil); status != http.StatusOK {
		t.Fatalf("write: %d %v", status, out)
	}
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended: %v", err)
		}
		if strings.HasPrefix(line, "data: ") {
			if !strings.Contains(line, `"op":"CREATED"`) {
				t.Fatalf("event %s, want the CREATED", line)
			}
			return
		}
	}
}

// openEventStream posts a subscription to the /graphql at url as an
// event stream of books.test with token; the answer must be 200 (the
// body is closed when the test ends).
func openEventStream(t *testing.T, guard context.Context, url, token, query string) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequestWithContext(guard, http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("content-type", "application/json")
	req.Header.Set("accept", "text/event-stream")
	req.Header.Set(tenant.Header, "books.test")
	req.Header.Set("authorization", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("subscribing over an event stream: status %d", resp.StatusCode)
	}
	return resp
}

// A grant written through one server reaches the subscriptions open on
// another at their next event, as the grant reaches that server's finds:
// the change feed that carries the record's change carries the grant's
// first, and the subscriber's server reads its grants again on seeing it,
// instead of serving the snapshot it read a moment before (a find then
// would answer better on its next request; a subscription event decided on
// the stale snapshot would be lost for good). Each round: bob finds on the
// reader (its grants are read then), ada grants on the writer, then writes
// the record, then bob receives it; ada revokes, writes the record again
// (not delivered) and bob's own book is the next event. Two servers on one
// MongoDB database, each with its own store handle, as two cored processes.
func TestGrantElsewhereReachesOpenSubscriptions(t *testing.T) {
	t.Parallel()
	writer, reader, token := twoProcesses(t)
	must := func(env *servertest.Env, who, query string, vars map[string]any) map[string]any {
		t.Helper()
		status, out := env.GraphQL("books.test", who, query, vars)
		if status != http.StatusOK || out["errors"] != nil {
			t.Fatalf("%s: %d %v", query, status, out)
		}
		return out["data"].(map[string]any)
	}
	account := func(name string) (id, session string) {
		d := must(writer, token, `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`,
			map[string]any{"v": map[string]any{"username": name, "password": map[string]any{"value": "correct horse battery"}}})
		id = d["createAccount"].(map[string]any)["id"].(string)
		d = must(writer, "", `query($u: String!) { login(username: $u, password: "correct horse battery") { sessionToken } }`, map[string]any{"u": name})
		return id, d["login"].(map[string]any)["sessionToken"].(string)
	}
	_, ada := account("ada")
	bobID, bob := account("bob")
	upsert := func(who, typ string, v map[string]any) string {
		d := must(writer, who, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`, map[string]any{"v": map[string]any{typ: v}})
		return d["upsert"].([]any)[0].(map[string]any)["id"].(string)
	}
	a1 := upsert(ada, "Book", map[string]any{"title": "a1"})

	guard, stop := context.WithTimeout(context.Background(), 60*time.Second) // a hang guard only
	defer stop()
	resp := openEventStream(t, guard, reader.URL+"/graphql", bob, `subscription { subscribe(type: Book) { op id node { ... on Book { title } } } }`)
	r := bufio.NewReader(resp.Body)
	next := func() (op, id, title string) {
		t.Helper()
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("bob's stream: %v", err)
			}
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Data struct {
					Subscribe struct {
						Op, ID string
						Node   struct{ Title string }
					}
				}
			}
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatal(err)
			}
			s := ev.Data.Subscribe
			return s.Op, s.ID, s.Node.Title
		}
	}
	for round := range 4 {
		// The reader's grants are read now: a snapshot that would serve
		// on for a second.
		must(reader, bob, `{ find(type: Book, arcql: "*") { edges { cursor } } }`, nil)
		grant := upsert(ada, "AccessRight", map[string]any{"resource": a1, "resourceType": "Book", "operationType": "Query", "operation": "get",
			"permissionType": "RBP", "members": []any{map[string]any{"core": map[string]any{"id": bobID}}}})
		title := fmt.Sprintf("a1 round %d", round)
		upsert(ada, "Book", map[string]any{"core": map[string]any{"id": a1}, "title": title})
		if op, id, got := next(); op != "UPDATED" || id != a1 || got != title {
			t.Fatalf("round %d, after the grant: %s %s %q, want UPDATED %s %q", round, op, id, got, a1, title)
		}
		must(writer, ada, `mutation($q: String!) { delete(type: AccessRight, arcql: $q) }`, map[string]any{"q": `core.id = "` + grant + `"`})
		upsert(ada, "Book", map[string]any{"core": map[string]any{"id": a1}, "title": title + " private"})
		own := upsert(bob, "Book", map[string]any{"title": fmt.Sprintf("b%d", round)})
		if op, id, _ := next(); op != "CREATED" || id != own {
			t.Fatalf("round %d, after the revocation: %s %s, want bob's own CREATED %s", round, op, id, own)
		}
	}
}
