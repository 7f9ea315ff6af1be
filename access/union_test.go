package access

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/corehq/core/auth"
)

// TestUnionIsRightsOverBoth: the Set the cache joins from the grants it
// keeps and the sourced ones is the Set Rights gives over all of them,
// for random grants, callers and operations.
func TestUnionIsRightsOverBoth(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(19, 25))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	some := func(xs ...string) []string {
		var out []string
		for _, x := range xs {
			if rng.IntN(2) == 0 {
				out = append(out, x)
			}
		}
		return out
	}
	fields := func() []string {
		switch rng.IntN(3) {
		case 0:
			return nil // every field
		case 1:
			return []string{}
		}
		return some("title", "price", "tags")
	}
	source := func(s Source) []string {
		if s.ID == "team-a" {
			return []string{"bob", "cy"}
		}
		return []string{"cy"}
	}
	principals := []auth.Principal{{Kind: auth.User, AccountID: "bob"}, {Kind: auth.User, AccountID: "cy"}, {Kind: auth.Anonymous}}
	opts := []cmp.Option{cmp.AllowUnexported(Set{}, cover{}), cmpopts.IgnoreFields(Set{}, "terms"), cmpopts.EquateEmpty(),
		cmpopts.SortSlices(func(a, b string) bool { return a < b })}
	for i := range 2000 {
		var plain, sourced, all []Grant
		for range rng.IntN(8) {
			g := Grant{
				Owner:         pick("", "ada", "bob"),
				Resource:      pick("*", "b1", "b2", "b3", ""),
				ResourceType:  pick("Book", "*", "Author"),
				OperationType: pick("Query", "Mutation", "*"),
				Operation:     pick("find", "get", "upsert", "*"),
				Scope:         rng.IntN(5) == 0,
				Disabled:      rng.IntN(8) == 0,
				Members:       some("bob", "cy", "*", "anonymous"),
				Fields:        fields(),
			}
			if rng.IntN(6) == 0 {
				g.End = now.Add(-time.Hour)
			}
			if rng.IntN(2) == 0 {
				g.Source = Source{Type: "Team", Field: "members", ID: pick("team-a", "team-b")}
				sourced = append(sourced, g)
			} else {
				plain = append(plain, g)
			}
			all = append(all, g)
		}
		p := principals[rng.IntN(len(principals))]
		op := pick("find", "get", "upsert")
		want := Rights(all, p, "Book", op, now, source)
		got := Rights(plain, p, "Book", op, now, nil).union(Rights(sourced, p, "Book", op, now, source))
		if diff := cmp.Diff(want, got, opts...); diff != "" {
			t.Fatalf("case %d (%v, %s): union differs from Rights over all (-want +got):\n%s\ngrants: %+v", i, p, op, diff, all)
		}
		if len(want.Terms()) != len(got.Terms()) {
			t.Fatalf("case %d: %d terms, want %d", i, len(got.Terms()), len(want.Terms()))
		}
	}
}
