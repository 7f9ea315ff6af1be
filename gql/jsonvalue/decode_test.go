package jsonvalue

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     any
	}{
		{"null", `null`, nil},
		{"true", `true`, true},
		{"false", `false`, false},
		{"zero", `0`, 0.0},
		{"a small whole number", `7`, 7.0},
		{"the largest cached whole number", `255`, 255.0},
		{"past the cached whole numbers", `256`, 256.0},
		{"a negative number", `-12`, -12.0},
		{"a fraction", `12.5`, 12.5},
		{"a fraction that does not round trip in binary", `0.1`, 0.1},
		{"fifteen digits", `123456789.012345`, 123456789.012345},
		{"sixteen digits", `1234567890.123456`, 1234567890.123456},
		{"a whole number past 2^53", `12345678901234567890`, 12345678901234567890.0},
		{"an exponent", `-1.5e3`, -1500.0},
		{"an upper-case exponent with a sign", `2E+2`, 200.0},
		{"a negative exponent", `25e-1`, 2.5},
		{"the largest float64", `1.7976931348623157e308`, math.MaxFloat64},
		{"an underflow is zero, as in encoding/json", `1e-400`, 0.0},
		{"a string", `"Book 1"`, "Book 1"},
		{"an empty string", `""`, ""},
		{"escapes", `"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"},
		{"a \\u escape", `"caf\u00e9"`, "café"},
		{"a NUL escape", `"a\u0000b"`, "a\x00b"},
		{"a surrogate pair", `"\ud83d\ude00"`, "😀"},
		{"a lone high surrogate", `"\ud800x"`, "\ufffdx"},
		{"a lone low surrogate", `"\udc00"`, "\ufffd"},
		{"a high surrogate before a letter escape", `"\ud800\u0041"`, "\ufffdA"},
		{"a high surrogate before a pair", `"\ud800\ud83d\ude00"`, "\ufffd😀"},
		{"a high surrogate at the end", `"\ud800"`, "\ufffd"},
		{"UTF-8", `"naïve 日本"`, "naïve 日本"},
		{"U+FFFD itself", "\"\ufffd\"", "\ufffd"},
		{"an invalid byte", "\"a\xffb\"", "a\ufffdb"},
		{"a cut sequence", "\"\xe6\x97\"", "\ufffd\ufffd"},
		{"a surrogate in UTF-8", "\"\xed\xa0\x80\"", "\ufffd\ufffd\ufffd"},
		{"an invalid byte after an escape", "\"\\n\xff\"", "\n\ufffd"},
		{"DEL is not a control character", "\"\x7f\"", "\x7f"},
		{"an empty object", `{}`, map[string]any{}},
		{"an empty array", `[]`, []any{}},
		{"blanks everywhere", " \t\r\n{ \"a\" : [ 1 , 2 ] , \"b\" : { } } \n", map[string]any{"a": []any{1.0, 2.0}, "b": map[string]any{}}},
		{"a create body", `{"values":{"Book":[{"core":{"id":"b1"},"title":"Book 1","authorid":1,"price":12.5}]}}`,
			map[string]any{"values": map[string]any{"Book": []any{map[string]any{"core": map[string]any{"id": "b1"}, "title": "Book 1", "authorid": 1.0, "price": 12.5}}}}},
		{"all shapes in an array", `[null,true,false,1,"s",[],{}]`, []any{nil, true, false, 1.0, "s", []any{}, map[string]any{}}},
		{"an escaped key", `{"\u0061b":1}`, map[string]any{"ab": 1.0}},
		{"keys equal to a cached key's prefix", `[{"title":1},{"titl":2},{"title":3}]`,
			[]any{map[string]any{"title": 1.0}, map[string]any{"titl": 2.0}, map[string]any{"title": 3.0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Decode([]byte(tc.in), 64)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// The shapes and the UTF-8 coercion are encoding/json's.
			var std any
			if err := json.Unmarshal([]byte(tc.in), &std); err != nil {
				t.Fatalf("encoding/json: %v", err)
			}
			if diff := cmp.Diff(std, got); diff != "" {
				t.Errorf("differs from encoding/json (-json +Decode):\n%s", diff)
			}
		})
	}
}

// TestDecodeDepth decodes values exactly as deep as allowed (cmp.Diff is
// too slow on deeply nested slices; reflect.DeepEqual is not).
func TestDecodeDepth(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 64, 1000} {
		in := strings.Repeat("[", n) + strings.Repeat("]", n)
		got, err := Decode([]byte(in), n)
		if err != nil {
			t.Fatalf("%d deep: %v", n, err)
		}
		if !reflect.DeepEqual(nestedArrays(n), got) {
			t.Errorf("%d deep: got %v", n, got)
		}
		if _, err := Decode([]byte("["+in+"]"), n); err == nil || !strings.Contains(err.Error(), "nested deeper than") {
			t.Errorf("%d+1 deep: error %v, want nested deeper than", n, err)
		}
	}
}

func nestedArrays(n int) any {
	v := []any{}
	for range n - 1 {
		v = []any{v}
	}
	return v
}

func TestDecodeNegativeZero(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`-0`, `-0.0`, `-0e3`} {
		v, err := Decode([]byte(in), 1)
		f, ok := v.(float64)
		if err != nil || !ok || f != 0 || !math.Signbit(f) {
			t.Errorf("Decode(%s) = %v, %v; want -0", in, v, err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("k", 100)
	for _, tc := range []struct {
		name, in string
		maxDepth int
		want     string
	}{
		{"empty", ``, 64, "no JSON value: the input is empty"},
		{"blank", " \n\t", 64, "no JSON value: the input is only whitespace"},

		{"a duplicate key", `{"a": 1, "a": 2}`, 64, `duplicate key "a" at byte 9`},
		{"a duplicate key inside an array", `{"a": [{"b": 1, "b": 2}]}`, 64, `duplicate key "b" at byte 16`},
		{"keys equal once unescaped", `{"a":1,"\u0061":2}`, 64, `duplicate key "a" at byte 7`},
		{"keys equal once coerced to UTF-8", "{\"\xff\":1,\"\xfe\":2}", 64, `duplicate key "�" at byte 7`},
		{"a long duplicate key is shortened", `{"` + long + `":1,"` + long + `":2}`, 64,
			`duplicate key "` + long[:40] + `…" at byte 106`},
		{"a duplicate key before a syntax error", `{"a":1,"a":[}`, 64, `duplicate key "a" at byte 7`},

		{"two objects", `{} {}`, 64, "more data after the JSON value at byte 3"},
		{"two numbers", `1 2`, 64, "more data after the JSON value at byte 2"},
		{"garbage after", `{}x`, 64, "more data after the JSON value at byte 2"},
		{"a closing bracket too many", `[1]]`, 64, "more data after the JSON value at byte 3"},
		{"a leading zero", `01`, 64, "more data after the JSON value at byte 1"},
		{"a literal run on", `truex`, 64, "more data after the JSON value at byte 4"},

		{"too deep", `[[1]]`, 1, "nested deeper than 1 levels at byte 1"},
		{"too deep in an object", `{"a":{"b":{}}}`, 2, "nested deeper than 2 levels at byte 10"},
		{"no containers at depth 0", `[]`, 0, "nested deeper than 0 levels at byte 0"},

		{"a number too large", `1e999`, 64, "number 1e999 at byte 0 is out of the range of a float64"},
		{"a negative number too large", `[-1e999]`, 64, "number -1e999 at byte 1 is out of the range of a float64"},
		{"a long number too large is shortened", "1" + strings.Repeat("0", 400), 64,
			"number 1" + strings.Repeat("0", 39) + "… at byte 0 is out of the range of a float64"},

		{"cut short in an array", `{"a": [1, 2`, 64, "unexpected end of JSON at byte 11"},
		{"cut short after a key", `{"a"`, 64, "unexpected end of JSON at byte 4"},
		{"cut short in a string", `"abc`, 64, "unexpected end of JSON at byte 4"},
		{"cut short in an escape", `"\`, 64, "unexpected end of JSON at byte 2"},
		{"cut short in a \\u escape", `"\u12`, 64, "unexpected end of JSON at byte 5"},
		{"cut short in a literal", `tru`, 64, "unexpected end of JSON at byte 3"},
		{"a lone minus", `-`, 64, "unexpected end of JSON at byte 1"},
		{"cut short after a decimal point", `1.`, 64, "unexpected end of JSON at byte 2"},
		{"cut short in an exponent", `1e+`, 64, "unexpected end of JSON at byte 3"},

		{"no colon", `{"a" 1}`, 64, "malformed JSON at byte 5: invalid character '1' after object key"},
		{"no comma in an object", `{"a":1 "b":2}`, 64, `malformed JSON at byte 7: invalid character '"' after object key:value pair`},
		{"no comma in an array", `[1 2]`, 64, "malformed JSON at byte 3: invalid character '2' after array element"},
		{"a trailing comma in an object", `{"a":1,}`, 64, "malformed JSON at byte 7: invalid character '}' looking for beginning of object key string"},
		{"a trailing comma in an array", `[1,]`, 64, "malformed JSON at byte 3: invalid character ']' looking for beginning of value"},
		{"a bare key", `{a:1}`, 64, "malformed JSON at byte 1: invalid character 'a' looking for beginning of object key string"},
		{"a closing bracket first", `]`, 64, "malformed JSON at byte 0: invalid character ']' looking for beginning of value"},
		{"single quotes", `'a'`, 64, `malformed JSON at byte 0: invalid character '\'' looking for beginning of value`},
		{"NaN", `NaN`, 64, "malformed JSON at byte 0: invalid character 'N' looking for beginning of value"},
		{"a plus sign", `+1`, 64, "malformed JSON at byte 0: invalid character '+' looking for beginning of value"},
		{"an invalid byte", "\xff", 64, `malformed JSON at byte 0: invalid character '\xff' looking for beginning of value`},
		{"a byte order mark", "\ufeff{}", 64, `malformed JSON at byte 0: invalid character '\ufeff' looking for beginning of value`},
		{"a misspelt literal", `[trxe]`, 64, "malformed JSON at byte 3: invalid character 'x' in literal true (expecting 'u')"},
		{"a minus before a letter", `-a`, 64, "malformed JSON at byte 1: invalid character 'a' in numeric literal"},
		{"a decimal point before a letter", `1.x`, 64, "malformed JSON at byte 2: invalid character 'x' after decimal point in numeric literal"},
		{"an exponent without digits", `1e]`, 64, "malformed JSON at byte 2: invalid character ']' in exponent of numeric literal"},
		{"hexadecimal", `0x10`, 64, "more data after the JSON value at byte 1"},
		{"a control character in a string", "\"a\tb\"", 64, `malformed JSON at byte 2: invalid character '\t' in string literal`},
		{"a control character after an escape", "\"\\n\x01\"", 64, `malformed JSON at byte 3: invalid character '\x01' in string literal`},
		{"an unknown escape", `"\q"`, 64, `malformed JSON at byte 2: invalid character 'q' in string escape code`},
		{"a single-quote escape", `"\'"`, 64, `malformed JSON at byte 2: invalid character '\'' in string escape code`},
		{"a bad \\u escape", `"\u12g4"`, 64, `malformed JSON at byte 5: invalid character 'g' in \u hexadecimal character escape`},
		{"a bad \\u escape after a high surrogate", `"\ud800\u12g4"`, 64, `malformed JSON at byte 11: invalid character 'g' in \u hexadecimal character escape`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := Decode([]byte(tc.in), tc.maxDepth)
			if err == nil {
				t.Fatalf("Decode(%q) = %v, want the error %q", tc.in, v, tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("Decode(%q): error\n%s\nwant\n%s", tc.in, err, tc.want)
			}
			if v != nil {
				t.Errorf("Decode(%q) = %v beside its error, want nil", tc.in, v)
			}
		})
	}
}

// TestDecodeAfterError checks that a pooled decoder an error left in the
// middle of arrays decodes the next input afresh.
func TestDecodeAfterError(t *testing.T) {
	for range 10 {
		if _, err := Decode([]byte(`[[1,[2,[3,`), 64); err == nil {
			t.Fatal("a cut input decoded")
		}
		got, err := Decode([]byte(`[4,[5]]`), 64)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]any{4.0, []any{5.0}}, got); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
	}
}

// TestDecodeWholeNumbers: a whole number float64 cannot hold exactly but
// int64 can is an int64; every other number is encoding/json's float64.
func TestDecodeWholeNumbers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want any
	}{
		{"9007199254740993", int64(9007199254740993)},
		{"-9007199254740993", int64(-9007199254740993)},
		{"9223372036854775807", int64(9223372036854775807)},
		{"9007199254740992", float64(9007199254740992)},
		{"-9223372036854775808", float64(-9223372036854775808)},
		{"9223372036854775808", float64(9223372036854775808)},
		{"12345678901234567890", float64(12345678901234567890)},
		{"9007199254740993.0", float64(9007199254740992)},
		{"9007199254740993e0", float64(9007199254740992)},
		{"[1, 9007199254740995]", []any{1.0, int64(9007199254740995)}},
	} {
		got, err := Decode([]byte(tc.in), 4)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
}
