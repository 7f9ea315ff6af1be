package bolt

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// itemSchema is the schema of the bolt tests' Item type.
type itemSchema struct{}

var itemFields = map[string]arcql.Field{
	"n":     {Kind: arcql.FieldInt},
	"price": {Kind: arcql.FieldFloat},
	"cat":   {Kind: arcql.FieldString},
	"title": {Kind: arcql.FieldString},
	"tags":  {Kind: arcql.FieldString, List: true},
	"when":  {Kind: arcql.FieldTime},
	"meta":  {Kind: arcql.FieldJSON},
	"ref":   {Kind: arcql.FieldRef, Target: "Item"},
	"refs":  {Kind: arcql.FieldRef, Target: "Item", List: true},
	// For the benchmarks' books.
	"isbn":     {Kind: arcql.FieldString},
	"authorid": {Kind: arcql.FieldInt},
}

func (itemSchema) Field(typ, name string) (arcql.Field, bool) {
	f, ok := itemFields[name]
	return f, ok
}

var itemSpec = store.TypeSpec{
	Name:    "Item",
	Unique:  []string{"title"},
	Indices: [][]string{{"price"}, {"cat"}, {"cat", "n"}, {"tags"}, {"when"}, {"meta"}},
	Refs:    []string{"ref", "refs"},
}

// itemQuery parses and binds text for Item.
func itemQuery(t testing.TB, inst, text string) *store.Query {
	t.Helper()
	pq, err := arcql.Parse(text, arcql.DefaultLimits())
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	bq, err := arcql.Bind(pq, itemSchema{}, "Item", inst)
	if err != nil {
		t.Fatalf("Bind(%q): %v", text, err)
	}
	return &store.Query{Type: "Item", Filter: bq.Filter, Sort: bq.Sort}
}

// mustFind runs q through the planner, failing the test on an error.
func mustFind(t testing.TB, s *Store, inst string, q *store.Query) ([]*store.Record, planInfo) {
	t.Helper()
	recs, info, err := s.find(context.Background(), inst, q)
	if err != nil {
		t.Fatal(err)
	}
	return recs, info
}

var base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// itemID is the id of item i: ids sort in i order.
func itemID(i int) string { return fmt.Sprintf("i%05d", i) }

// loadItems writes n items: price i%100, cat c(i%10), title t(i) (unique),
// tags [g(i%7)], when a DateTime string, meta a list for every 50th item,
// ref to the previous item, refs to the two before.
func loadItems(t testing.TB, s *Store, inst string, n int) {
	t.Helper()
	ctx := context.Background()
	if err := s.Declare(ctx, inst, []store.TypeSpec{itemSpec}); err != nil {
		t.Fatal(err)
	}
	var ops []store.Op
	flush := func() {
		if _, err := s.Write(ctx, inst, ops, store.Quota{}); err != nil {
			t.Fatal(err)
		}
		ops = ops[:0]
	}
	for i := range n {
		set := map[string]any{
			"n":     int64(i),
			"price": float64(i % 100),
			"cat":   fmt.Sprintf("c%d", i%10),
			"title": fmt.Sprintf("t%05d", i),
			"tags":  []any{fmt.Sprintf("g%d", i%7)},
			"when":  base.Add(time.Duration(i) * time.Hour).Format(time.RFC3339),
			"meta":  fmt.Sprintf("m%d", i%3),
		}
		if i%50 == 0 {
			set["meta"] = []any{"x", "y"}
		}
		if i > 0 {
			set["ref"] = itemID(i - 1)
		}
		if i > 1 {
			set["refs"] = []any{itemID(i - 1), itemID(i - 2)}
		}
		ops = append(ops, store.Op{Kind: store.OpUpsert, Type: "Item", ID: itemID(i), Set: set, Now: base})
		if len(ops) == 500 {
			flush()
		}
	}
	if len(ops) > 0 {
		flush()
	}
}

func TestPlans(t *testing.T) {
	s := openTemp(t, testConfig())
	const inst, n = "plans", 2000
	loadItems(t, s, inst, n)
	tests := []struct {
		text      string
		limit     int
		kind      planKind
		index     string
		found     int
		maxLoaded int
	}{
		{"core.id = 'i00042'", 0, planIDs, "", 1, 1},
		{"core.id = 'i00042' OR core.id = 'i00043'", 0, planMerge, "", 2, 2},
		// An OR whose every term has an index: streams merged in id order
		// (no SORT), or their union collected and sorted.
		{"cat = 'c3' OR title = 't00042'", 5, planMerge, "", 5, 5},
		{"cat = 'c3' OR title = 't00042'", 0, planMerge, "", 201, 201},
		{"cat = 'c3' OR ref IN ['i00100', 'i00200']", 0, planCollect, "", 291, 291},
		{"cat = 'c3' OR title = 't00042' SORT n DESC", 5, planCollect, "", 5, 201},
		{"cat = 'c3' OR n = 5", 5, planScan, "", 5, 34},
		{"title = 't00042'", 0, planEqStream, "title", 1, 1},
		{"cat = 'c3'", 0, planEqStream, "cat", 200, 200},
		{"cat = 'c3'", 5, planEqStream, "cat", 5, 5},
		{"cat = 'c3' AND n = 13", 0, planEqStream, "cat,n", 1, 1},
		{"cat = 'c3' AND n > 1000", 0, planCollect, "cat,n", 100, 100},
		{"cat = 'c3' AND n >= 1003 AND n < 1013", 0, planCollect, "cat,n", 1, 1},
		{"cat = 'c3' AND n IN (1003, 1023]", 0, planCollect, "cat,n", 2, 2},
		{"refs = 'i00100'", 0, planEqStream, "refs", 2, 2},
		{"ref = 'i00100'", 0, planEqStream, "ref", 1, 1},
		{"tags = 'g3'", 3, planEqStream, "tags", 3, 3},
		{"price > 50", 25, planScan, "", 25, 76},
		{"price >= 99", 25, planCollect, "price", 20, 20},
		{"price > 50", 0, planCollect, "price", 980, 980},
		{"price IN [10, 12)", 0, planCollect, "price", 40, 40},
		{"title ^ 't001'", 0, planCollect, "title", 100, 100},
		{"* SORT price DESC", 25, planSortScan, "price", 25, 40},
		{"* SORT price", 25, planSortScan, "price", 25, 40},
		{"price > 50 SORT price DESC", 25, planSortScan, "price", 25, 40},
		{"price < 10 SORT price DESC", 25, planSortScan, "price", 25, 40},
		{"price < 10 SORT price", 25, planSortScan, "price", 25, 40},
		{"cat = 'c3' SORT price DESC", 5, planSortScan, "price", 5, 200},
		{"cat = 'c3' SORT n DESC", 5, planCollect, "cat", 5, 200},
		{"n = 5", 0, planScan, "", 1, n},
		{"n = 5", 1, planScan, "", 1, 6},
		{"* SORT n DESC", 25, planScanSort, "", 25, n},
		// A DateTime field holds strings: a timestamp literal may match
		// strings the index orders differently, so it is not used.
		{"when >= '2026-01-02T00:00:00Z'", 0, planScan, "", n - 24, n},
		// meta held lists: usable for equality, not for sorting.
		{"meta = 'x'", 0, planEqStream, "meta", 40, 40},
		{"meta = 'm1' SORT meta", 5, planCollect, "meta", 5, n / 3},
		{"price = 5 AND price = 6", 0, planEqStream, "price", 0, 20},
		{"NOT price = 5", 10, planScan, "", 10, 11},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s limit %d", tt.text, tt.limit), func(t *testing.T) {
			q := itemQuery(t, inst, tt.text)
			q.Limit = tt.limit
			recs, info := mustFind(t, s, inst, q)
			if info.Kind != tt.kind || info.Index != tt.index {
				t.Errorf("plan %s on %q, want %s on %q", info.Kind, info.Index, tt.kind, tt.index)
			}
			if len(recs) != tt.found {
				t.Errorf("found %d records, want %d", len(recs), tt.found)
			}
			if info.Loaded > tt.maxLoaded {
				t.Errorf("decoded %d records, want at most %d (%+v)", info.Loaded, tt.maxLoaded, info)
			}
		})
	}
}

// TestIndexedEqualityDoesNotScan is the promise of DESIGN.md: an indexed
// filter reads only its matches, however many records there are.
func TestIndexedEqualityDoesNotScan(t *testing.T) {
	s := openTemp(t, testConfig())
	loadItems(t, s, "x", 3000)
	q := itemQuery(t, "x", "title = 't02999'")
	recs, info := mustFind(t, s, "x", q)
	if len(recs) != 1 || info.Loaded != 1 || info.Keys != 1 {
		t.Errorf("found %d, decoded %d records and read %d index keys; want 1, 1, 1", len(recs), info.Loaded, info.Keys)
	}
}

func TestIDOrderPlans(t *testing.T) {
	s := openTemp(t, testConfig())
	const inst = "ids"
	loadItems(t, s, inst, 500)
	tests := []struct {
		text   string
		limit  int
		after  string
		kind   planKind
		want   []string
		loaded int
	}{
		{"* SORT core.id DESC", 3, "", planScan, []string{itemID(499), itemID(498), itemID(497)}, 3},
		{"* SORT core.id DESC", 2, itemID(10), planScan, []string{itemID(9), itemID(8)}, 3},
		{"* SORT core.id", 2, itemID(10), planScan, []string{itemID(11), itemID(12)}, 3},
		{"cat = 'c3' SORT core.id DESC", 2, "", planEqStream, []string{itemID(493), itemID(483)}, 2},
		{"cat = 'c3' SORT core.id DESC", 2, itemID(483), planEqStream, []string{itemID(473), itemID(463)}, 2},
		{"price >= 99 SORT core.id DESC", 2, "", planCollect, []string{itemID(499), itemID(399)}, 2},
		{"price = 7 SORT core.id DESC, price", 1, "", planEqStream, []string{itemID(407)}, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s after %q", tt.text, tt.after), func(t *testing.T) {
			q := itemQuery(t, inst, tt.text)
			q.Limit, q.After = tt.limit, tt.after
			recs, info := mustFind(t, s, inst, q)
			if info.Kind != tt.kind {
				t.Errorf("plan %+v, want %s", info, tt.kind)
			}
			if d := cmp.Diff(tt.want, ids(recs)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if info.Loaded > tt.loaded {
				t.Errorf("decoded %d records, want at most %d", info.Loaded, tt.loaded)
			}
		})
	}
}

// TestPlanHint checks that a candidate whose count overflowed is not
// counted again for a second: the same query then reads no index entry,
// plans the same scan and finds the same records; an hour later (the
// hint expired) it counts again.
func TestPlanHint(t *testing.T) {
	s := openTemp(t, testConfig())
	const inst = "hints"
	loadItems(t, s, inst, 2000)
	run := func() ([]string, planInfo) {
		t.Helper()
		q := itemQuery(t, inst, "price > 50")
		q.Limit = 25
		recs, info := mustFind(t, s, inst, q)
		return ids(recs), info
	}
	first, info1 := run()
	if info1.Kind != planScan || info1.Keys == 0 {
		t.Fatalf("first run: plan %s after %d index keys; want a scan after counting", info1.Kind, info1.Keys)
	}
	second, info2 := run()
	if info2.Kind != planScan || info2.Keys != 0 {
		t.Errorf("second run: plan %s after %d index keys; want the scan at once", info2.Kind, info2.Keys)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("records (-first +second):\n%s", diff)
	}
	for k, at := range s.hints.m {
		s.hints.m[k] = at.Add(-time.Hour)
	}
	if _, info3 := run(); info3.Keys == 0 {
		t.Error("after the hint expired: no index key read; want the count again")
	}
}
