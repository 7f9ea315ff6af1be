package arcql

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBind(t *testing.T) {
	t.Parallel()
	jan1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tm := func(t time.Time, s string) Value { return Value{Kind: KindTime, Time: t, Str: s} }
	tests := []struct {
		name  string
		typ   string
		query string
		want  *Query
	}{
		{"metadata is one part", "Book", "core.id = 'B1' SORT core.created DESC",
			&Query{Filter: cmpr(p("core.id"), OpEq, str("B1")), Sort: []SortKey{{Path: p("core.created"), Desc: true}}}},
		{"metadata time", "Book", "core.created >= '2026-01-01T01:00:00+01:00'",
			&Query{Filter: cmpr(p("core.created"), OpGe, tm(jan1, "2026-01-01T00:00:00Z"))}},
		{"metadata defaults when the schema is silent", "Account", "core.updated < '2026-01-01'",
			&Query{Filter: cmpr(p("core.updated"), OpLt, tm(jan1, "2026-01-01T00:00:00Z"))}},
		{"datetime field canonical", "Book", "published = '2026-01-01T00:00:00.500+00:00'",
			&Query{Filter: cmpr(p("published"), OpEq, tm(jan1.Add(500*time.Millisecond), "2026-01-01T00:00:00.5Z"))}},
		{"datetime text ops keep the string", "Book", "published ^ '2026'",
			&Query{Filter: cmpr(p("published"), OpPrefix, str("2026"))}},
		{"number to string field keeps its text", "Book", "title = 5.0",
			&Query{Filter: cmpr(p("title"), OpEq, str("5.0"))}},
		{"quoted number to int field", "Book", "authorid = '2'",
			&Query{Filter: cmpr(p("authorid"), OpEq, num("2", 2))}},
		{"quoted bool", "Author", "active = 'TRUE'",
			&Query{Filter: cmpr(p("active"), OpEq, Value{Kind: KindBool, Bool: true})}},
		{"number prefix on a number field", "Book", "price ^ 12",
			&Query{Filter: cmpr(p("price"), OpPrefix, str("12"))}},
		{"eq null", "Author", "age = null", &Query{Filter: &Not{X: &Exist{Path: p("age")}}}},
		{"ne null", "Author", "age != null", &Query{Filter: &Exist{Path: p("age")}}},
		{"object path", "Author", "address.zip = '1'", &Query{Filter: cmpr(p("address", "zip"), OpEq, num("1", 1))}},
		{"json path untyped", "Author", "data.a.b = '1' AND data.c IN [1, 'x']",
			&Query{Filter: &And{Terms: []Expr{
				cmpr(p("data", "a", "b"), OpEq, str("1")),
				&Range{Path: p("data", "c"), Lo: num("1", 1), Hi: str("x"), LoIncl: true, HiIncl: true},
			}}}},
		{"ref compared by id", "Author", "bestbook = 7", &Query{Filter: cmpr(p("bestbook"), OpEq, str("7"))}},
		{"hop", "Author", "bestbook.title = 'Inferno'",
			&Query{Filter: &Hop{Field: "bestbook", Target: "Book", Sub: cmpr(p("title"), OpEq, str("Inferno"))}}},
		{"list hop", "Author", "booklist.price > '10'",
			&Query{Filter: &Hop{Field: "booklist", List: true, Target: "Book", Sub: cmpr(p("price"), OpGt, num("10", 10))}}},
		{"hop to metadata", "Author", "bestbook.core.id = 'B1'",
			&Query{Filter: &Hop{Field: "bestbook", Target: "Book", Sub: cmpr(p("core.id"), OpEq, str("B1"))}}},
		{"two hops nest", "Author", "bestbook.author.age IN [1, 2)",
			&Query{Filter: &Hop{Field: "bestbook", Target: "Book", Sub: &Hop{Field: "author", Target: "Author",
				Sub: &Range{Path: p("age"), Lo: num("1", 1), Hi: num("2", 2), LoIncl: true}}}}},
		{"hop through a list of objects", "Author", "homes.owner.name = 'x'",
			&Query{Filter: &Hop{Field: "homes.owner", List: true, Target: "Author", Sub: cmpr(p("name"), OpEq, str("x"))}}},
		{"hop ne is not over the hop", "Author", "booklist.title != 'x'",
			&Query{Filter: &Not{X: &Hop{Field: "booklist", List: true, Target: "Book", Sub: cmpr(p("title"), OpEq, str("x"))}}}},
		{"hop eq null is not exist over the hop", "Author", "bestbook.title = null",
			&Query{Filter: &Not{X: &Hop{Field: "bestbook", Target: "Book", Sub: &Exist{Path: p("title")}}}}},
		{"hop exist", "Author", "EXIST bestbook.title",
			&Query{Filter: &Hop{Field: "bestbook", Target: "Book", Sub: &Exist{Path: p("title")}}}},
		{"instanceId folds to all", "Book", "core.instanceId = 'inst1'", &Query{}},
		{"instanceId folds to never", "Book", "core.instanceId = 'x'", &Query{Filter: Never()}},
		{"instanceId folds in and", "Book", "core.instanceId ^ 'inst' AND title = 'a'",
			&Query{Filter: cmpr(p("title"), OpEq, str("a"))}},
		{"instanceId never in and", "Book", "core.instanceId != 'inst1' AND title = 'a'", &Query{Filter: Never()}},
		{"instanceId never in or", "Book", "core.instanceId IN ['a', 'b'] OR title = 'a'",
			&Query{Filter: cmpr(p("title"), OpEq, str("a"))}},
		{"instanceId all in or", "Book", "NOT EXIST core.instanceId OR EXIST core.instanceId", &Query{}},
		{"instanceId behind a hop", "Author", "bestbook.core.instanceId = 'x'", &Query{Filter: Never()}},
		{"instanceId sort key dropped", "Book", "* SORT core.instanceId, title",
			&Query{Sort: []SortKey{{Path: p("title")}}}},
		{"not folds", "Book", "NOT NOT *", &Query{}},
		{"sort through object and json", "Author", "* SORT address.city DESC, data.x",
			&Query{Sort: []SortKey{{Path: p("address", "city"), Desc: true}, {Path: p("data", "x")}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q, err := Parse(tt.query, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			got, err := Bind(q, schema, tt.typ, testInstance)
			if err != nil {
				t.Fatalf("Bind(%q): %v", tt.query, err)
			}
			if diff := cmp.Diff(tt.want, got, ignorePos); diff != "" {
				t.Errorf("Bind(%q) (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func TestBindKeepsPositionsAndInput(t *testing.T) {
	t.Parallel()
	q, err := Parse("title = 1 OR\n core.id = 'a' SORT core.created", DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	before := q.String()
	b, err := Bind(q, schema, "Book", testInstance)
	if err != nil {
		t.Fatal(err)
	}
	if q.String() != before {
		t.Errorf("Bind changed its input: %q, was %q", q.String(), before)
	}
	or, ok := b.Filter.(*Or)
	if !ok {
		t.Fatalf("filter is %T", b.Filter)
	}
	c, ok := or.Terms[1].(*Compare)
	if !ok {
		t.Fatalf("term is %T", or.Terms[1])
	}
	if want := (Pos{2, 2}); c.Path.Pos != want {
		t.Errorf("path pos = %v, want %v", c.Path.Pos, want)
	}
	if want := (Pos{2, 12}); c.Value.Pos != want {
		t.Errorf("value pos = %v, want %v", c.Value.Pos, want)
	}
	if want := (Pos{2, 21}); b.Sort[0].Path.Pos != want {
		t.Errorf("sort pos = %v, want %v", b.Sort[0].Path.Pos, want)
	}
}

func TestBindErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ   string
		query string
		want  string
	}{
		{"Book", "titel = 'x'", "arcql: 1:1: unknown field Book.titel"},
		{"Book", "price > 1 AND titel = 'x'", "arcql: 1:15: unknown field Book.titel"},
		{"Author", "bestbook.titel = 'x'", "arcql: 1:1: unknown field Book.titel"},
		{"Author", "address.street = 'x'", "arcql: 1:1: unknown field Address.street"},
		{"Book", "title.x = 'x'", "arcql: 1:1: unknown field Book.title.x"},
		{"Book", "core.nope = 'x'", "arcql: 1:1: unknown field Book.core.nope"},
		{"Book", "core.id.x = 'x'", "arcql: 1:1: unknown field Book.core.id.x"},
		{"Book", "core = 'x'", "arcql: 1:1: unknown field Book.core"},
		{"Nope", "a = 1", "arcql: 1:1: unknown field Nope.a"},
		{"Account", "password = 'x'", "arcql: 1:1: field Account.password cannot be filtered"},
		{"Account", "EXIST password", "arcql: 1:7: field Account.password cannot be filtered"},
		{"Account", "password ^ 'a'", "arcql: 1:1: field Account.password cannot be filtered"},
		{"Author", "address.secret = 'x'", "arcql: 1:1: field Address.secret cannot be filtered"},
		{"Book", "author.password = 'x'", "arcql: 1:1: field Author.password cannot be filtered"},
		{"Account", "* SORT password", "arcql: 1:8: field Account.password cannot be sorted on"},
		{"Book", "price = 'abc'", "arcql: 1:9: field Book.price is a Float; 'abc' is not a number"},
		{"Book", "authorid = true", "arcql: 1:12: field Book.authorid is an Int; true is not a number"},
		{"Book", "authorid = ' 2'", "arcql: 1:12: field Book.authorid is an Int; ' 2' is not a number"},
		{"Book", "price IN [1, 'x')", "arcql: 1:14: field Book.price is a Float; 'x' is not a number"},
		{"Book", "title = true", "arcql: 1:9: field Book.title is a String; true is not a string"},
		{"Author", "active = 1", "arcql: 1:10: field Author.active is a Boolean; 1 is not true or false"},
		{"Author", "active = 'yes'", "arcql: 1:10: field Author.active is a Boolean; 'yes' is not true or false"},
		{"Author", "active < true", "arcql: 1:10: field Author.active is a Boolean and has no order: use = or !="},
		{"Book", "core.created > 'yesterday'", "arcql: 1:16: field Book.core.created is a DateTime; 'yesterday' is not an ISO-8601 timestamp such as '2026-01-01T00:00:00Z'"},
		{"Book", "published = '2026-01-01T00:00:00'", "arcql: 1:13: field Book.published is a DateTime; '2026-01-01T00:00:00' is not an ISO-8601 timestamp such as '2026-01-01T00:00:00Z'"},
		{"Book", "published = 2026", "arcql: 1:13: field Book.published is a DateTime; 2026 is not an ISO-8601 timestamp such as '2026-01-01T00:00:00Z'"},
		{"Book", "title < null", "arcql: 1:9: null can only be compared with = or !=, not '<'"},
		{"Book", "title ~ null", "arcql: 1:9: null can only be compared with = or !=, not '~'"},
		{"Book", "title IN [null, 'a']", "arcql: 1:11: a range bound cannot be null"},
		{"Book", "title ~ true", "arcql: 1:9: operator '~' needs a string, found true"},
		{"Book", "title ~ ' ,. '", "arcql: 1:9: operator '~' needs at least one word (letters or digits), found ' ,. '"},
		{"Author", "active ^ 't'", "arcql: 1:10: operator '^' needs a text field; Author.active is a Boolean"},
		{"Author", "address * 'x'", "arcql: 1:11: operator '*' needs a text field; Author.address is an object"},
		{"Author", "address = 'x'", "arcql: 1:11: field Author.address is an object: compare one of its fields, or test it with EXIST"},
		{"Author", "* SORT bestbook.title", "arcql: 1:8: cannot sort on bestbook.title: SORT cannot follow the reference Author.bestbook"},
		{"Author", "* SORT booklist", "arcql: 1:8: cannot sort on booklist: it is a list"},
		{"Author", "* SORT homes.city", "arcql: 1:8: cannot sort on homes.city: it is a list"},
		{"Author", "* SORT address", "arcql: 1:8: field Author.address is an object and cannot be sorted on"},
		{"Author", "* SORT nope", "arcql: 1:8: unknown field Author.nope"},
		{"Author", "NOT (bestbook.author.nope = 1)", "arcql: 1:6: unknown field Author.nope"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			t.Parallel()
			q, err := Parse(tt.query, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			b, err := Bind(q, schema, tt.typ, testInstance)
			if err == nil {
				t.Fatalf("Bind(%q) = %v, want error %q", tt.query, b, tt.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not an *Error", err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Bind(%q) error\n got %s\nwant %s", tt.query, got, tt.want)
			}
		})
	}
}
