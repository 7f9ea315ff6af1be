package arcql

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignorePos compares ASTs without positions, which TestParsePositions
// checks on their own.
var ignorePos = cmp.Options{
	cmpopts.IgnoreFields(Path{}, "Pos"),
	cmpopts.IgnoreFields(Value{}, "Pos"),
}

func p(parts ...string) Path { return Path{Parts: parts} }

func str(s string) Value               { return Value{Kind: KindString, Str: s} }
func num(text string, n float64) Value { return Value{Kind: KindNumber, Num: n, Str: text} }

func cmpr(path Path, op Op, v Value) *Compare { return &Compare{Path: path, Op: op, Value: v} }

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		query string
		want  *Query
	}{
		{"empty", "", &Query{}},
		{"blank", " \t\r\n ", &Query{}},
		{"star", "*", &Query{}},
		{"star in parentheses", "((*))", &Query{}},
		{"star as primary", "* AND a = 1", &Query{Filter: &And{Terms: []Expr{&All{}, cmpr(p("a"), OpEq, num("1", 1))}}}},
		{"not star", "NOT *", &Query{Filter: &Not{X: &All{}}}},
		{"ops", "a = 1 AND b != 2 AND c < 3 AND d <= 4 AND e > 5 AND f >= 6 AND g ~ 'x' AND h ^ 'y' AND i * 'z'",
			&Query{Filter: &And{Terms: []Expr{
				cmpr(p("a"), OpEq, num("1", 1)), cmpr(p("b"), OpNe, num("2", 2)),
				cmpr(p("c"), OpLt, num("3", 3)), cmpr(p("d"), OpLe, num("4", 4)),
				cmpr(p("e"), OpGt, num("5", 5)), cmpr(p("f"), OpGe, num("6", 6)),
				cmpr(p("g"), OpWords, str("x")), cmpr(p("h"), OpPrefix, str("y")),
				cmpr(p("i"), OpWildcard, str("z")),
			}}}},
		{"ops without spaces", "a<=1 AND b!=2", &Query{Filter: &And{Terms: []Expr{
			cmpr(p("a"), OpLe, num("1", 1)), cmpr(p("b"), OpNe, num("2", 2))}}}},
		{"values", "a = true OR b = FALSE OR c = Null OR d = -1.5e-3 OR e = \"x\"",
			&Query{Filter: &Or{Terms: []Expr{
				cmpr(p("a"), OpEq, Value{Kind: KindBool, Bool: true}),
				cmpr(p("b"), OpEq, Value{Kind: KindBool}),
				cmpr(p("c"), OpEq, Value{Kind: KindNull}),
				cmpr(p("d"), OpEq, num("-1.5e-3", -0.0015)),
				cmpr(p("e"), OpEq, str("x")),
			}}}},
		{"and binds tighter than or", "a = 1 OR b = 2 AND c = 3",
			&Query{Filter: &Or{Terms: []Expr{
				cmpr(p("a"), OpEq, num("1", 1)),
				&And{Terms: []Expr{cmpr(p("b"), OpEq, num("2", 2)), cmpr(p("c"), OpEq, num("3", 3))}},
			}}}},
		{"parentheses flatten same kind", "(a = 1 AND b = 2) AND (c = 3 AND (d = 4))",
			&Query{Filter: &And{Terms: []Expr{
				cmpr(p("a"), OpEq, num("1", 1)), cmpr(p("b"), OpEq, num("2", 2)),
				cmpr(p("c"), OpEq, num("3", 3)), cmpr(p("d"), OpEq, num("4", 4)),
			}}}},
		{"parentheses keep other kind", "(a = 1 OR b = 2) AND c = 3",
			&Query{Filter: &And{Terms: []Expr{
				&Or{Terms: []Expr{cmpr(p("a"), OpEq, num("1", 1)), cmpr(p("b"), OpEq, num("2", 2))}},
				cmpr(p("c"), OpEq, num("3", 3)),
			}}}},
		{"not binds tightest", "NOT a = 1 AND b = 2",
			&Query{Filter: &And{Terms: []Expr{&Not{X: cmpr(p("a"), OpEq, num("1", 1))}, cmpr(p("b"), OpEq, num("2", 2))}}}},
		{"not exist", "NOT EXIST age", &Query{Filter: &Not{X: &Exist{Path: p("age")}}}},
		{"not not", "NOT NOT EXIST a", &Query{Filter: &Not{X: &Not{X: &Exist{Path: p("a")}}}}},
		{"dotted path", "bestbook.core.id = 'x'", &Query{Filter: cmpr(p("bestbook", "core", "id"), OpEq, str("x"))}},
		{"range", "age IN (50, 70]", &Query{Filter: &Range{Path: p("age"), Lo: num("50", 50), Hi: num("70", 70), HiIncl: true}}},
		{"range inclusive", "age in [50,70)", &Query{Filter: &Range{Path: p("age"), Lo: num("50", 50), Hi: num("70", 70), LoIncl: true}}},
		{"sort", "* SORT price DESC, title", &Query{Sort: []SortKey{{Path: p("price"), Desc: true}, {Path: p("title")}}}},
		{"sort only", "SORT a ASC", &Query{Sort: []SortKey{{Path: p("a")}}}},
		{"filter and sort", "a = 1 SORT core.created desc",
			&Query{Filter: cmpr(p("a"), OpEq, num("1", 1)), Sort: []SortKey{{Path: p("core", "created"), Desc: true}}}},
		{"keywords any case", "a = 1 and NOT exist b Or c iN [1, 2] sOrT d DeSc",
			&Query{Filter: &Or{Terms: []Expr{
				&And{Terms: []Expr{cmpr(p("a"), OpEq, num("1", 1)), &Not{X: &Exist{Path: p("b")}}}},
				&Range{Path: p("c"), Lo: num("1", 1), Hi: num("2", 2), LoIncl: true, HiIncl: true},
			}}, Sort: []SortKey{{Path: p("d"), Desc: true}}}},
		{"fields named like keywords", "not = 1 AND NOT exist IN [1, 2] OR EXIST in AND sort * 'x' SORT desc DESC, asc",
			&Query{Filter: &Or{Terms: []Expr{
				&And{Terms: []Expr{
					cmpr(p("not"), OpEq, num("1", 1)),
					&Not{X: &Range{Path: p("exist"), Lo: num("1", 1), Hi: num("2", 2), LoIncl: true, HiIncl: true}},
				}},
				&And{Terms: []Expr{&Exist{Path: p("in")}, cmpr(p("sort"), OpWildcard, str("x"))}},
			}}, Sort: []SortKey{{Path: p("desc"), Desc: true}, {Path: p("asc")}}}},
		{"not star is negation, not a field", "NOT * OR a = 1",
			&Query{Filter: &Or{Terms: []Expr{&Not{X: &All{}}, cmpr(p("a"), OpEq, num("1", 1))}}}},
		{"wildcard op on star-like input", "name * '*'", &Query{Filter: cmpr(p("name"), OpWildcard, str("*"))}},
		{"multi-line", "a = 1\nAND\n\tb = 2", &Query{Filter: &And{Terms: []Expr{
			cmpr(p("a"), OpEq, num("1", 1)), cmpr(p("b"), OpEq, num("2", 2))}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tt.query, DefaultLimits())
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.query, err)
			}
			if diff := cmp.Diff(tt.want, got, ignorePos); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func TestParseExamples(t *testing.T) {
	t.Parallel()
	for _, ex := range examples {
		t.Run(ex.query, func(t *testing.T) {
			t.Parallel()
			q, err := Parse(ex.query, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			// The examples are written canonically, except for
			// parentheses that precedence makes redundant.
			want := strings.NewReplacer("(price = 5.99 AND authorid = 1)", "price = 5.99 AND authorid = 1").Replace(ex.query)
			if got := q.String(); got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
		})
	}
}

func TestParsePositions(t *testing.T) {
	t.Parallel()
	q, err := Parse("a = 'x' AND\n  bb.c IN [1, 'é'] SORT\n d", DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	want := &Query{
		Filter: &And{Terms: []Expr{
			&Compare{Path: Path{Parts: []string{"a"}, Pos: Pos{1, 1}}, Op: OpEq,
				Value: Value{Kind: KindString, Str: "x", Pos: Pos{1, 5}}},
			&Range{Path: Path{Parts: []string{"bb", "c"}, Pos: Pos{2, 3}},
				Lo:     Value{Kind: KindNumber, Num: 1, Str: "1", Pos: Pos{2, 12}},
				Hi:     Value{Kind: KindString, Str: "é", Pos: Pos{2, 15}},
				LoIncl: true, HiIncl: true},
		}},
		Sort: []SortKey{{Path: Path{Parts: []string{"d"}, Pos: Pos{3, 2}}}},
	}
	if diff := cmp.Diff(want, q); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseStrings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, literal, want string
	}{
		{"single quotes", `'abc'`, "abc"},
		{"double quotes", `"abc"`, "abc"},
		{"escaped single quote", `'O\'Reilly'`, "O'Reilly"},
		{"escaped double quote", `"say \"hi\""`, `say "hi"`},
		{"other quote needs no escape", `"O'Reilly"`, "O'Reilly"},
		{"escaped other quote", `'a\"b'`, `a"b`},
		{"backslash", `'a\\b'`, `a\b`},
		{"newline and tab", `'a\nb\tc'`, "a\nb\tc"},
		{"unicode escape", `'caf\u00e9 \u00E9'`, "café é"},
		{"surrogate pair", `'\ud83d\ude00'`, "😀"},
		{"raw unicode", `'日本語'`, "日本語"},
		{"raw newline", "'a\nb'", "a\nb"},
		{"empty", `''`, ""},
		{"stars kept", `'*?'`, "*?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q, err := Parse("f = "+tt.literal, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			c, ok := q.Filter.(*Compare)
			if !ok {
				t.Fatalf("filter is %T, want *Compare", q.Filter)
			}
			if c.Value.Str != tt.want {
				t.Errorf("value = %q, want %q", c.Value.Str, tt.want)
			}
			// And back: the canonical text decodes to the same string.
			again, err := Parse(q.String(), DefaultLimits())
			if err != nil {
				t.Fatalf("Parse(%q): %v", q.String(), err)
			}
			if diff := cmp.Diff(q, again, ignorePos); diff != "" {
				t.Errorf("round trip of %q (-want +got):\n%s", q.String(), diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query string
		want  string
	}{
		{"bestbook.id =", "arcql: 1:14: expected a value after '=', found end of input"},
		{"title =", "arcql: 1:8: expected a value after '=', found end of input"},
		{"title = AND", "arcql: 1:9: expected a value after '=', found 'AND'"},
		{"title = Inferno", "arcql: 1:9: expected a value after '=', found 'Inferno' (strings are quoted: 'Inferno')"},
		{"title", "arcql: 1:6: expected an operator after title, found end of input"},
		{"title 'x'", "arcql: 1:7: expected an operator after title, found string 'x'"},
		{"title == 'x'", "arcql: 1:8: expected a value after '=', found '='"},
		{"a ! 1", "arcql: 1:3: unexpected character '!' (the operator is '!=')"},
		{"a = 1 b = 2", "arcql: 1:7: expected AND, OR, SORT or end of input, found 'b'"},
		{"a = 1 AND", "arcql: 1:10: expected a filter, found end of input"},
		{"AND a = 1", "arcql: 1:1: expected a filter, found 'AND'"},
		{"a = 1 OR OR b = 1", "arcql: 1:10: expected a filter, found 'OR'"},
		{"NOT", "arcql: 1:4: expected a filter, found end of input"},
		{"(a = 1", "arcql: 1:7: expected ')' to close the '(' at 1:1, found end of input"},
		{"a = 1)", "arcql: 1:6: expected AND, OR, SORT or end of input, found ')'"},
		{"()", "arcql: 1:2: expected a filter, found ')'"},
		{"EXIST", "arcql: 1:6: expected a field after EXIST, found end of input"},
		{"EXIST 'a'", "arcql: 1:7: expected a field after EXIST, found string 'a'"},
		{"a IN 1", "arcql: 1:6: expected '[' or '(' after IN, found number 1"},
		{"a IN [1 2]", "arcql: 1:9: expected ',' between the bounds of a range, found number 2"},
		{"a IN [1, 2", "arcql: 1:11: expected ']' or ')' to close the range, found end of input"},
		{"a IN [, 2]", "arcql: 1:7: expected a value after '[', found ','"},
		{"a IN [1,]", "arcql: 1:9: expected a value after ',', found ']'"},
		{"SORT", "arcql: 1:5: expected a field after SORT, found end of input"},
		{"* SORT a,", "arcql: 1:10: expected a field after ',', found end of input"},
		{"* SORT a b", "arcql: 1:10: expected ',', ASC, DESC or end of input after a sort key, found 'b'"},
		{"* SORT a DESC DESC", "arcql: 1:15: expected ',', ASC, DESC or end of input after a sort key, found 'DESC'"},
		{"* SORT 'a'", "arcql: 1:8: expected a field after SORT, found string 'a'"},
		{"a = 'x", "arcql: 1:5: unterminated string"},
		{`a = 'x\`, "arcql: 1:7: unterminated string"},
		{`a = 'x\q'`, `arcql: 1:7: unknown escape \q in string (use \' \" \\ \n \t or \uXXXX)`},
		{`a = '\u12'`, `arcql: 1:6: invalid \u escape: expected four hex digits`},
		{`a = '\uzzzz'`, `arcql: 1:6: invalid \u escape: expected four hex digits`},
		{`a = '\ud83d'`, `arcql: 1:6: invalid \u escape: high surrogate without a low one`},
		{`a = '\ud83d\u0041'`, `arcql: 1:6: invalid \u escape: high surrogate without a low one`},
		{`a = '\ude00'`, `arcql: 1:6: invalid \u escape: lone low surrogate`},
		{"a = 1.", "arcql: 1:5: malformed number 1.: expected a digit after '.'"},
		{"a = .5", "arcql: 1:5: unexpected character '.'"},
		{"a = 1e", "arcql: 1:5: malformed number 1e: expected a digit in the exponent"},
		{"a = 12abc", "arcql: 1:5: malformed number 12a"},
		{"a = 1e999", "arcql: 1:5: number 1e999 is out of range"},
		{"a = -x", "arcql: 1:5: unexpected character '-'"},
		{"a. = 1", "arcql: 1:3: expected a name after '.' in a."},
		{"a..b = 1", "arcql: 1:3: expected a name after '.' in a."},
		{"a.1 = 1", "arcql: 1:3: expected a name after '.' in a."},
		{"a = 1 $", "arcql: 1:7: unexpected character '$'"},
		{"a = ü", "arcql: 1:5: unexpected character 'ü'"},
		{"a = 'x'\nAND b", "arcql: 2:6: expected an operator after b, found end of input"},
		{"é = 1", "arcql: 1:1: unexpected character 'é'"},
		{"a = 'é' @", "arcql: 1:9: unexpected character '@'"},
		{"a = '\xff'", "arcql: 1:6: query is not valid UTF-8"},
		{"a = true SORT", "arcql: 1:14: expected a field after SORT, found end of input"},
		{"a = 'x' 'y'", "arcql: 1:9: expected AND, OR, SORT or end of input, found string 'y'"},
		{"a = 'abcdefghijklmnopqrstuvwxyz' x", "arcql: 1:34: expected AND, OR, SORT or end of input, found 'x'"},
		{"a = 1 AND 'abcdefghijklmnopqrstuvwxyz'", "arcql: 1:11: expected a filter, found string 'abcdefghijklmnopqrst…'"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			t.Parallel()
			q, err := Parse(tt.query, DefaultLimits())
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want error %q", tt.query, q, tt.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not an *Error", err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Parse(%q) error\n got %s\nwant %s", tt.query, got, tt.want)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	nest := func(n int) string { return strings.Repeat("(", n) + "a = 1" + strings.Repeat(")", n) }
	nots := func(n int) string { return strings.Repeat("NOT ", n) + "a = 1" }
	comparisons := func(n int) string {
		terms := make([]string, n)
		for i := range terms {
			terms[i] = "a = 1"
		}
		return strings.Join(terms, " OR ")
	}
	small := Limits{MaxBytes: 20, MaxDepth: 2, MaxComparisons: 2, MaxStringBytes: 3, MaxWildcards: 1}
	tests := []struct {
		name  string
		query string
		lim   Limits
		want  string // "" for accepted
	}{
		{"length at limit", "a = '" + strings.Repeat("x", 1000) + "'" + strings.Repeat(" ", 4096-1006), Limits{}, ""},
		{"length over limit", strings.Repeat(" ", 4097), Limits{}, "arcql: query is longer than 4096 bytes"},
		{"length small", "a = 1 OR b = 2 OR c = 3", small, "arcql: query is longer than 20 bytes"},
		{"depth at limit", nest(32), DefaultLimits(), ""},
		{"depth over limit", nest(33), DefaultLimits(), "arcql: 1:33: query is nested more than 32 levels deep"},
		{"not depth at limit", nots(32), DefaultLimits(), ""},
		{"not depth over limit", nots(33), DefaultLimits(), "arcql: 1:129: query is nested more than 32 levels deep"},
		{"mixed depth", "(NOT a = 1)", small, ""},
		{"mixed depth over", "NOT (NOT a = 1)", small, "arcql: 1:6: query is nested more than 2 levels deep"},
		{"deep nesting stops early", strings.Repeat("(", 4000), DefaultLimits(), "arcql: 1:33: query is nested more than 32 levels deep"},
		{"comparisons at limit", comparisons(100), Limits{MaxBytes: 1 << 20}, ""},
		{"comparisons over limit", comparisons(101), Limits{MaxBytes: 1 << 20}, "arcql: 1:901: query has more than 100 comparisons"},
		{"exist and ranges count small", "EXIST a OR b IN [1,2] OR c = 1", Limits{MaxComparisons: 2}, "arcql: 1:26: query has more than 2 comparisons"},
		{"string at limit", "a = '" + strings.Repeat("é", 512) + "'", DefaultLimits(), ""},
		{"string over limit", "a = '" + strings.Repeat("x", 1025) + "'", DefaultLimits(), "arcql: 1:5: string literal is longer than 1024 bytes"},
		{"string limit counts decoded bytes", `a = '\u00e9\u00e9'`, Limits{MaxStringBytes: 4}, ""},
		{"string limit small", "a = 'abcd'", small, "arcql: 1:5: string literal is longer than 3 bytes"},
		{"wildcards at limit", "a * '" + strings.Repeat("*x", 10) + "'", DefaultLimits(), ""},
		{"wildcards over limit", "a * '" + strings.Repeat("*x", 11) + "'", DefaultLimits(), "arcql: 1:5: wildcard pattern has more than 10 '*'"},
		{"stars in = are not wildcards", "a = '" + strings.Repeat("*", 50) + "'", DefaultLimits(), ""},
		{"zero limits are defaults", nest(32), Limits{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.query, tt.lim)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("error\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestDefaultLimits(t *testing.T) {
	t.Parallel()
	want := Limits{MaxBytes: 4096, MaxDepth: 32, MaxComparisons: 100, MaxStringBytes: 1024, MaxWildcards: 10}
	if diff := cmp.Diff(want, DefaultLimits()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func BenchmarkParse(b *testing.B) {
	const query = "(price <= 5.99 AND title != 'Alchemist') OR booklist.title ~ 'inferno dante' OR age IN (50, 70] SORT price DESC, title"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(query, DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
}
