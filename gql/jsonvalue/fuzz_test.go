package jsonvalue

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fuzzDepth is the nesting bound FuzzDecode decodes with.
const fuzzDepth = 16

// fuzzSeeds are inputs at the edges of the grammar, of the UTF-8
// coercion and of each refusal.
var fuzzSeeds = []string{
	``, ` `, `null`, `true`, `false`, `tru`, `nul`, `0`, `-0`, `-0.0e-0`, `01`, `-`, `1.`, `1.5`, `1e`, `1e+`, `1E-2`,
	`255`, `256`, `123456789012345`, `1234567890123456`, `0.000000000000001`, `12345678901234567890`,
	`1.7976931348623157e308`, `1.7976931348623159e308`, `1e999`, `-1e999`, `1e-400`, `4.9e-324`,
	`""`, `"a"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9"`, `"\u0000"`, `"\ud83d\ude00"`, `"\ud800"`, `"\udc00"`,
	`"\ud800\u0041"`, `"\ud800\ud83d\ude00"`, `"\ud800\u"`, `"\ud800\u12g4"`, `"\q"`, `"\'"`, "\"\x01\"", "\"\x7f\"",
	"\"\xff\"", "\"\xe6\x97\"", "\"\xed\xa0\x80\"", "\"\xef\xbf\xbd\"", "\"\xf4\x90\x80\x80\"", "\xff", "\ufeff{}",
	`[]`, `{}`, `[1,]`, `{"a":1,}`, `[1 2]`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`, `]`, `}`, `[`, `{`, `{"a"`, `{"a":`,
	`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, "{\"\xff\":1,\"\xfe\":2}", `{"a":{"a":1},"b":{"a":1}}`, `[{"a":1},{"a":2}]`,
	`{} {}`, `{}x`, `1 2`, `[1]]`, " \t\r\n[ 1 , { \"a\" : null } ] \n",
	strings.Repeat("[", fuzzDepth) + strings.Repeat("]", fuzzDepth),
	strings.Repeat("[", fuzzDepth+1) + strings.Repeat("]", fuzzDepth+1),
	strings.Repeat(`{"a":`, fuzzDepth) + "1" + strings.Repeat("}", fuzzDepth),
	`{"values":{"Book":[{"core":{"id":"b1"},"title":"Book 1","authorid":1,"price":12.5}]}}`,
	`{"values": {"Author": [{"name": "Rabindranath Tagore", "bestbook": {"core": {"id": "b2"}}, "booklist": [{"title": "Gitanjali"}, {"core": {"id": "b2"}}]}]}}`,
	`{"query":"query($v: Int) { find(type: Book, first: $v) { edges { cursor } } }","operationName":null,"variables":{"v":2}}`,
}

// FuzzDecode holds Decode to encoding/json: whatever encoding/json
// refuses, Decode refuses; whatever it accepts, Decode decodes to the same
// value unless the input has a duplicate key or nests deeper than
// fuzzDepth, which Decode refuses. Every error names an offset and stays
// short.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Decode(b, fuzzDepth)
		if err != nil {
			msg := err.Error()
			if !strings.Contains(msg, " at byte ") && !strings.HasPrefix(msg, "no JSON value: ") {
				t.Fatalf("Decode(%q): error %q names no offset", b, msg)
			}
			if len(msg) > 250 {
				t.Fatalf("Decode(%q): error of %d bytes: %q", b, len(msg), msg)
			}
			if got != nil {
				t.Fatalf("Decode(%q) = %v beside the error %q", b, got, msg)
			}
		}
		var want any
		if jerr := json.Unmarshal(b, &want); jerr != nil {
			if err == nil {
				t.Fatalf("Decode(%q) = %#v, but encoding/json refuses it: %v", b, got, jerr)
			}
			return
		}
		dup, depth := walkTokens(t, b)
		switch {
		case dup && depth > fuzzDepth:
			if err == nil || !strings.Contains(err.Error(), "duplicate key") && !strings.Contains(err.Error(), "nested deeper than") {
				t.Fatalf("Decode(%q): error %v, want a duplicate key or too deep", b, err)
			}
		case dup:
			if err == nil || !strings.Contains(err.Error(), "duplicate key") {
				t.Fatalf("Decode(%q): error %v, want a duplicate key", b, err)
			}
		case depth > fuzzDepth:
			if err == nil || !strings.Contains(err.Error(), "nested deeper than") {
				t.Fatalf("Decode(%q): error %v, want nested too deep", b, err)
			}
		case err != nil:
			t.Fatalf("Decode(%q): %v; encoding/json decodes it", b, err)
		case !reflect.DeepEqual(want, asFloats(got)):
			// cmp.Diff takes time exponential in the nesting of slices, so
			// it only explains a difference reflect.DeepEqual found (the
			// same equality for these types).
			t.Fatalf("Decode(%q) differs from encoding/json (-json +Decode):\n%s", b, cmp.Diff(want, got))
		}
	})
}

// walkTokens reports whether b, which encoding/json accepts, has a
// duplicate key in some object, and how deep its objects and arrays nest.
func walkTokens(t *testing.T, b []byte) (dup bool, depth int) {
	t.Helper()
	type frame struct {
		keys    map[string]bool // nil in an array
		wantKey bool
	}
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			return dup, depth
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if top != nil && top.keys != nil {
			if top.wantKey {
				k, ok := tok.(string)
				if !ok {
					t.Fatalf("walkTokens(%q): key %v is not a string", b, tok)
				}
				dup = dup || top.keys[k]
				top.keys[k] = true
				top.wantKey = false
				continue
			}
			top.wantKey = true // after this value
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		}
		depth = max(depth, len(stack))
	}
}

// asFloats turns the int64s of a decoded value (whole numbers beyond
// float64's exact range) into the float64s encoding/json gives.
func asFloats(v any) any {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case []any:
		for i, e := range v {
			v[i] = asFloats(e)
		}
	case map[string]any:
		for k, e := range v {
			v[k] = asFloats(e)
		}
	}
	return v
}
