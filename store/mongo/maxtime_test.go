package mongo_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
	"github.com/corehq/core/store/mongo"
	"github.com/corehq/core/store/mongo/mongotest"
)

type bookSchema struct{}

func (bookSchema) Field(typ, name string) (arcql.Field, bool) {
	if typ == "Book" && name == "title" {
		return arcql.Field{Kind: arcql.FieldString}, true
	}
	return arcql.Field{}, false
}

// TestQueriesCarryMaxTimeMS: every find of a caller's filter that the
// store sends (Find, and an Aggregate the server cannot group) carries
// maxTimeMS, derived by the driver from the operation's deadline
// (Config.OpTimeout), so the database itself stops a slow query; and
// pattern filters that make a backtracking matcher exponential, against a
// 10 KB stored value, answer.
//
// hostile checklist 25: a pattern filter against a 10 KB value →
// bounded, with the database's maxTimeMS.
func TestQueriesCarryMaxTimeMS(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sent []bson.Raw
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		// The finds of a caller's filter: on the records, by type.
		if _, err := e.Command.LookupErr("filter", "t"); e.CommandName == "find" && err == nil {
			mu.Lock()
			sent = append(sent, append(bson.Raw(nil), e.Command...))
			mu.Unlock()
		}
	}}
	const opTimeout = 7 * time.Second
	st := mongotest.Open(t, mongo.WithCommandMonitor(mon), func(c *mongo.Config) { c.OpTimeout = opTimeout })
	ctx := context.Background()
	if err := st.Declare(ctx, "i1", []store.TypeSpec{{Name: "Book"}}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a", 10<<10)
	if _, err := st.Write(ctx, "i1", []store.Op{{Kind: store.OpUpsert, Type: "Book", ID: "b1", Set: map[string]any{"title": long}, Now: time.Now()}}, store.Quota{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		filter string
		want   int
	}{
		{`title * '*a*a*a*a*a*a*a*a*a*b'`, 0}, // the exponential case of a backtracking matcher
		{`title * 'a*a*a*a*a*a*a*a*a*a'`, 1},
		{`title ^ '(a+)+$'`, 0}, // regular expression syntax is literal text
		{`title ~ '(a+)+$'`, 0},
		{`title * '` + strings.Repeat("a", 1000) + `*'`, 1},
	} {
		pq, err := arcql.Parse(tc.filter, arcql.DefaultLimits())
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		bq, err := arcql.Bind(pq, bookSchema{}, "Book", "i1")
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		recs, err := st.Find(ctx, "i1", &store.Query{Type: "Book", Filter: bq.Filter, Limit: 10})
		if err != nil || len(recs) != tc.want {
			t.Errorf("%s: %d records, %v; want %d", tc.filter, len(recs), err, tc.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) < 5 {
		t.Fatalf("%d find commands of a filter seen, want at least 5", len(sent))
	}
	for _, cmd := range sent {
		v, err := cmd.LookupErr("maxTimeMS")
		if err != nil {
			t.Errorf("a command without maxTimeMS: %s", cmd)
			continue
		}
		ms, ok := v.AsInt64OK()
		if !ok || ms <= 0 || ms > opTimeout.Milliseconds() {
			t.Errorf("maxTimeMS %v, want from 1 to %d: %s", v, opTimeout.Milliseconds(), cmd)
		}
	}
}
