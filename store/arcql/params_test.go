package arcql

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func bindRule(t *testing.T, typ, text string) Expr {
	t.Helper()
	q, err := Parse(text, Limits{})
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	e, err := BindRule(q, schema, typ)
	if err != nil {
		t.Fatalf("BindRule(%q): %v", text, err)
	}
	return e
}

func TestParamsParseAndFormat(t *testing.T) {
	t.Parallel()
	q, err := Parse("bestbook.author.core.id = $caller OR born < $now", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := q.String(), "bestbook.author.core.id = $caller OR born < $now"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}

func TestParamsRefusedInFilters(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"core.createdBy = $caller", "born < $now", "name = $x"} {
		q, err := Parse(text, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Bind(q, schema, "Author", "i1")
		if err == nil || !contains(err.Error(), "is a parameter of access rules; a filter cannot use parameters") {
			t.Errorf("Bind(%q) = %v, want the parameter refused", text, err)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestBindRuleErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ typ, text, want string }{
		{"Author", "name = $who", "arcql: 1:8: unknown parameter $who: a rule knows $caller and $now"},
		{"Author", "age = $caller", "arcql: 1:7: $caller is an account id and cannot be compared with Author.age, which is an Int"},
		{"Author", "name ~ $caller", "arcql: 1:8: $caller can only be compared with = or !=, not '~'"},
		{"Author", "name = $now", "arcql: 1:8: $now is a timestamp and cannot be compared with Author.name, which is a String"},
		{"Author", "titel = $caller", "arcql: 1:1: unknown field Author.titel"},
		{"Account", "password = $caller", "arcql: 1:1: field Account.password cannot be filtered"},
		{"Author", "* SORT name", "arcql: 1:8: an access rule cannot SORT"},
		{"Author", "bestbook.author.bestbook.author.bestbook.title = 'x'", "arcql: 1:1: a path may cross at most 4 references; Author.bestbook crosses more"},
	}
	for _, tt := range tests {
		q, err := Parse(tt.text, Limits{})
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.text, err)
		}
		_, err = BindRule(q, schema, tt.typ)
		if err == nil || err.Error() != tt.want {
			t.Errorf("BindRule(%q) = %v, want %q", tt.text, err, tt.want)
		}
	}
	// Four crossings are allowed, in filters as in rules.
	q, err := Parse("bestbook.author.bestbook.author.name = 'x'", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Bind(q, schema, "Author", "i1"); err != nil {
		t.Errorf("four hops: %v", err)
	}
}

func TestWithParams(t *testing.T) {
	t.Parallel()
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		typ, rule, caller string
		want              []string
	}{
		{"Author", "core.id = $caller OR bestbook.author.core.id = $caller", "Author1", []string{"Author1"}},
		{"Book", "author.core.id = $caller", "Author2", []string{"B2"}},
		{"Book", "author.core.id != $caller", "Author2", []string{"B1", "B3", "B4", "B5"}},
		{"Book", "published < $now", "Author2", []string{"B1", "B2"}},
		{"Book", "published IN [$now, '2100-01-01')", "", []string{"B3"}},
		// An anonymous caller matches no $caller comparison, negated or not.
		{"Author", "core.id = $caller", "", []string{}},
		{"Author", "NOT core.id = $caller", "", []string{}},
		{"Author", "core.id != $caller", "", []string{}},
		{"Author", "NOT (core.id = $caller AND age > 60)", "", []string{"Author2", "Author4", "Author5"}},
		{"Author", "name = 'Paulo Coelho' OR NOT core.id = $caller", "", []string{"Author2"}},
		{"Book", "NOT author.core.id = $caller", "", []string{"B4", "B5"}}, // no author at all
	}
	for _, tt := range tests {
		rule := bindRule(t, tt.typ, tt.rule)
		before := Format(rule)
		got := find(&Query{Filter: WithParams(rule, Params{Caller: tt.caller, Now: now})}, tt.typ)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s as %q: %v, want %v", tt.rule, tt.caller, got, tt.want)
		}
		if Format(rule) != before {
			t.Errorf("%s: WithParams changed the rule", tt.rule)
		}
	}
}
