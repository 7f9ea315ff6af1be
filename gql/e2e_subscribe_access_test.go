package gql_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/corehq/core/tenant"
)

const bookChanges = `subscription { subscribe(type: Book) { op id node { ... on Book { title } } } }`

// An account sees the events of the records it may read when each event
// is delivered: its own (the owner rule), and another's while a grant
// allows it; never the rest. Order shows what was left out: an event the
// subscriber must not see is followed by one it must, which arrives next.
func TestSubscriptionsSeeOnlyReadableRecords(t *testing.T) {
	t.Parallel()
	admin := newBookstore(t)
	ada, bob, _, bobID := admin.adaAndBob()
	bobs := bob.sse(bookChanges, nil, nil)
	adas := ada.sse(bookChanges, nil, nil)

	a1 := ada.books("a1")[0]
	b1 := bob.books("b1")[0]
	got, _ := bobs.change()
	wantChange(t, "bob's first event", got, change{Op: "CREATED", ID: b1, Changed: []string{}, Node: map[string]any{"title": "b1"}})
	got, _ = adas.change()
	wantChange(t, "ada's first event", got, change{Op: "CREATED", ID: a1, Changed: []string{}, Node: map[string]any{"title": "a1"}})

	// A grant to bob on a1: its changes reach him from then on.
	grant := ada.grant(map[string]any{"resource": a1, "resourceType": "Book", "operationType": "Query", "operation": "get",
		"permissionType": "RBP", "members": members(bobID)})
	ada.upsertOne("Book", map[string]any{"core": map[string]any{"id": a1}, "title": "a1 shared"})
	got, _ = bobs.change()
	wantChange(t, "a1 shared with bob", got, change{Op: "UPDATED", ID: a1, Changed: []string{}, Node: map[string]any{"title": "a1 shared"}})

	// Revoked: no more events of a1 for bob, while ada, its owner, still
	// sees them.
	ada.data(`mutation($q: String!) { delete(type: AccessRight, arcql: $q) }`, map[string]any{"q": `core.id = "` + grant + `"`})
	ada.upsertOne("Book", map[string]any{"core": map[string]any{"id": a1}, "title": "a1 private"})
	for _, title := range []string{"a1 shared", "a1 private"} {
		got, _ = adas.change()
		if got.Op != "UPDATED" || got.ID != a1 {
			t.Fatalf("ada's event after %q: %+v, want UPDATED %s", title, got, a1)
		}
	}
	b2 := bob.books("b2")[0]
	got, _ = bobs.change()
	wantChange(t, "bob after the revocation", got, change{Op: "CREATED", ID: b2, Changed: []string{}, Node: map[string]any{"title": "b2"}})
}

// openEnv opens a request's environment for the instance books.test as
// the caller with token, as the /graphql door does.
func openEnv(t *testing.T, env *servertest.Env, token string) gql.Env {
	t.Helper()
	inst, err := env.Directory.Resolve([]string{"books.test"})
	if err != nil {
		t.Fatal(err)
	}
	genv, err := env.Engine.Open(context.Background(), inst, token, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return genv
}

// A subscriber that does not take its events is cut off once its queue
// is full, with an error saying so; it never holds more.
func TestSlowSubscriberIsCutOff(t *testing.T) {
	t.Parallel()
	cfg := gql.DefaultConfig()
	cfg.SubscriptionQueue = 2
	c := newBookstore(t, servertest.WithGQLConfig(cfg))
	env, token := c.env, c.token
	st, res := env.Engine.Subscribe(context.Background(), openEnv(t, env, token), gql.Request{Query: bookChanges}, "")
	if res != nil {
		t.Fatalf("subscribe: %+v", res.Errors)
	}
	defer st.Close()
	c.books("1", "2", "3") // one write, three changes
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	select {
	case <-st.Done():
	case <-ctx.Done():
		t.Fatal("the subscription was not cut off")
	}
	n := 0
	for range st.Events() {
		n++
	}
	if n != 2 {
		t.Errorf("%d events waited, want the queue's 2", n)
	}
	if e := errcode.As(st.Err()); e.Code != errcode.SubscriptionLimit {
		t.Errorf("ended with %v, want SUBSCRIPTION_LIMIT", st.Err())
	}
}

// A cursor older than the retained changes is refused with HISTORY_GONE,
// before the stream opens.
func TestSubscriptionHistoryGone(t *testing.T) {
	t.Parallel()
	st := bolttest.OpenAt(t, filepath.Join(t.TempDir(), "core.db"), func(c *bolt.Config) { c.Retention = store.Retention{Count: 1} })
	t.Cleanup(func() { st.Close() })
	env := servertest.Start(t, servertest.WithStore(st))
	env.PutRelease("bookstore", "v1", bookstoreSDL(t))
	token := env.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{})
	c := &client{t: t, env: env, domain: "books.test", token: token}
	s := c.sse(bookChanges, nil, nil)
	c.books("1")
	_, cursor := s.change()
	c.books("2")
	c.books("3")
	resp, cancel := c.sseRequest(bookChanges, nil, map[string]string{"Last-Event-ID": cursor})
	defer cancel()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusGone {
		t.Fatalf("status %d, want 410", resp.StatusCode)
	}
	_, res := env.Engine.Subscribe(context.Background(), openEnv(t, env, token), gql.Request{Query: bookChanges}, cursor)
	if res == nil || len(res.Errors) == 0 || res.Errors[0].Extensions["code"] != string(errcode.HistoryGone) {
		t.Fatalf("subscribe after a trimmed cursor: %+v", res)
	}
}

// A session that logs out has its subscriptions ended with
// UNAUTHENTICATED (checked every SessionCheck, short here); the instance
// token's go on.
func TestLogoutEndsSubscriptions(t *testing.T) {
	t.Parallel()
	admin := sessionCheckedBookstore(t)
	admin.newAccount("ada", "", "correct horse battery")
	ada := admin.login("ada", "correct horse battery")
	adas := ada.sse(bookChanges, nil, nil)
	admins := admin.sse(bookChanges, nil, nil)
	w := ada.dial("graphql-transport-ws", nil)
	w.init(ada)
	w.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": bookChanges}})

	ada.data(`mutation { logout }`, nil)
	wantEndedUnauthenticated(t, "after the logout, ada's", adas, w)
	wantNextBook(t, "the instance token's subscription", admin, admins)
}

// sessionCheckedBookstore is the instance token's client of a bookstore
// instance on a server whose subscriptions check their caller's session
// every 20 ms.
func sessionCheckedBookstore(t *testing.T) *client {
	t.Helper()
	cfg := gql.DefaultConfig()
	cfg.SessionCheck = 20 * time.Millisecond
	env := servertest.Start(t, servertest.WithGQLConfig(cfg))
	env.PutRelease("bookstore", "v1", bookstoreSDL(t))
	token := env.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{})
	return &client{t: t, env: env, domain: "books.test", token: token}
}

// wantEndedUnauthenticated: the event stream sends an UNAUTHENTICATED
// error, then completes, and the WebSocket's subscription 1 ends with an
// UNAUTHENTICATED error; when names the moment and whose they are.
func wantEndedUnauthenticated(t *testing.T, when string, stream *sseStream, w *wsClient) {
	t.Helper()
	ev := stream.next()
	if ev.event != "next" || path(ev.data, "errors", 0, "extensions", "code") != "UNAUTHENTICATED" {
		t.Fatalf("%s stream sent %s %s, want an UNAUTHENTICATED error", when, ev.event, dump(ev.data))
	}
	if ev := stream.next(); ev.event != "complete" {
		t.Fatalf("after the error, %s, want complete", ev.event)
	}
	if m := w.expect("error", "1"); path(m, "payload", 0, "extensions", "code") != "UNAUTHENTICATED" {
		t.Fatalf("%s WebSocket subscription: %s", when, dump(m))
	}
}

// wantNextBook: a book c writes is the next event of its stream, which
// goes on.
func wantNextBook(t *testing.T, step string, c *client, stream *sseStream) {
	t.Helper()
	id := c.books("after")[0]
	got, _ := stream.change()
	wantChange(t, step, got, change{Op: "CREATED", ID: id, Changed: []string{}, Node: map[string]any{"title": "after"}})
}

// hostile checklist 47: a subscription does not outlive a password
// change made by another session of its account: the change ends it with
// UNAUTHENTICATED over SSE and WebSocket alike, while the subscription of
// the session that changed the password goes on (as its requests do).
func TestPasswordChangeEndsOtherSessionsSubscriptions(t *testing.T) {
	t.Parallel()
	admin := sessionCheckedBookstore(t)
	admin.newAccount("ada", "", "correct horse battery")
	changer := admin.login("ada", "correct horse battery")
	other := admin.login("ada", "correct horse battery")
	others := other.sse(bookChanges, nil, nil)
	w := other.dial("graphql-transport-ws", nil)
	w.init(other)
	w.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": bookChanges}})
	changers := changer.sse(bookChanges, nil, nil)

	changer.data(changePasswordDoc, map[string]any{"c": "correct horse battery", "n": "new horse battery"})
	wantEndedUnauthenticated(t, "after the password change, the other session's", others, w)
	// The changing session's own subscription sees its next book.
	wantNextBook(t, "the changing session's subscription", changer, changers)
}

// bookFields watches Book changes with the fields they name.
const bookFields = `subscription { subscribe(type: Book) { op id changed node { ... on Book { title price } } } }`

// hostile checklist 46: a grantee limited to some fields learns nothing of
// the others through a subscription, not even that one changed: changed
// names only the fields it may read, and a change of hidden fields alone
// is not delivered (over SSE and WebSocket alike). Order shows what was
// left out: after a change bob must not see, one he must see arrives next.
func TestSubscriptionChangedNamesOnlyVisibleFields(t *testing.T) {
	t.Parallel()
	admin := newBookstore(t)
	ada, bob, _, bobID := admin.adaAndBob()
	a1 := ada.books("a1")[0]
	ada.grant(map[string]any{"resource": a1, "resourceType": "Book", "operationType": "Query", "operation": "get", "permissionType": "RBP",
		"fields": "title", "members": members(bobID)})
	sse := bob.sse(bookFields, nil, nil)
	ws := bob.dial("graphql-transport-ws", nil)
	ws.init(bob)
	ws.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": bookFields}})
	adas := ada.sse(bookFields, nil, nil)
	// The WebSocket's subscription has its starting point once a query
	// sent after it is answered.
	ws.send(map[string]any{"id": "q", "type": "subscribe", "payload": map[string]any{"query": `{ __typename }`}})
	ws.expect("next", "q")
	ws.expect("complete", "q")
	next := func(step string, want change) {
		t.Helper()
		got, _ := sse.change()
		wantChange(t, step+" (SSE)", got, want)
		wantChange(t, step+" (WebSocket)", ws.event("next", "1"), want)
	}

	// Only the price, hidden from bob: ada sees it, bob does not.
	ada.upsertOne("Book", map[string]any{"core": map[string]any{"id": a1}, "price": 11})
	got, _ := adas.change()
	wantChange(t, "ada's price change", got, change{Op: "UPDATED", ID: a1, Changed: []string{"price"}, Node: map[string]any{"title": "a1", "price": float64(11)}})
	// Title and price: bob hears of the title only.
	ada.upsertOne("Book", map[string]any{"core": map[string]any{"id": a1}, "title": "a1 again", "price": 12})
	next("the title and the price changed", change{Op: "UPDATED", ID: a1, Changed: []string{"title"}, Node: map[string]any{"title": "a1 again", "price": nil}})
	// The price alone again, then a book of bob's own: the next event bob
	// gets is his book, with every field it names.
	ada.upsertOne("Book", map[string]any{"core": map[string]any{"id": a1}, "price": 13})
	b1 := bob.books("b1")[0]
	next("bob's own book after a hidden change", change{Op: "CREATED", ID: b1, Changed: []string{"price", "title"}, Node: map[string]any{"title": "b1", "price": float64(10)}})
	for _, want := range []change{
		{Op: "UPDATED", ID: a1, Changed: []string{"price", "title"}, Node: map[string]any{"title": "a1 again", "price": float64(12)}},
		{Op: "UPDATED", ID: a1, Changed: []string{"price"}, Node: map[string]any{"title": "a1 again", "price": float64(13)}},
	} {
		got, _ := adas.change()
		wantChange(t, "ada, the owner, sees every field", got, want)
	}
}

// A grant written while a subscription is open counts for its next
// event as it does for the next find: the same grants, read again once
// one is written. Each round writes a grant, then a record, then
// receives; revokes, then writes the record (not delivered) and one of
// bob's own (delivered next). No waiting on time: the order is the
// assertion.
func TestGrantReachesOpenSubscriptions(t *testing.T) {
	t.Parallel()
	admin := newBookstore(t)
	ada, bob, _, bobID := admin.adaAndBob()
	a1 := ada.books("a1")[0]
	sse := bob.sse(bookFields, nil, nil)
	for round := range 5 {
		fields := map[string]any{"fields": "title"} // a field-limited grant on even rounds
		if round%2 == 1 {
			fields = map[string]any{}
		}
		g := map[string]any{"resource": a1, "resourceType": "Book", "operationType": "Query", "operation": "get", "permissionType": "RBP", "members": members(bobID)}
		for k, v := range fields {
			g[k] = v
		}
		grant := ada.grant(g)
		title := fmt.Sprintf("a1 round %d", round)
		ada.upsertOne("Book", map[string]any{"core": map[string]any{"id": a1}, "title": title, "price": 20 + round})
		want := change{Op: "UPDATED", ID: a1, Changed: []string{"price", "title"}, Node: map[string]any{"title": title, "price": float64(20 + round)}}
		if round%2 == 0 {
			want.Changed, want.Node["price"] = []string{"title"}, nil
		}
		got, _ := sse.change()
		wantChange(t, fmt.Sprintf("round %d: the record written after the grant", round), got, want)

		ada.data(`mutation($q: String!) { delete(type: AccessRight, arcql: $q) }`, map[string]any{"q": `core.id = "` + grant + `"`})
		ada.upsertOne("Book", map[string]any{"core": map[string]any{"id": a1}, "title": title + " private"})
		own := bob.books(fmt.Sprintf("b%d", round))[0]
		got, _ = sse.change()
		wantChange(t, fmt.Sprintf("round %d: bob's own book after the revoked one", round), got,
			change{Op: "CREATED", ID: own, Changed: []string{"price", "title"}, Node: map[string]any{"title": fmt.Sprintf("b%d", round), "price": float64(10)}})
	}
}
