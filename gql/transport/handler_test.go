package transport

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
)

func TestReadRequest(t *testing.T) {
	t.Parallel()
	get := func(q url.Values) *http.Request {
		return httptest.NewRequest(http.MethodGet, "/graphql?"+q.Encode(), nil)
	}
	post := func(body string) *http.Request {
		return httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
	}
	capped := post(`{"query": "{ __typename }", "variables": {"pad": "` + strings.Repeat("x", 100) + `"}}`)
	capped.Body = http.MaxBytesReader(httptest.NewRecorder(), capped.Body, 64)
	for _, tc := range []struct {
		name string
		r    *http.Request
		want gql.Request
		code errcode.Code
		msg  string
	}{
		{"a whole request", post(`{"query": "query Q($n: Int) { a }", "operationName": "Q",
			"variables": {"n": 1, "f": 1.5, "s": "x", "l": [1, true], "o": {"z": null}}, "extensions": {"persistedQuery": {"version": 1}}}`),
			gql.Request{Query: "query Q($n: Int) { a }", OperationName: "Q",
				Variables: map[string]any{"n": 1.0, "f": 1.5, "s": "x", "l": []any{1.0, true}, "o": map[string]any{"z": nil}}}, "", ""},
		{"nulls", post(`{"query": "{ a }", "operationName": null, "variables": null}`), gql.Request{Query: "{ a }"}, "", ""},
		{"only a query", post(`{"query": "{ a }"}`), gql.Request{Query: "{ a }"}, "", ""},
		{"an unknown member", post(`{"query": "{ a }", "other": 1}`), gql.Request{Query: "{ a }"}, "", ""},
		{"no query", post(`{"variables": {}}`), gql.Request{}, errcode.BadRequest, "query is required"},
		{"a null query", post(`{"query": null}`), gql.Request{}, errcode.BadRequest, "query is required"},
		{"a query not a string", post(`{"query": 1}`), gql.Request{}, errcode.BadRequest, "query must be a string, not a number"},
		{"an operationName not a string", post(`{"query": "{ a }", "operationName": ["Q"]}`), gql.Request{}, errcode.BadRequest,
			"operationName must be a string or null, not an array"},
		{"variables not an object", post(`{"query": "{ a }", "variables": "{}"}`), gql.Request{}, errcode.BadRequest,
			"variables must be a JSON object, not a string"},
		{"a duplicate key", post(`{"query": "{ a }", "query": "{ b }"}`), gql.Request{}, errcode.BadRequest,
			`the body is not a GraphQL request: duplicate key "query" at byte 19`},
		{"a duplicate key in the variables", post(`{"query": "{ a }", "variables": {"v": 1, "v": 2}}`), gql.Request{}, errcode.BadRequest,
			`duplicate key "v"`},
		{"data after the object", post(`{"query": "{ a }"} {}`), gql.Request{}, errcode.BadRequest,
			"the body is not a GraphQL request: more data after the JSON value at byte 19"},
		{"malformed JSON", post(`{"query": }`), gql.Request{}, errcode.BadRequest,
			"the body is not a GraphQL request: malformed JSON at byte 10: invalid character '}' looking for beginning of value"},
		{"an array", post(`[{"query": "{ a }"}]`), gql.Request{}, errcode.BadRequest,
			"the body is not a GraphQL request: it must be a JSON object, not an array"},
		{"an empty body", post(``), gql.Request{}, errcode.BadRequest, "the body is not a GraphQL request: no JSON value"},
		{"too large", capped, gql.Request{}, errcode.TooLarge, "request body is larger than the limit of 64 bytes"},

		{"GET", get(url.Values{"query": {"{ a }"}, "operationName": {"Q"}, "variables": {`{"n": 2, "l": [{"x": "y"}]}`}}),
			gql.Request{Query: "{ a }", OperationName: "Q", Variables: map[string]any{"n": 2.0, "l": []any{map[string]any{"x": "y"}}}}, "", ""},
		{"GET with null variables", get(url.Values{"query": {"{ a }"}, "variables": {"null"}}), gql.Request{Query: "{ a }"}, "", ""},
		{"GET with variables not an object", get(url.Values{"query": {"{ a }"}, "variables": {"[1]"}}), gql.Request{}, errcode.BadRequest,
			"variables must be a JSON object, not an array"},
		{"GET with malformed variables", get(url.Values{"query": {"{ a }"}, "variables": {`{"n"`}}), gql.Request{}, errcode.BadRequest,
			"variables is not valid JSON: unexpected end of JSON at byte 4"},
		{"GET with a duplicate variable", get(url.Values{"query": {"{ a }"}, "variables": {`{"n": 1, "n": 2}`}}), gql.Request{}, errcode.BadRequest,
			`variables is not valid JSON: duplicate key "n" at byte 9`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := readRequest(tc.r)
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				return
			}
			if err == nil || errcode.As(err).Code != tc.code || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v, want %s containing %q", err, tc.code, tc.msg)
			}
		})
	}
}
