package arcql

import (
	"bufio"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fuzzLimits are small so that short inputs reach every limit, and so that
// inputs stay short: the fuzzer minimises each new interesting input in time
// quadratic in its length, and with 4 KiB inputs it spends minutes doing
// that instead of fuzzing. The parser has no code that depends on the
// limits' values beyond the checks themselves.
var fuzzLimits = Limits{MaxBytes: 512, MaxDepth: 6, MaxComparisons: 12, MaxStringBytes: 48, MaxWildcards: 3}

// FuzzParse checks that Parse never panics and answers only *Error; that an
// accepted query prints as text that parses back to the same query; and
// that binding it to either test type, and evaluating and sorting with the
// result, never panics either.
func FuzzParse(f *testing.F) {
	for _, ex := range examples {
		f.Add(ex.query)
	}
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Add(strings.Repeat("a", fuzzLimits.MaxBytes+1))
	f.Add("a = '\xff'")
	f.Fuzz(checkQuery)
}

// checkQuery is the body of FuzzParse.
func checkQuery(t *testing.T, text string) {
	q, err := Parse(text, fuzzLimits)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("Parse(%q) error %T is not an *Error", text, err)
		}
		if q != nil {
			t.Fatalf("Parse(%q) returned a query and an error", text)
		}
		return
	}
	// The canonical text may be longer than the input (it adds spaces),
	// so only the length limit is relaxed for the round trip.
	canon := q.String()
	lim := fuzzLimits
	lim.MaxBytes = 1 << 20
	again, err := Parse(canon, lim)
	if err != nil {
		t.Fatalf("Parse(%q) = %q, which does not parse: %v", text, canon, err)
	}
	if diff := cmp.Diff(q, again, ignorePos); diff != "" {
		t.Fatalf("Parse(%q) = %q, which parses differently (-first +again):\n%s", text, canon, diff)
	}
	for typ, recs := range tables {
		b, err := Bind(q, schema, typ, testInstance)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Bind(%q) error %T is not an *Error", text, err)
			}
			continue
		}
		_ = b.String()
		filter := resolveHops(b.Filter)
		for i, r := range recs {
			Match(filter, r)
			CompareSort(b.Sort, r, recs[(i+1)%len(recs)])
		}
	}
}

// seeds reads testdata/seeds.arcql.
func seeds(tb testing.TB) []string {
	tb.Helper()
	file, err := os.Open("testdata/seeds.arcql")
	if err != nil {
		tb.Fatal(err)
	}
	defer file.Close()
	var out []string
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}
