// Package storetest is the conformance suite every store.Store runs: the
// embedded bolt store and the MongoDB store pass the same assertions,
// written against the interface only.
//
// A store's test calls Run (or RunWith) with a function that opens a new,
// empty store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := bolt.Open(filepath.Join(t.TempDir(), "core.db"), bolt.DefaultConfig())
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// Every group of cases opens its own store and closes it when it ends, and
// uses instance ids and document kinds of its own, so a store that cannot
// be emptied cheaply (a shared MongoDB database) may hand out the same one.
// The meaning of filters and sort orders is arcql's: arcql.Match and
// arcql.CompareSort are the reference the suite checks against.
package storetest

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// Options adapts the suite to what a store promises beyond the interface.
// The zero value asserts everything.
type Options struct {
	// WritesNotAtomic skips the assertions that a failing Write applies
	// none of its ops (MongoDB without transactions cannot promise it).
	WritesNotAtomic bool
	// HopLimit is the reference-hop bound the opened stores are configured
	// with; when positive, the suite checks that Find fails with
	// store.ErrTooMany beyond it (so keep it small: the suite writes
	// HopLimit+1 records). Zero skips that check; store.ResolveHops's own
	// bound is checked either way.
	HopLimit int
	// Reopen closes s and returns the same store opened again (the same
	// file, the same database), as a restart does; nil skips the checks
	// that need it.
	Reopen func(t *testing.T, s store.Store) store.Store
	// ForgetUsage removes what s keeps of inst's usage (not its counters),
	// as in a store written before usage was kept, so that the suite can
	// check the kept figures against a count from scratch; nil skips.
	ForgetUsage func(t *testing.T, s store.Store, inst string)
	// OpenRetention opens a new store that keeps the change feed as r
	// says (the test closes it); nil skips the retention cases.
	OpenRetention func(t *testing.T, r store.Retention) store.Store
	// SecondHandle opens another handle on s's database, as a second
	// process would (closed when the test ends); nil skips the cases of
	// changes made through one handle and seen through the other.
	SecondHandle func(t *testing.T, s store.Store) store.Store
}

// Run runs the whole suite with the zero Options.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	RunWith(t, open, Options{})
}

// RunWith runs the suite. open must return a new store (or one holding
// nothing the suite uses); the suite closes it when the group of cases
// that opened it ends.
func RunWith(t *testing.T, open func(t *testing.T) store.Store, opts Options) {
	groups := []struct {
		name string
		fn   func(t *testing.T, e *env)
	}{
		{"Ping", testPing},
		{"Get", testGet},
		{"Upsert", testUpsert},
		{"OpResults", testOpResults},
		{"Required", testRequired},
		{"Keep", testKeep},
		{"Unique", func(t *testing.T, e *env) { testUnique(t, e, opts) }},
		{"Atomicity", func(t *testing.T, e *env) { testAtomicity(t, e, opts) }},
		{"Delete", testDelete},
		{"Filters", testFilters},
		{"Sort", testSort},
		{"Paging", testPaging},
		{"Grants", testGrants},
		{"Aggregate", testAggregate},
		{"Hops", func(t *testing.T, e *env) { testHops(t, e, opts) }},
		{"Trash", testTrash},
		{"Refs", testRefs},
		{"Edits", testEdits},
		{"ReverseLookup", testReverseLookup},
		{"Isolation", testIsolation},
		{"Declare", testDeclare},
		{"DropInstance", testDropInstance},
		{"Docs", testDocs},
		{"CreateDoc", testCreateDoc},
		{"Concurrency", testConcurrency},
		{"ValueTypes", testValueTypes},
		{"Usage", func(t *testing.T, e *env) { testUsage(t, e, opts) }},
		{"Quota", testQuota},
		{"Counters", testCounters},
		{"ChangeOps", testChangeOps},
		{"ChangesPaging", testChangesPaging},
		{"ChangeOrder", testChangeOrder},
		{"ChangeRetention", func(t *testing.T, e *env) { testChangeRetention(t, e, opts) }},
		{"Wait", func(t *testing.T, e *env) { testWait(t, e, opts) }},
		{"DropChanges", testDropChanges},
		{"Snapshot", testSnapshot},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.fn(t, newEnv(t, open))
		})
	}
}

// env is one group's store and instance.
type env struct {
	t    *testing.T
	s    store.Store
	ctx  context.Context
	inst string
}

func newEnv(t *testing.T, open func(t *testing.T) store.Store) *env {
	t.Helper()
	e := &env{t: t, s: open(t), ctx: context.Background(), inst: "inst-" + store.NewID()}
	t.Cleanup(func() {
		if err := e.s.Close(); err != nil { // e.s: the store Reopen may have replaced
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// otherInstance returns a fresh instance id.
func otherInstance() string { return "inst-" + store.NewID() }

// t0 is the suite's clock: whole milliseconds in UTC, which every store can
// keep exactly.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// at is t0 plus n minutes.
func at(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }

// Test schema for arcql.Bind: Author and Book, and Account for unique
// values.
type schema map[string]map[string]arcql.Field

func (s schema) Field(typ, name string) (arcql.Field, bool) {
	f, ok := s[typ][name]
	return f, ok
}

var testSchema = schema{
	"Author": {
		"name":     {Kind: arcql.FieldString},
		"age":      {Kind: arcql.FieldInt},
		"bestbook": {Kind: arcql.FieldRef, Target: "Book"},
		"booklist": {Kind: arcql.FieldRef, Target: "Book", List: true},
	},
	"Book": {
		"title":    {Kind: arcql.FieldString},
		"authorid": {Kind: arcql.FieldInt},
		"price":    {Kind: arcql.FieldFloat},
	},
	"Account": {
		"username": {Kind: arcql.FieldString},
		"emails":   {Kind: arcql.FieldString, List: true},
	},
}

// testSpecs are the TypeSpecs of the test schema: an index on Book.price
// and Author.name, Author's references, Account's unique fields.
var testSpecs = []store.TypeSpec{
	{Name: "Author", Indices: [][]string{{"name"}}, Refs: []string{"bestbook", "booklist"}},
	{Name: "Book", Indices: [][]string{{"price"}}},
	{Name: "Account", Unique: []string{"username", "emails"}},
}

// declare declares the test specs in inst.
func (e *env) declare(inst string) {
	e.t.Helper()
	if err := e.s.Declare(e.ctx, inst, testSpecs); err != nil {
		e.t.Fatalf("Declare(%s): %v", inst, err)
	}
}

// write applies ops in e.inst and fails the test on error.
func (e *env) write(ops ...store.Op) []store.OpResult {
	e.t.Helper()
	return e.writeIn(e.inst, ops...)
}

func (e *env) writeIn(inst string, ops ...store.Op) []store.OpResult {
	e.t.Helper()
	res, err := e.s.Write(e.ctx, inst, ops, store.Quota{})
	if err != nil {
		e.t.Fatalf("Write(%s): %v", inst, err)
	}
	if len(res) != len(ops) {
		e.t.Fatalf("Write(%s): %d results for %d ops", inst, len(res), len(ops))
	}
	return res
}

// upsert is an OpUpsert at time now.
func upsert(typ, id string, now time.Time, set map[string]any) store.Op {
	return store.Op{Kind: store.OpUpsert, Type: typ, ID: id, Set: set, Now: now}
}

// get reads a record that must exist.
func (e *env) get(inst, typ, id string) *store.Record {
	e.t.Helper()
	r, err := e.s.Get(e.ctx, inst, typ, id)
	if err != nil {
		e.t.Fatalf("Get(%s, %s, %s): %v", inst, typ, id, err)
	}
	return r
}

// wantNotFound checks that a record is absent.
func (e *env) wantNotFound(inst, typ, id string) {
	e.t.Helper()
	if r, err := e.s.Get(e.ctx, inst, typ, id); !errors.Is(err, store.ErrNotFound) {
		e.t.Errorf("Get(%s, %s, %s) = %v, %v; want ErrNotFound", inst, typ, id, r, err)
	}
}

// query parses and binds ArcQL text for typ in inst.
func (e *env) query(inst, typ, text string) *store.Query {
	e.t.Helper()
	pq, err := arcql.Parse(text, arcql.DefaultLimits())
	if err != nil {
		e.t.Fatalf("Parse(%q): %v", text, err)
	}
	bq, err := arcql.Bind(pq, testSchema, typ, inst)
	if err != nil {
		e.t.Fatalf("Bind(%q): %v", text, err)
	}
	return &store.Query{Type: typ, Filter: bq.Filter, Sort: bq.Sort}
}

// find runs a query that must succeed and returns the ids in order.
// Every record found must be whole (what Get returns), and the same query
// with IDsOnly must find the same ids.
func (e *env) find(inst string, q *store.Query) []string {
	e.t.Helper()
	recs, err := e.s.Find(e.ctx, inst, q)
	if err != nil {
		e.t.Fatalf("Find(%s, %+v): %v", inst, q, err)
	}
	for _, r := range recs {
		if d := cmp.Diff(e.get(inst, r.Type, r.ID), r); d != "" {
			e.t.Fatalf("Find(%s, %+v): record %s is not what Get returns (-get +find):\n%s", inst, q, r.ID, d)
		}
	}
	idq := *q
	idq.IDsOnly = true
	only, err := e.s.Find(e.ctx, inst, &idq)
	if err != nil {
		e.t.Fatalf("Find(%s, %+v): %v", inst, &idq, err)
	}
	if d := cmp.Diff(ids(recs), ids(only)); d != "" {
		e.t.Fatalf("Find(%s, %+v) with IDsOnly found other ids (-without +with):\n%s", inst, q, d)
	}
	return ids(recs)
}

// findText finds with ArcQL text in inst.
func (e *env) findText(inst, typ, text string) []string {
	e.t.Helper()
	return e.find(inst, e.query(inst, typ, text))
}

func ids(recs []*store.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// diffIDs compares id sequences, treating nil and empty alike.
func diffIDs(want, got []string) string {
	if len(want) == 0 && len(got) == 0 {
		return ""
	}
	return cmp.Diff(want, got)
}

// sorted returns a sorted copy.
func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// checkFieldError checks that err is a *store.FieldError with the given
// parts (value only for ErrUnique).
func checkFieldError(t *testing.T, err error, want *store.FieldError) {
	t.Helper()
	var fe *store.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v is not a *store.FieldError", err)
	}
	if !errors.Is(err, want.Err) {
		t.Errorf("error %v is not %v", err, want.Err)
	}
	if fe.Type != want.Type || fe.Field != want.Field {
		t.Errorf("FieldError names %s.%s, want %s.%s", fe.Type, fe.Field, want.Type, want.Field)
	}
	if want.Value != nil && arcql.CompareValues(fe.Value, want.Value) != 0 {
		t.Errorf("FieldError value %v, want %v", fe.Value, want.Value)
	}
}

func testPing(t *testing.T, e *env) {
	if err := e.s.Ping(e.ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

// race runs n writers at once, writer i calling write(i), and returns the
// writers that succeeded, in order; a writer that failed other than with
// lost (the error of a writer that lost the race) is a test error.
func race(t *testing.T, n int, lost error, write func(i int) error) (won []int) {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = write(i) })
	}
	wg.Wait()
	for i, err := range errs {
		switch {
		case err == nil:
			won = append(won, i)
		case !errors.Is(err, lost):
			t.Errorf("writer %d: %v", i, err)
		}
	}
	return won
}
