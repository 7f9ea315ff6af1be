package arcql

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// values is a Valuer over a plain map.
type values map[string]any

func (v values) Value(name string) (any, bool) {
	x, ok := v[name]
	return x, ok
}

func TestMatchNodes(t *testing.T) {
	t.Parallel()
	r := values{
		"core.id":  "A1",
		"ref":      "B1",
		"refs":     []any{"B2", "B3"},
		"strs":     []string{"x", "y"},
		"obj":      map[string]any{"ref": "B9", "deep": map[string]any{"n": int32(7)}},
		"u":        uint64(math.MaxUint64),
		"big":      int64(1<<53 + 1),
		"nested":   []any{[]any{"in"}, "out"},
		"nothing":  nil,
		"f32":      float32(1.5),
		"when":     time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		"whenText": "2026-01-01T00:00:00Z",
	}
	cmpEq := func(field string, v Value) *Compare { return &Compare{Path: p(field), Op: OpEq, Value: v} }
	tests := []struct {
		name string
		e    Expr
		want bool
	}{
		{"nil matches", nil, true},
		{"all matches", &All{}, true},
		{"empty and matches", &And{}, true},
		{"empty or does not", &Or{}, false},
		{"unresolved hop never matches", &Hop{Field: "ref", Target: "Book", Sub: &All{}}, false},
		{"not of a hop is not a guess either", &Not{X: &Hop{Field: "ref", Target: "Book", Sub: &All{}}}, true},
		{"in ids single", &InIDs{Field: "ref", IDs: []string{"B0", "B1"}}, true},
		{"in ids single miss", &InIDs{Field: "ref", IDs: []string{"B2"}}, false},
		{"in ids list", &InIDs{Field: "refs", IDs: []string{"B3"}}, true},
		{"in ids core.id", &InIDs{Field: "core.id", IDs: []string{"A1"}}, true},
		{"in ids empty", &InIDs{Field: "core.id", IDs: nil}, false},
		{"in ids in object", &InIDs{Field: "obj.ref", IDs: []string{"B9"}}, true},
		{"in ids missing field", &InIDs{Field: "nope", IDs: []string{"B9"}}, false},
		{"unbound metadata path", &Compare{Path: p("core", "id"), Op: OpEq, Value: str("A1")}, true},
		{"string slice", cmpEq("strs", str("y")), true},
		{"nested lists", cmpEq("nested", str("in")), true},
		{"int32 deep", &Compare{Path: p("obj", "deep", "n"), Op: OpGe, Value: num("", 7)}, true},
		{"uint64 beyond int64", &Compare{Path: p("u"), Op: OpGt, Value: num("", math.MaxInt64)}, true},
		{"int64 beyond 2^53 exact", cmpEq("big", num("", 1<<53)), false},
		{"int64 beyond 2^53 ordered", &Compare{Path: p("big"), Op: OpGt, Value: num("", 1<<53)}, true},
		{"float32", cmpEq("f32", num("", 1.5)), true},
		{"null never ordered", &Compare{Path: p("nothing"), Op: OpLe, Value: num("", 1)}, false},
		{"null not existing", &Exist{Path: p("nothing")}, false},
		{"eq null on null", cmpEq("nothing", Value{Kind: KindNull}), true},
		{"ne null on null", &Compare{Path: p("nothing"), Op: OpNe, Value: Value{Kind: KindNull}}, false},
		{"ordered null literal", &Compare{Path: p("ref"), Op: OpLt, Value: Value{Kind: KindNull}}, false},
		{"kinds never mix", cmpEq("ref", num("", 1)), false},
		{"time vs time", &Compare{Path: p("when"), Op: OpGe, Value: Value{Kind: KindTime, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}}, true},
		{"time vs unbound string", &Compare{Path: p("when"), Op: OpLt, Value: str("2026-01-01T00:00:01Z")}, true},
		{"time text vs time", cmpEq("whenText", Value{Kind: KindTime, Time: time.Date(2026, 1, 1, 1, 0, 0, 0, time.FixedZone("", 3600))}), true},
		{"time text", &Compare{Path: p("when"), Op: OpPrefix, Value: str("2026-01-01T00")}, true},
		{"words no words", &Compare{Path: p("ref"), Op: OpWords, Value: str("..")}, false},
		{"words need a string", &Compare{Path: p("ref"), Op: OpWords, Value: num("", 1)}, false},
		{"prefix on bool", &Compare{Path: p("nothing"), Op: OpPrefix, Value: str("")}, false},
		{"range on strings", &Range{Path: p("ref"), Lo: str("B"), Hi: str("B1"), LoIncl: false, HiIncl: true}, true},
		{"range never on kinds that differ", &Range{Path: p("ref"), Lo: num("", 0), Hi: str("Z")}, false},
		{"op out of range", &Compare{Path: p("ref"), Op: Op(99), Value: str("B1")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Match(tt.e, r); got != tt.want {
				t.Errorf("Match(%s) = %v, want %v", Format(tt.e), got, tt.want)
			}
		})
	}
}

func TestWildcard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything", true},
		{"?", "", false},
		{"?", "é", true},
		{"??", "é", false},
		{"a*", "abc", true},
		{"*c", "abc", true},
		{"a*c", "abbbc", true},
		{"a*c", "abcd", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"*b*", "abc", true},
		{"**", "x", true},
		{"*a*b", "xaxxab", true},
		{"*a*b", "xaxxa", false},
		{"a*b*c", "aXbYbZc", true},
		{"日*語", "日本語", true},
		{"日?語", "日本語", true},
		{"P*", "Pérez", true},
		{"p*", "Pérez", false},
		{"[a]", "[a]", true},
		{".*", "ab", false},
		{"*?", "", false},
		{"*?", "é", true},
		{"a\xffb", "a\xffb", true},
		{"?", "\xff", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"~"+tt.s, func(t *testing.T) {
			t.Parallel()
			if got := wildcard(tt.pattern, tt.s); got != tt.want {
				t.Errorf("wildcard(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
			}
		})
	}
}

// TestWildcardNoBlowUp runs the pattern that makes a backtracking matcher
// exponential (about 10^23 steps here: it would never answer); the
// remembered-star matcher answers it in quadratic time at worst. The bound
// only names the failure, and is generous (a minute) so that load never
// trips it.
func TestWildcardNoBlowUp(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("a", 1024)
	pattern := strings.Repeat("*a", 10) + "*b"
	start := time.Now()
	if wildcard(pattern, s) {
		t.Fatal("matched")
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("took %v", d)
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text, query string
		want        bool
	}{
		{"Sudha Murty", "sudha", true},
		{"Sudha Murty", "murty SUDHA", true},
		{"Sudha Murty", "sudha x", false},
		{"Sudha Murty", "sud", false},
		{"well-known", "known", true},
		{"ÉCOLE normale", "école", true},
		{"naïve", "nai\u0308ve", false}, // precomposed and decomposed are different words
		{"nai\u0308ve café", "NAI\u0308VE", true},
		{"Straße", "STRASSE", false}, // simple case folding only
		{"x2 y3", "2", false},
		{"v1.2", "1", false},
		{"v1.2", "V1 2", true},
		{"日本語 テキスト", "テキスト", true},
		{"", "a", false},
		{"abc", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.text+"~"+tt.query, func(t *testing.T) {
			t.Parallel()
			if got := hasWords(tt.text, tt.query); got != tt.want {
				t.Errorf("hasWords(%q, %q) = %v, want %v", tt.text, tt.query, got, tt.want)
			}
		})
	}
}

func TestCompareValues(t *testing.T) {
	t.Parallel()
	t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Each value sorts strictly before the next.
	ordered := []any{
		nil,
		false, true,
		math.NaN(), math.Inf(-1), int64(math.MinInt64), -1.5, int8(-1), 0, uint8(1), 1.5, float32(2), int64(1 << 53), int64(1<<53 + 1), uint64(math.MaxUint64), math.Inf(1),
		"", "A", "B", "a", "é",
		t1, t1.Add(time.Nanosecond),
		[]any{}, []any{1}, []any{1, "a"}, []any{2},
		map[string]any{}, map[string]any{"a": 1}, map[string]any{"a": 2}, map[string]any{"a": 2, "b": 0}, map[string]any{"b": 0},
		struct{}{},
	}
	for i, x := range ordered {
		for j, y := range ordered {
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got := CompareValues(x, y); got != want {
				t.Errorf("CompareValues(%#v, %#v) = %d, want %d", x, y, got, want)
			}
		}
	}
	equal := [][2]any{
		{1, 1.0}, {int64(5), float32(5)}, {uint(3), int8(3)}, {0.0, math.Copysign(0, -1)},
		{t1, t1.In(time.FixedZone("", 3600))}, {struct{}{}, 1i},
	}
	for _, pair := range equal {
		if got := CompareValues(pair[0], pair[1]); got != 0 {
			t.Errorf("CompareValues(%#v, %#v) = %d, want 0", pair[0], pair[1], got)
		}
	}
}

func TestCompareSort(t *testing.T) {
	t.Parallel()
	recs := []values{
		{"core.id": "r5", "n": 2, "s": "b"},
		{"core.id": "r1", "n": 1.0, "s": "b"},
		{"core.id": "r4", "n": nil, "s": "a"},
		{"core.id": "r3", "s": "a", "l": []any{}},
		{"core.id": "r2", "n": int64(2), "s": "a", "o": map[string]any{"x": 1}},
	}
	ids := func(keys []SortKey) []string {
		sorted := append([]values(nil), recs...)
		// Insertion sort: CompareSort must order by itself, whatever the
		// algorithm.
		for i := 1; i < len(sorted); i++ {
			for j := i; j > 0 && CompareSort(keys, sorted[j-1], sorted[j]) > 0; j-- {
				sorted[j-1], sorted[j] = sorted[j], sorted[j-1]
			}
		}
		out := []string{}
		for _, r := range sorted {
			out = append(out, r["core.id"].(string))
		}
		return out
	}
	tests := []struct {
		name string
		keys []SortKey
		want []string
	}{
		{"no keys: by id", nil, []string{"r1", "r2", "r3", "r4", "r5"}},
		{"asc: missing and null first, ties by id", []SortKey{{Path: p("n")}}, []string{"r3", "r4", "r1", "r2", "r5"}},
		{"desc: missing and null last, ties by id", []SortKey{{Path: p("n"), Desc: true}}, []string{"r2", "r5", "r1", "r3", "r4"}},
		{"two keys", []SortKey{{Path: p("s"), Desc: true}, {Path: p("n")}}, []string{"r1", "r5", "r3", "r4", "r2"}},
		{"empty list is missing", []SortKey{{Path: p("l")}, {Path: p("s")}, {Path: p("n")}}, []string{"r3", "r4", "r2", "r1", "r5"}},
		{"object path", []SortKey{{Path: p("o", "x"), Desc: true}}, []string{"r2", "r1", "r3", "r4", "r5"}},
		{"path into a scalar is missing", []SortKey{{Path: p("s", "x")}}, []string{"r1", "r2", "r3", "r4", "r5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, ids(tt.keys)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func BenchmarkMatch(b *testing.B) {
	q, err := Parse("(price <= 5.99 AND title != 'Alchemist') OR title ~ 'wise otherwise' OR title * 'W*se*' OR price IN (50, 70] OR core.created >= '2026-03-01T00:00:00Z'", DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	bound, err := Bind(q, schema, "Book", testInstance)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range books {
			Match(bound.Filter, r)
		}
	}
}

// TestMatchAllocations pins down that evaluating the usual comparisons
// allocates nothing, since a store's scan calls Match for every record.
func TestMatchAllocations(t *testing.T) {
	r := values{
		"core.id": "A1", "title": "Wise and Otherwise", "price": 5.99, "n": int64(3),
		"tags": []any{"x", "y"}, "obj": map[string]any{"k": "v"}, "when": "2026-01-01T00:00:00Z",
	}
	jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	exprs := []Expr{
		&And{Terms: []Expr{
			&Compare{Path: p("title"), Op: OpNe, Value: str("Alchemist")},
			&Compare{Path: p("price"), Op: OpLe, Value: num("", 6)},
			&Compare{Path: p("n"), Op: OpEq, Value: num("", 3)},
		}},
		&Compare{Path: p("title"), Op: OpWords, Value: str("otherwise WISE")},
		&Compare{Path: p("title"), Op: OpPrefix, Value: str("Wise")},
		&Compare{Path: p("title"), Op: OpWildcard, Value: str("W*e")},
		&Compare{Path: p("tags"), Op: OpEq, Value: str("y")},
		&Compare{Path: p("obj", "k"), Op: OpEq, Value: str("v")},
		&Compare{Path: p("when"), Op: OpGe, Value: Value{Kind: KindTime, Time: jan}},
		&Range{Path: p("price"), Lo: num("", 5), Hi: num("", 6), LoIncl: true},
		&Not{X: &Exist{Path: p("nope")}},
		&InIDs{Field: "core.id", IDs: []string{"A0", "A1"}},
	}
	for _, e := range exprs {
		if n := testing.AllocsPerRun(100, func() { Match(e, r) }); n != 0 {
			t.Errorf("Match(%s) allocates %v times", Format(e), n)
		}
		if !Match(e, r) {
			t.Errorf("Match(%s) = false", Format(e))
		}
	}
}

func TestNewInIDsMatchesAsTheList(t *testing.T) {
	var ids []string
	for i := range 40 {
		ids = append(ids, fmt.Sprintf("r%02d", i*2))
	}
	long := NewInIDs("core.id", ids)
	plain := &InIDs{Field: "core.id", IDs: ids}
	for i := range 82 {
		rec := values{"core.id": fmt.Sprintf("r%02d", i)}
		if Match(long, rec) != Match(plain, rec) || Match(long, rec) != (i%2 == 0 && i < 80) {
			t.Errorf("r%02d: set %v, list %v", i, Match(long, rec), Match(plain, rec))
		}
	}
}
