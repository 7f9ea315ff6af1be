package gql_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/corehq/core/gql"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// Subscriptions through the real server: Go clients speaking GraphQL over
// SSE (graphql-sse, distinct connections) and graphql-transport-ws.

// hangGuard bounds how long a test waits for an event: only a guard
// against a hang, never a measure.
const hangGuard = 30 * time.Second

// change is an event as the tests compare it.
type change struct {
	Op      string
	ID      string
	Changed []string
	Node    map[string]any
}

// changeOf reads the subscribe member of an event's data.
func changeOf(t *testing.T, data map[string]any) (change, string) {
	t.Helper()
	if data["errors"] != nil {
		t.Fatalf("event with errors: %s", dump(data))
	}
	s, _ := path(data, "data", "subscribe").(map[string]any)
	if s == nil {
		t.Fatalf("event without subscribe: %s", dump(data))
	}
	c := change{Op: s["op"].(string), ID: s["id"].(string), Changed: []string{}}
	changed, _ := s["changed"].([]any)
	for _, f := range changed {
		c.Changed = append(c.Changed, f.(string))
	}
	c.Node, _ = s["node"].(map[string]any)
	cursor, _ := s["cursor"].(string)
	return c, cursor
}

// sseStream is one subscription over GraphQL over SSE.
type sseStream struct {
	t      *testing.T
	resp   *http.Response
	r      *bufio.Reader
	cancel context.CancelFunc
}

// sseEvent is one event of a stream.
type sseEvent struct {
	id, event string
	data      map[string]any
}

// sseRequest sends a subscription with Accept: text/event-stream and
// returns the response (the caller closes it and calls cancel).
func (c *client) sseRequest(query string, vars map[string]any, headers map[string]string) (*http.Response, context.CancelFunc) {
	c.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.env.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("content-type", "application/json")
	req.Header.Set("accept", "text/event-stream")
	req.Header.Set(tenant.Header, c.domain)
	if c.token != "" {
		req.Header.Set("authorization", c.token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		c.t.Fatalf("subscribe: %v", err)
	}
	return resp, cancel
}

// sse opens a subscription that must start: once it returns, every
// later change reaches it.
func (c *client) sse(query string, vars map[string]any, headers map[string]string) *sseStream {
	c.t.Helper()
	resp, cancel := c.sseRequest(query, vars, headers)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("content-type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		c.t.Fatalf("subscribe: status %d, content-type %q: %s", resp.StatusCode, resp.Header.Get("content-type"), b)
	}
	s := &sseStream{t: c.t.(*testing.T), resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
	c.t.Cleanup(s.close)
	return s
}

func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next reads the next event, skipping keep-alive comments.
func (s *sseStream) next() sseEvent {
	s.t.Helper()
	var ev sseEvent
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			s.t.Fatalf("reading the event stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if ev.event != "" {
				return ev
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			ev.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data:"):
			if d := strings.TrimSpace(strings.TrimPrefix(line, "data:")); d != "" {
				if err := json.Unmarshal([]byte(d), &ev.data); err != nil {
					s.t.Fatalf("event data %q: %v", d, err)
				}
			}
		default:
			s.t.Fatalf("unexpected line in the event stream: %q", line)
		}
	}
}

// change reads the next event, which must be a next event, and returns
// its change and cursor; the SSE id must be the cursor.
func (s *sseStream) change() (change, string) {
	s.t.Helper()
	ev := s.next()
	if ev.event != "next" {
		s.t.Fatalf("event %q, want next: %s", ev.event, dump(ev.data))
	}
	c, cursor := changeOf(s.t, ev.data)
	if ev.id == "" || (cursor != "" && ev.id != cursor) {
		s.t.Fatalf("event id %q, cursor %q: want an id, the cursor where selected", ev.id, cursor)
	}
	return c, ev.id
}

const (
	authorChanges = `subscription($q: String, $id: String, $after: String) { subscribe(type: Author, arcql: $q, id: $id, after: $after) {
		op id changed cursor node { ... on Author { name age bestbook { title } } } } }`
)

// upsertOne upserts one record of typ and returns its id.
func (c *client) upsertOne(typ string, v map[string]any) string {
	c.t.Helper()
	return path(c.data(grantDoc, map[string]any{"v": map[string]any{typ: v}}), "upsert", 0, "id").(string)
}

// rest sends a REST request that must succeed.
func (c *client) rest(method, p string, body any) map[string]any {
	c.t.Helper()
	status, out := c.env.Do(method, p, map[string]string{tenant.Header: c.domain, "authorization": c.token}, body)
	if status != http.StatusOK {
		c.t.Fatalf("%s %s: status %d: %s", method, p, status, dump(out))
	}
	return out
}

func wantChange(t *testing.T, step string, got, want change) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%s (-want +got):\n%s", step, diff)
	}
}

func TestSubscribeSSE(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	all := c.sse(authorChanges, nil, nil)
	annOnly := c.sse(authorChanges, map[string]any{"q": `name = "ann"`}, nil)
	books := c.sse(`subscription { subscribe(type: Book) { op id changed node { ... on Book { title } } } }`, nil, nil)

	bookID := c.upsertOne("Book", map[string]any{"core": map[string]any{"id": "b1"}, "title": "Dune"})
	got, _ := books.change()
	wantChange(t, "book created", got, change{Op: "CREATED", ID: bookID, Changed: []string{"title"}, Node: map[string]any{"title": "Dune"}})

	// Another author first: the filter leaves it out of annOnly.
	bob := c.upsertOne("Author", map[string]any{"name": "bob"})
	got, _ = all.change()
	wantChange(t, "bob created", got, change{Op: "CREATED", ID: bob, Changed: []string{"name"}, Node: map[string]any{"name": "bob", "age": nil, "bestbook": nil}})

	id := c.upsertOne("Author", map[string]any{"name": "ann", "bestbook": map[string]any{"core": map[string]any{"id": "b1"}}})
	created := change{Op: "CREATED", ID: id, Changed: []string{"bestbook", "name"}, Node: map[string]any{"name": "ann", "age": nil, "bestbook": map[string]any{"title": "Dune"}}}
	got, _ = all.change()
	wantChange(t, "ann created", got, created)
	got, _ = annOnly.change()
	wantChange(t, "ann created, filtered", got, created)
	one := c.sse(authorChanges, map[string]any{"id": id}, nil)

	// An update through REST.
	c.rest(http.MethodPut, "/rest/v1/", map[string]any{"values": map[string]any{"Author": map[string]any{"core": map[string]any{"id": id}, "age": 40}}})
	updated := change{Op: "UPDATED", ID: id, Changed: []string{"age"}, Node: map[string]any{"name": "ann", "age": float64(40), "bestbook": map[string]any{"title": "Dune"}}}
	_, cursorUpdated := all.change()
	for name, s := range map[string]*sseStream{"filtered": annOnly, "one record": one} {
		got, _ = s.change()
		wantChange(t, "updated, "+name, got, updated)
	}

	// bob changes: only the unfiltered subscription sees it.
	c.upsertOne("Author", map[string]any{"core": map[string]any{"id": bob}, "age": 50})
	got, _ = all.change()
	wantChange(t, "bob updated", got, change{Op: "UPDATED", ID: bob, Changed: []string{"age"}, Node: map[string]any{"name": "bob", "age": float64(50), "bestbook": nil}})

	byID := `core.id = "` + id + `"`
	c.data(`mutation($q: String!) { trash(type: Author, arcql: $q) }`, map[string]any{"q": byID})
	trashed := change{Op: "TRASHED", ID: id, Changed: []string{}, Node: map[string]any{"name": "ann", "age": float64(40), "bestbook": map[string]any{"title": "Dune"}}}
	c.data(`mutation($q: String!) { untrash(type: Author, arcql: $q) }`, map[string]any{"q": byID})
	untrashed := trashed
	untrashed.Op = "UNTRASHED"
	// Read after both writes: the node of the TRASHED event is the record
	// as it is when delivered (untrashed again), its op says what happened.
	for name, s := range map[string]*sseStream{"all": all, "filtered": annOnly, "one record": one} {
		got, _ = s.change()
		wantChange(t, "trashed, "+name, got, trashed)
		got, _ = s.change()
		wantChange(t, "untrashed, "+name, got, untrashed)
	}

	c.rest(http.MethodDelete, "/rest/v1/Author/"+id, nil)
	deleted := change{Op: "DELETED", ID: id, Changed: []string{}}
	for name, s := range map[string]*sseStream{"all": all, "filtered": annOnly, "one record": one} {
		got, _ = s.change()
		wantChange(t, "deleted, "+name, got, deleted)
	}

	// Resuming after the update replays what followed, from the after
	// argument and from Last-Event-ID alike. The records of the replayed
	// events are those the live subscriptions were delivered (an
	// instance's subscribers share one read of each record after its
	// change, feed.go): ann's trash and untrash are replayed with her
	// record although she is gone now.
	wantReplay := []string{"UPDATED " + bob, "TRASHED " + id, "UNTRASHED " + id, "DELETED " + id}
	for name, s := range map[string]*sseStream{
		"after":         c.sse(authorChanges, map[string]any{"after": cursorUpdated}, nil),
		"Last-Event-ID": c.sse(authorChanges, nil, map[string]string{"Last-Event-ID": cursorUpdated}),
	} {
		var ops []string
		for range wantReplay {
			got, _ := s.change()
			ops = append(ops, got.Op+" "+got.ID)
		}
		if diff := cmp.Diff(wantReplay, ops); diff != "" {
			t.Errorf("replay by %s (-want +got):\n%s", name, diff)
		}
	}
}

func TestSubscriptionRequests(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	d := c.data(`{ __schema { subscriptionType { name fields { name args { name } } } } __type(name: "CoreChangeOp") { enumValues { name } } }`, nil)
	if diff := cmp.Diff(map[string]any{"name": "Subscription", "fields": []any{map[string]any{"name": "subscribe", "args": []any{
		map[string]any{"name": "type"}, map[string]any{"name": "arcql"}, map[string]any{"name": "id"}, map[string]any{"name": "after"}}}}},
		path(d, "__schema", "subscriptionType"), sortArgs()); diff != "" {
		t.Errorf("introspection of the subscription type (-want +got):\n%s", diff)
	}
	var ops []string
	for _, v := range path(d, "__type", "enumValues").([]any) {
		ops = append(ops, v.(map[string]any)["name"].(string))
	}
	if diff := cmp.Diff([]string{"CREATED", "DELETED", "TRASHED", "UNTRASHED", "UPDATED"}, ops, sortStrings()); diff != "" {
		t.Errorf("CoreChangeOp (-want +got):\n%s", diff)
	}

	cases := []struct {
		name, query string
		vars        map[string]any
		headers     map[string]string
		status      int
		code        string
	}{
		{"not a subscription", `{ __typename }`, nil, nil, http.StatusOK, ""},
		{"bad cursor", authorChanges, map[string]any{"after": "nope"}, nil, http.StatusBadRequest, "BAD_REQUEST"},
		{"bad Last-Event-ID", authorChanges, nil, map[string]string{"Last-Event-ID": "bm9wZQ"}, http.StatusBadRequest, "BAD_REQUEST"},
		{"bad filter", authorChanges, map[string]any{"q": "name ="}, nil, http.StatusBadRequest, "BAD_FILTER"},
		{"sorted filter", authorChanges, map[string]any{"q": "* SORT name"}, nil, http.StatusBadRequest, "BAD_FILTER"},
		{"two root fields", `subscription { a: subscribe(type: Book) { id } b: subscribe(type: Author) { id } }`, nil, nil, http.StatusBadRequest, "BAD_REQUEST"},
		{"no token", authorChanges, nil, map[string]string{"authorization": ""}, http.StatusUnauthorized, "UNAUTHENTICATED"},
		{"too many aliases", `subscription { subscribe(type: Author) { ` + aliases(31) + ` } }`, nil, nil, http.StatusBadRequest, "TOO_COMPLEX"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cc := *c
			if v, ok := tc.headers["authorization"]; ok {
				cc.token = v
			}
			resp, cancel := cc.sseRequest(tc.query, tc.vars, tc.headers)
			defer cancel()
			defer resp.Body.Close()
			if resp.StatusCode != tc.status {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if tc.code == "" {
				return
			}
			var body map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if got := path(body, "errors", 0, "extensions", "code"); got != tc.code {
				t.Errorf("code %v, want %s: %s", got, tc.code, dump(body))
			}
		})
	}

	// A subscription sent as a query (without the event stream) says
	// which transports carry it.
	status, msg, code := c.fail(authorChanges, nil)
	if status != http.StatusBadRequest || code != "BAD_REQUEST" || !strings.Contains(msg, "text/event-stream") {
		t.Errorf("subscription as a query: %d %s %q", status, code, msg)
	}
}

// aliases returns n aliased selections of id.
func aliases(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "a%d: id ", i)
	}
	return b.String()
}

func sortStrings() cmp.Option {
	return cmpopts.SortSlices(func(a, b string) bool { return a < b })
}

func sortArgs() cmp.Option {
	return cmpopts.SortSlices(func(a, b any) bool { return dump(a) < dump(b) })
}

// link and unlink are UPDATED events of the from record, naming the
// reference field; GET /graphql with query parameters streams too.
func TestSubscribeLinksOverGET(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	author := c.upsertOne("Author", map[string]any{"name": "ann"})
	book := c.upsertOne("Book", map[string]any{"title": "Dune"})
	q := url.Values{"query": {`subscription { subscribe(type: Author) { op id changed node { ... on Author { booklist { title } } } } }`}}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.env.URL+"/graphql?"+q.Encode(), nil)
	req.Header.Set("accept", "text/event-stream")
	req.Header.Set(tenant.Header, c.domain)
	req.Header.Set("authorization", c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET subscribe: status %d", resp.StatusCode)
	}
	s := &sseStream{t: t, resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
	defer s.close()
	link := `mutation($f: String!, $t: String!) { %s(from: Author, to: Book, via: "booklist", whereFromID: $f, andToID: $t) }`
	ids := map[string]any{"f": author, "t": book}
	c.data(fmt.Sprintf(link, "link"), ids)
	got, _ := s.change()
	wantChange(t, "linked", got, change{Op: "UPDATED", ID: author, Changed: []string{"booklist"}, Node: map[string]any{"booklist": []any{map[string]any{"title": "Dune"}}}})
	c.data(fmt.Sprintf(link, "unlink"), ids)
	got, _ = s.change()
	if got.Op != "UPDATED" || got.ID != author || !slices.Equal(got.Changed, []string{"booklist"}) {
		t.Errorf("unlinked: %+v, want UPDATED of booklist", got)
	}
}

// A subscription resuming further back than its instance's shared tail
// holds (feed.go) reads the store until it reaches the tail, then reads
// the tail, without a gap or a repeat.
func TestSubscriptionReplayPastTheTail(t *testing.T) {
	t.Parallel()
	cfg := gql.DefaultConfig()
	cfg.SubscriptionTail = 8
	c := newBookstore(t, servertest.WithGQLConfig(cfg))
	// A live subscription keeps the instance's tail reading.
	books := c.sse(`subscription { subscribe(type: Book) { op id } }`, nil, nil)
	defer books.close()
	all := c.sse(authorChanges, nil, nil)
	first := c.upsertOne("Author", map[string]any{"name": "first"})
	got, cursor := all.change()
	wantChange(t, "first", got, change{Op: "CREATED", ID: first, Changed: got.Changed, Node: map[string]any{"name": "first", "age": nil, "bestbook": nil}})
	all.close()

	const batches, per = 3, 5 // more changes than the tail keeps
	var want []string
	for b := range batches {
		var authors []any
		for i := range per {
			id := fmt.Sprintf("a%d-%d", b, i)
			authors = append(authors, map[string]any{"core": map[string]any{"id": id}, "name": id})
			want = append(want, id)
		}
		c.rest(http.MethodPost, "/rest/v1/", map[string]any{"values": map[string]any{"Author": authors}})
	}
	resumed := c.sse(authorChanges, map[string]any{"after": cursor}, nil)
	defer resumed.close()
	for i, id := range want {
		got, _ := resumed.change()
		if got.Op != "CREATED" || got.ID != id || got.Node == nil {
			t.Fatalf("event %d: %s %s (node %v), want CREATED %s with its record", i, got.Op, got.ID, got.Node, id)
		}
	}
	// Caught up, it reads the tail.
	last := c.upsertOne("Author", map[string]any{"name": "last"})
	if got, _ := resumed.change(); got.Op != "CREATED" || got.ID != last {
		t.Fatalf("after the replay: %s %s, want CREATED %s", got.Op, got.ID, last)
	}
}
