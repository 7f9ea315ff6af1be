package rest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/errcode"
)

func TestDecodeObject(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"a":`, maxJSONDepth+1) + "1" + strings.Repeat("}", maxJSONDepth+1)
	for _, tc := range []struct {
		name, body string
		want       map[string]any
		err        string
	}{
		{"empty", "", nil, ""},
		{"blank", " \n\t", nil, ""},
		{"an object", `{"a": [1, "x", true, null, {"b": 2.5}]}`, map[string]any{"a": []any{1.0, "x", true, nil, map[string]any{"b": 2.5}}}, ""},
		{"around blanks", " {} \n", map[string]any{}, ""},
		{"a string", `"x"`, nil, "the body must be a JSON object, not a string"},
		{"null", `null`, nil, "the body must be a JSON object, not null"},
		{"a number", `12`, nil, "the body must be a JSON object, not a number"},
		{"a duplicate key", `{"a": 1, "a": 1}`, nil, `duplicate key "a"`},
		{"a duplicate key inside a list", `{"a": [{"b": 1, "b": 2}]}`, nil, `duplicate key "b"`},
		{"keys differing only by escapes are the same key", `{"a": 1, "\u0061": 2}`, nil, `duplicate key "a"`},
		{"two objects", `{} {}`, nil, "more data after the JSON value"},
		{"garbage after", `{}x`, nil, "more data after the JSON value"},
		{"cut short", `{"a": [1, 2`, nil, "unexpected end of JSON"},
		{"a syntax error", `{"a" 1}`, nil, "malformed JSON at byte"},
		{"too deep", deep, nil, "nested deeper than 64 levels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeObject([]byte(tc.body))
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || errcode.As(err).Code != errcode.BadRequest {
				t.Errorf("error %v, want BAD_REQUEST containing %q", err, tc.err)
			}
		})
	}
}
