package rest

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/errcode"
)

// coerceTypes are the argument types FuzzCoerce coerces to, taken from
// testdata/rest/schema.graphql.
func coerceTypes(t testing.TB, a *API) []graphql.Input {
	t.Helper()
	search, ok := a.field(rootQuery, "search")
	find, ok2 := a.field(rootQuery, "find")
	if !ok || !ok2 {
		t.Fatal("the test schema lacks search or find")
	}
	var out []graphql.Input
	for _, f := range []*rootField{search, find} {
		for _, arg := range f.args {
			out = append(out, arg.typ)
		}
	}
	return out
}

// FuzzCoerce coerces arbitrary query-string values to every kind of
// argument type. It must not panic; a failure is BAD_REQUEST or
// UNKNOWN_TYPE naming the parameter; a success is a JSON value of the
// type, and a String or ID is the value itself, whatever it holds.
func FuzzCoerce(f *testing.F) {
	a, _ := testAPI(f)
	types := coerceTypes(f, a)
	for _, v := range append([]string{"", "0", "-1", "2147483647", "2147483648", "1.5", "-1e3", "1e400", "NaN", "0x10", "true", "True",
		"POEM", "Book", `{"min": 1}`, `{"min": 1, "min": 2}`, `[1]`, "null", "2026-01-02T15:04:05Z", "\xff", "a\x00b"}, hostile...) {
		for i := range types {
			f.Add(uint8(i), v, uint8(1))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, v string, times uint8) {
		typ := types[int(which)%len(types)]
		n := int(times%3) + 1
		vals := make([]string, n)
		for i := range vals {
			vals[i] = v
		}
		out, err := coerce("p", vals, typ)
		if err != nil {
			var ce *errcode.Error
			if !errors.As(err, &ce) || (ce.Code != errcode.BadRequest && ce.Code != errcode.UnknownType) || !strings.Contains(ce.Message, "parameter p") {
				t.Fatalf("coerce(%q as %s): error %v is not a coded error naming the parameter", v, typ, err)
			}
			return
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("coerce(%q as %s) = %#v, not JSON: %v", v, typ, out, err)
		}
		base := named(typ)
		if _, isList := stripNonNull(typ).(*graphql.List); isList {
			l, ok := out.([]any)
			if !ok || len(l) != n {
				t.Fatalf("coerce(%q ×%d as %s) = %#v, want a list of %d", v, n, typ, out, n)
			}
			out = l[0]
		} else if n != 1 {
			t.Fatalf("coerce(%q ×%d as %s) took several values for one", v, n, typ)
		}
		switch base.Name() {
		case "String", "ID", "DateTime", "Email":
			if out != v {
				t.Fatalf("coerce(%q as %s) = %#v, want the value itself", v, typ, out)
			}
		case "Int":
			x, ok := out.(float64)
			i, err := strconv.ParseInt(v, 10, 32)
			if !ok || err != nil || x != float64(i) {
				t.Fatalf("coerce(%q as Int) = %#v", v, out)
			}
		case "Float":
			x, ok := out.(float64)
			if !ok || math.IsInf(x, 0) || math.IsNaN(x) {
				t.Fatalf("coerce(%q as Float) = %#v", v, out)
			}
		case "Boolean":
			if out != (v == "true") || (v != "true" && v != "false") {
				t.Fatalf("coerce(%q as Boolean) = %#v", v, out)
			}
		}
		if e, ok := base.(*graphql.Enum); ok {
			found := false
			for _, ev := range e.Values() {
				found = found || ev.Name == out
			}
			if !found {
				t.Fatalf("coerce(%q as %s) = %#v, not a value of the enum", v, typ, out)
			}
		}
		if _, ok := base.(*graphql.InputObject); ok {
			if _, isObject := out.(map[string]any); !isObject {
				t.Fatalf("coerce(%q as %s) = %#v, not an object", v, typ, out)
			}
		}
	})
}

func stripNonNull(t graphql.Type) graphql.Type {
	if nn, ok := t.(*graphql.NonNull); ok {
		return nn.OfType
	}
	return t
}

// FuzzRewrite rewrites arbitrary requests. It must not panic; a failure
// is a client error with a code; a success is a document valid on the
// schema that declares exactly the variables set, and whose text does
// not change when every String and ID value of the request (query
// string, path identifier, body) is replaced: values reach GraphQL only
// as variables.
func FuzzRewrite(f *testing.F) {
	a, s := testAPI(f)
	methods := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete}
	for _, tc := range rewriteCases() {
		path, query, _ := strings.Cut(tc.target, "?")
		for i, m := range methods {
			if m == tc.method {
				f.Add(uint8(i), path, query, []byte(tc.body))
			}
		}
	}
	f.Fuzz(func(t *testing.T, method uint8, path, query string, body []byte) {
		m := methods[int(method)%len(methods)]
		r, err := parseRequest(m, path+"?"+query, string(body))
		if err == nil {
			var p Plan
			if p, err = Rewrite(a, r); err == nil {
				checkPlan(t, s, p)
				q, err := Rewrite(a, scrub(a, r))
				if err != nil {
					t.Fatalf("%s %s?%s: the request with other values fails: %v", m, path, query, err)
				}
				if q.GraphQL.Query != p.GraphQL.Query {
					t.Fatalf("%s %s?%s: the values changed the document:\n%s\n%s", m, path, query, p.GraphQL.Query, q.GraphQL.Query)
				}
				return
			}
		}
		var ce *errcode.Error
		if !errors.As(err, &ce) || ce.Code.Status() < 400 || ce.Code.Status() >= 500 {
			t.Fatalf("%s %s?%s: error %v is no coded client error", m, path, query, err)
		}
	})
}

// scrub returns r with every String and ID value replaced by "x" (the
// record type, which selects the document, is kept).
func scrub(a *API, r Request) Request {
	var f *rootField
	switch {
	case r.Route == RouteType || r.Route == RouteRecord:
		if r.Method == http.MethodDelete {
			f, _ = a.field(rootMutation, "delete")
		} else {
			f, _ = a.field(rootQuery, "find")
		}
	case r.Route == RouteFn:
		f, _ = a.field(r.Root, r.Fn)
	}
	out := r
	if r.ID != "" {
		out.ID = "x"
	}
	out.Query = map[string][]string{}
	for name, vals := range r.Query {
		out.Query[name] = vals
		if f == nil {
			continue
		}
		if arg, ok := f.arg(name); ok && (named(arg.typ).Name() == "String" || named(arg.typ).Name() == "ID") && name != "arcql" {
			out.Query[name] = replaceAll(vals)
		} else if ok && name == "arcql" && strings.TrimSpace(vals[0]) != "" {
			out.Query[name] = replaceAll(vals)
		}
	}
	if r.Body != nil {
		out.Body = scrubJSON(r.Body, true).(map[string]any)
	}
	return out
}

func replaceAll(vals []string) []string {
	out := make([]string, len(vals))
	for i := range out {
		out[i] = "x"
	}
	return out
}

// scrubJSON replaces the strings of a decoded body, but the top-level
// type (a record type, which selects the document).
func scrubJSON(v any, top bool) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if top && k == "type" {
				out[k] = x
				continue
			}
			out[k] = scrubJSON(x, false)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = scrubJSON(x, false)
		}
		return out
	case string:
		return "x"
	}
	return v
}
