package mongo

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/corehq/core/store/arcql"
)

// compilerOperators are the only operators the filter compiler writes:
// none runs code on the server.
var compilerOperators = map[string]bool{
	"$and": true, "$or": true, "$nor": true, "$in": true, "$nin": true, "$gt": true, "$gte": true, "$lt": true, "$lte": true,
	"$exists": true, "$type": true, "$regex": true, "$options": true, "$elemMatch": true, "$ne": true, "$eq": true, "$not": true,
}

// TestFiltersRunNoServerCode compiles a corpus of filters — the golden
// cases and hostile ones whose values are operator names, JavaScript and
// JSON operator objects — and walks every key of every MongoDB filter
// and sort built: none is $where, $function, $expr or $accumulator (the
// operators that run code or expressions on the server), every operator
// is one the compiler writes, and the hostile text stays inside values.
// MongoDB's own javascriptEnabled setting cannot be read through the
// wire protocol from here; FerretDB, the test server, has no JavaScript
// at all.
//
// hostile checklist 24: MongoDB never sees an operator the user chose;
// no $where, $function, $expr.
func TestFiltersRunNoServerCode(t *testing.T) {
	t.Parallel()
	cases := append([]struct{ typ, query string }{}, goldenCases...)
	for _, v := range []string{"$where", "$function", "$expr", "$accumulator", "sleep(1000) || true", `{"$where": "1"}`,
		`{"$expr": {"$gt": ["$price", 0]}}`, "function() { return true }", "this.price > 0 $", "f.title", "a.b.$c"} {
		q := arcql.Quote(v)
		cases = append(cases,
			struct{ typ, query string }{"Book", "title = " + q},
			struct{ typ, query string }{"Book", "title != " + q + " OR title ~ " + q},
			struct{ typ, query string }{"Book", "title ^ " + q},
			struct{ typ, query string }{"Book", "title * " + q},
			struct{ typ, query string }{"Book", "tags = " + q + " AND NOT title IN (" + q + ", 'x')"},
			struct{ typ, query string }{"Book", "meta = " + q},
			struct{ typ, query string }{"Author", "booklist.title = " + q + " SORT name"},
		)
	}
	walked := 0
	for _, c := range cases {
		p := planOf(t, c.typ, c.query)
		for _, d := range []bson.D{p.filter, p.sort} {
			walkKeys(d, func(k string) {
				walked++
				if strings.HasPrefix(k, "$") && !compilerOperators[k] {
					t.Errorf("%s: the filter holds the key %q, not an operator of the compiler: %v", c.query, k, p.filter)
				}
				switch k {
				case "$where", "$function", "$expr", "$accumulator":
					t.Errorf("%s: the filter holds %s", c.query, k)
				}
				if strings.Contains(k, "sleep") || strings.Contains(k, "function") || strings.Contains(k, "this.") {
					t.Errorf("%s: value text became a key %q", c.query, k)
				}
			})
		}
	}
	if walked < 500 {
		t.Errorf("walked %d keys, want the whole corpus", walked)
	}
}

// walkKeys calls f with every key of v, at any depth.
func walkKeys(v any, f func(string)) {
	switch v := v.(type) {
	case bson.D:
		for _, e := range v {
			f(e.Key)
			walkKeys(e.Value, f)
		}
	case bson.M:
		for k, e := range v {
			f(k)
			walkKeys(e, f)
		}
	case []any:
		for _, e := range v {
			walkKeys(e, f)
		}
	case []bson.D:
		for _, e := range v {
			walkKeys(e, f)
		}
	case bson.A:
		for _, e := range v {
			walkKeys(e, f)
		}
	}
}
