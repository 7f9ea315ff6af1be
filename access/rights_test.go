package access_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/access"
	"github.com/corehq/core/auth"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt/bolttest"
)

func TestRights(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	bob := auth.Principal{Kind: auth.User, AccountID: "bob"}
	anon := auth.Principal{Kind: auth.Anonymous}
	read := access.Grant{ResourceType: "Book", OperationType: "Query", Operation: "find"}
	with := func(change func(*access.Grant)) access.Grant { g := read; change(&g); return g }
	for _, tc := range []struct {
		name  string
		op    string
		g     access.Grant
		p     auth.Principal
		typ   string
		owner []string
		ids   []string
		all   bool
	}{
		{"a record to bob", "find", with(func(g *access.Grant) { g.Resource, g.Members = "b1", []string{"bob"} }), bob, "Book", nil, []string{"b1"}, false},
		{"every record of ada's to everyone", "find", with(func(g *access.Grant) { g.Resource, g.Owner, g.Members = "*", "ada", []string{"*"} }), bob, "Book", []string{"ada"}, nil, false},
		{"an SBP", "find", with(func(g *access.Grant) { g.Resource, g.Scope, g.Members = "*", true, []string{"bob"} }), bob, "Book", nil, nil, true},
		{"another type", "find", with(func(g *access.Grant) { g.Resource, g.Members = "b1", []string{"bob"} }), bob, "Author", nil, nil, false},
		{"any type", "find", with(func(g *access.Grant) { g.ResourceType, g.Resource, g.Members = "*", "b1", []string{"bob"} }), bob, "Author", nil, []string{"b1"}, false},
		{"any type leaves AccessRight out", "find", with(func(g *access.Grant) { g.ResourceType, g.Resource, g.Members = "*", "b1", []string{"bob"} }), bob, access.Type, nil, nil, false},
		{"another member", "find", with(func(g *access.Grant) { g.Resource, g.Members = "b1", []string{"cy"} }), bob, "Book", nil, nil, false},
		{"everyone is not anonymous", "find", with(func(g *access.Grant) { g.Resource, g.Members = "b1", []string{"*"} }), anon, "Book", nil, nil, false},
		{"anonymous", "find", with(func(g *access.Grant) { g.Resource, g.Members = "b1", []string{"anonymous"} }), anon, "Book", nil, []string{"b1"}, false},
		{"a write grant", "find", with(func(g *access.Grant) {
			g.OperationType, g.Operation, g.Resource, g.Members = "Mutation", "upsert", "b1", []string{"bob"}
		}), bob, "Book", nil, nil, false},
		{"a get grant reads", "find", with(func(g *access.Grant) { g.Operation, g.Resource, g.Members = "get", "b1", []string{"bob"} }), bob, "Book", nil, []string{"b1"}, false},
		{"disapproved", "find", with(func(g *access.Grant) { g.Resource, g.Members, g.Disabled = "b1", []string{"bob"}, true }), bob, "Book", nil, nil, false},
		{"not started", "find", with(func(g *access.Grant) { g.Resource, g.Members, g.Start = "b1", []string{"bob"}, now.Add(time.Second) }), bob, "Book", nil, nil, false},
		{"started at now", "find", with(func(g *access.Grant) { g.Resource, g.Members, g.Start = "b1", []string{"bob"}, now }), bob, "Book", nil, []string{"b1"}, false},
		{"ended at now", "find", with(func(g *access.Grant) { g.Resource, g.Members, g.End = "b1", []string{"bob"}, now }), bob, "Book", nil, nil, false},
	} {
		r := access.Rights([]access.Grant{tc.g}, tc.p, tc.typ, tc.op, now, nil)
		if r.All != tc.all || !cmp.Equal(r.Owners, tc.owner) || !cmp.Equal(r.IDs, tc.ids) {
			t.Errorf("%s: all %v owners %v ids %v, want %v %v %v", tc.name, r.All, r.Owners, r.IDs, tc.all, tc.owner, tc.ids)
		}
		if want := len(tc.ids) > 0 || tc.all; r.Allows(&store.Record{Type: tc.typ, ID: "b1", CreatedBy: "zed"}) != want {
			t.Errorf("%s: Allows(b1) = %v, want %v", tc.name, !want, want)
		}
	}
}

func TestCacheReadsAgainAfterForgetOrTTL(t *testing.T) {
	ctx := context.Background()
	st := bolttest.Open(t)
	if err := st.Declare(ctx, "i1", []store.TypeSpec{{Name: access.Type}}); err != nil {
		t.Fatal(err)
	}
	put := func(id string) {
		t.Helper()
		if _, err := st.Write(ctx, "i1", []store.Op{{Kind: store.OpUpsert, Type: access.Type, ID: id, Now: time.Now(),
			Set: map[string]any{"resource": "*", "resourceType": "Book", "operationType": "*", "operation": "*", "permissionType": "SBP"}}}, store.Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(c *access.Cache, now time.Time) int {
		t.Helper()
		g, err := c.Grants(ctx, "i1", now)
		if err != nil {
			t.Fatal(err)
		}
		return len(g)
	}
	c := access.NewCache(st, time.Minute)
	t0 := time.Now()
	put("g1")
	if n := count(c, t0); n != 1 {
		t.Fatalf("grants = %d, want 1", n)
	}
	put("g2")
	if n := count(c, t0.Add(time.Second)); n != 1 {
		t.Errorf("within the ttl: %d grants, want the snapshot's 1", n)
	}
	if n := count(c, t0.Add(time.Minute)); n != 2 {
		t.Errorf("after the ttl: %d grants, want 2", n)
	}
	put("g3")
	c.Forget("i1")
	if n := count(c, t0.Add(time.Minute)); n != 3 {
		t.Errorf("after Forget: %d grants, want 3", n)
	}
}

// TestCacheKeepsGrantsTheFeedShowsUnchanged: past the ttl, a snapshot
// whose instance's change feed shows no AccessRight change serves on
// without a read of the grants; an AccessRight change, more changes than
// it looks through, or grants read a minute ago make it read them again.
func TestCacheKeepsGrantsTheFeedShowsUnchanged(t *testing.T) {
	ctx := context.Background()
	st := bolttest.Open(t)
	if err := st.Declare(ctx, "i1", []store.TypeSpec{{Name: access.Type}, {Name: "Book"}}); err != nil {
		t.Fatal(err)
	}
	write := func(ops ...store.Op) {
		t.Helper()
		if _, err := st.Write(ctx, "i1", ops, store.Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	grant := func(id string) store.Op {
		return store.Op{Kind: store.OpUpsert, Type: access.Type, ID: id, Now: time.Now(),
			Set: map[string]any{"resource": "*", "resourceType": "Book", "operationType": "*", "operation": "*", "permissionType": "SBP"}}
	}
	books := func(n int) []store.Op {
		ops := make([]store.Op, n)
		for i := range ops {
			ops[i] = store.Op{Kind: store.OpUpsert, Type: "Book", ID: store.NewID(), Now: time.Now(), Set: map[string]any{"title": "t"}}
		}
		return ops
	}
	c := access.NewCache(st, time.Second)
	// first returns the snapshot's first grant: the same pointer while the
	// grants read once serve on.
	first := func(now time.Time, want int) *access.Grant {
		t.Helper()
		g, err := c.Grants(ctx, "i1", now)
		if err != nil {
			t.Fatal(err)
		}
		if len(g) != want {
			t.Fatalf("at %v: %d grants, want %d", now, len(g), want)
		}
		return &g[0]
	}
	t0 := time.Now()
	write(grant("g1"))
	read := first(t0, 1)
	write(books(3)...)
	if first(t0.Add(2*time.Second), 1) != read {
		t.Error("books written since: the grants were read again")
	}
	write(grant("g2"))
	read = first(t0.Add(4*time.Second), 2)
	write(books(1100)...)
	again := first(t0.Add(6*time.Second), 2)
	if again == read {
		t.Error("1,100 changes since: the grants were not read again")
	}
	if first(t0.Add(8*time.Second), 2) != again {
		t.Error("nothing written since: the grants were read again")
	}
	if first(t0.Add(6*time.Second+time.Minute), 2) == again {
		t.Error("a minute after they were read: the grants were not read again")
	}
}

func TestFieldsAreTheUnionOfTheGrants(t *testing.T) {
	now := time.Now()
	bob := auth.Principal{Kind: auth.User, AccountID: "bob"}
	g := func(resource string, fields ...string) access.Grant {
		return access.Grant{Owner: "ada", Resource: resource, ResourceType: "Book", OperationType: "Query", Operation: "get", Members: []string{"bob"}, Fields: fields}
	}
	rec := &store.Record{Type: "Book", ID: "b1", CreatedBy: "ada"}
	only, limited := access.Rights([]access.Grant{g("b1", "title"), g("*", "price")}, bob, "Book", "get", now, nil).Fields(rec)
	if !limited || !cmp.Equal(only, map[string]struct{}{"title": {}, "price": {}}) {
		t.Errorf("two limited grants: %v %v, want title and price", only, limited)
	}
	if _, limited := access.Rights([]access.Grant{g("b1", "title"), g("*")}, bob, "Book", "get", now, nil).Fields(rec); limited {
		t.Error("a grant of every field beside a limited one still limits")
	}
	if got := access.SplitFields(" title, price ,,"); !cmp.Equal(got, []string{"title", "price"}) {
		t.Errorf("SplitFields = %q", got)
	}
}

func TestCachedRightsEndAtTheGrantsEnd(t *testing.T) {
	ctx := context.Background()
	st := bolttest.Open(t)
	if err := st.Declare(ctx, "i1", []store.TypeSpec{{Name: access.Type}}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Truncate(time.Second)
	end := t0.Add(10 * time.Second)
	if _, err := st.Write(ctx, "i1", []store.Op{{Kind: store.OpUpsert, Type: access.Type, ID: "g1", Now: t0, Set: map[string]any{
		"resource": "b1", "resourceType": "Book", "operationType": "Query", "operation": "get", "permissionType": "RBP",
		"members": []any{"bob"}, "endDate": end.Format(time.RFC3339Nano)}}}, store.Quota{}); err != nil {
		t.Fatal(err)
	}
	c := access.NewCache(st, time.Hour)
	bob := auth.Principal{Kind: auth.User, AccountID: "bob"}
	rec := &store.Record{Type: "Book", ID: "b1", CreatedBy: "ada"}
	for _, tc := range []struct {
		at   time.Time
		want bool
	}{{t0, true}, {t0.Add(time.Second), true}, {end, false}, {end.Add(time.Second), false}} {
		s, err := c.Rights(ctx, "i1", bob, "Book", "find", tc.at, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Allows(rec) != tc.want {
			t.Errorf("at %v: Allows = %v, want %v", tc.at.Sub(t0), s.Allows(rec), tc.want)
		}
	}
}

// TestCacheUnderConcurrency: callers asking at once, while snapshots
// expire and are forgotten, all get the grant (go test -race).
func TestCacheUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	st := bolttest.Open(t)
	if err := st.Declare(ctx, "i1", []store.TypeSpec{{Name: access.Type}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write(ctx, "i1", []store.Op{{Kind: store.OpUpsert, Type: access.Type, ID: "g1", Now: time.Now(), Set: map[string]any{
		"resource": "b1", "resourceType": "Book", "operationType": "Query", "operation": "get", "permissionType": "RBP", "members": []any{"bob"}}}}, store.Quota{}); err != nil {
		t.Fatal(err)
	}
	c := access.NewCache(st, time.Millisecond)
	bob := auth.Principal{Kind: auth.User, AccountID: "bob"}
	rec := &store.Record{Type: "Book", ID: "b1"}
	var wg sync.WaitGroup
	var failures atomic.Int64
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if g == 0 && i%10 == 0 {
					c.Forget("i1")
				}
				s, err := c.Rights(ctx, "i1", bob, "Book", "get", time.Now(), nil)
				if err != nil || !s.Allows(rec) {
					failures.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := failures.Load(); n != 0 {
		t.Errorf("%d of 1,600 asks did not get the grant", n)
	}
}

func TestRestrictToShownFields(t *testing.T) {
	now := time.Now()
	bob := auth.Principal{Kind: auth.User, AccountID: "bob"}
	g := func(owner, resource string, fields ...string) access.Grant {
		return access.Grant{Owner: owner, Resource: resource, ResourceType: "Book", OperationType: "Query", Operation: "find", Members: []string{"bob"}, Fields: fields}
	}
	s := access.Rights([]access.Grant{g("ada", "b1", "title"), g("ada", "b2"), g("cy", "*", "title", "price"), g("dee", "*", "price")}, bob, "Book", "find", now, nil)
	for _, c := range []struct {
		fields         []string
		owners, ids    []string
		keepsEverybody bool
	}{
		{nil, []string{"cy", "dee"}, []string{"b1", "b2"}, true},
		{[]string{"title"}, []string{"cy"}, []string{"b1", "b2"}, false},
		{[]string{"price"}, []string{"cy", "dee"}, []string{"b2"}, false},
		{[]string{"title", "price"}, []string{"cy"}, []string{"b2"}, false},
		{[]string{"isbn"}, nil, []string{"b2"}, false},
	} {
		r := s.Restrict(c.fields)
		if !cmp.Equal(r.Owners, c.owners) || !cmp.Equal(r.IDs, c.ids) || (r == s) != c.keepsEverybody || len(r.Terms()) != min(1, len(r.Owners))+min(1, len(r.IDs)) {
			t.Errorf("Restrict(%v): owners %v ids %v terms %d, want %v %v", c.fields, r.Owners, r.IDs, len(r.Terms()), c.owners, c.ids)
		}
	}
	unlimited := access.Rights([]access.Grant{g("ada", "*")}, bob, "Book", "find", now, nil)
	if unlimited.Restrict([]string{"price"}) != unlimited {
		t.Error("a set without limited grants was restricted")
	}
}

// BenchmarkCacheExpiry: what an expired snapshot of 10,000 grants costs,
// read in full (after Forget) and rechecked against the change feed
// (every ttl, a full read each maxReuse).
func BenchmarkCacheExpiry(b *testing.B) {
	ctx := context.Background()
	st := grantsOf(b, 10_000, func(int) string { return "bob" }, nil)
	c := access.NewCache(st, time.Second)
	now := time.Now()
	b.Run("read in full", func(b *testing.B) {
		for b.Loop() {
			c.Forget("i1")
			if _, err := c.Grants(ctx, "i1", now); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rechecked", func(b *testing.B) {
		for b.Loop() {
			now = now.Add(time.Second)
			if _, err := c.Grants(ctx, "i1", now); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCacheRightsWithASourcedGrant: a caller's rights on an instance
// of 10,000 grants to 1,000 accounts (10 to the caller), one of which
// reads its members from a team record: the others' Set is kept, the
// sourced one's computed at each request.
func BenchmarkCacheRightsWithASourcedGrant(b *testing.B) {
	ctx := context.Background()
	st := grantsOf(b, 10_000, func(i int) string { return fmt.Sprintf("u%d", i%1000) }, func(set map[string]any) {
		set["membersSourceType"], set["membersSourceField"], set["membersSourceId"] = "Team", "members", "t1"
	})
	c := access.NewCache(st, time.Hour)
	bob := auth.Principal{Kind: auth.User, AccountID: "u7"}
	now := time.Now()
	team := func(access.Source) []string { return []string{"u7"} }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Rights(ctx, "i1", bob, "Book", "get", now, team); err != nil {
			b.Fatal(err)
		}
	}
}

// grantsOf is a store whose instance i1 has n grants to read one book
// each, the i-th to member(i); first changes the first grant.
func grantsOf(b *testing.B, n int, member func(int) string, first func(map[string]any)) store.Store {
	ctx := context.Background()
	st := bolttest.Open(b)
	if err := st.Declare(ctx, "i1", []store.TypeSpec{{Name: access.Type}}); err != nil {
		b.Fatal(err)
	}
	ops := make([]store.Op, n)
	for i := range ops {
		ops[i] = store.Op{Kind: store.OpUpsert, Type: access.Type, ID: store.NewID(), Now: time.Now(), Set: map[string]any{
			"resource": store.NewID(), "resourceType": "Book", "operationType": "Query", "operation": "get", "permissionType": "RBP", "members": []any{member(i)}}}
	}
	if first != nil {
		first(ops[0].Set)
	}
	if _, err := st.Write(ctx, "i1", ops, store.Quota{}); err != nil {
		b.Fatal(err)
	}
	return st
}
