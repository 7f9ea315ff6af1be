package bolt

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
)

// TestScalarEntryIsCompoundEntries holds indexEntries' short way for a
// single field without a list to the keys and flags of the general one.
func TestScalarEntryIsCompoundEntries(t *testing.T) {
	values := append([]any{strings.Repeat("long ", maxKeyString), map[string]any{"a": 1.0}}, keyValues...)
	trashed := base.Add(time.Hour)
	var recs []*store.Record
	for _, v := range values {
		recs = append(recs, &store.Record{Type: "R", ID: "r\x00id", Created: base, Updated: base, Fields: map[string]any{"f": v}})
	}
	recs = append(recs,
		&store.Record{Type: "R", ID: "missing", Fields: map[string]any{}},
		&store.Record{Type: "R", ID: "meta", Created: base, Trashed: &trashed, CreatedBy: "acc", Fields: map[string]any{}})
	fields := []string{"f", "core.id", "core.created", "core.trashed", "core.createdBy", "core.impl", "g"}
	for _, f := range fields {
		x := &indexDef{Name: f, Fields: []string{f}}
		for i, r := range recs {
			t.Run(fmt.Sprintf("%s/%d", f, i), func(t *testing.T) {
				if _, ok := scalarEntry(x, r); !ok {
					t.Fatalf("no short way for %#v", r.Fields)
				}
				keys, fl, err := indexEntries(x, r)
				if err != nil {
					t.Fatal(err)
				}
				wantKeys, wantFl, err := compoundEntries(x, r, indexFlags{kinds: make([]byte, 1)})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(wantKeys, keys); diff != "" {
					t.Errorf("keys (-compound +scalar):\n%s", diff)
				}
				if diff := cmp.Diff(wantFl, fl, cmp.AllowUnexported(indexFlags{})); diff != "" {
					t.Errorf("flags (-compound +scalar):\n%s", diff)
				}
			})
		}
	}
	// Lists, paths and compound indexes take the general way.
	list := &store.Record{Type: "R", ID: "l", Fields: map[string]any{"f": []any{1.0, 2.0}, "o": map[string]any{"a": 1.0}}}
	for _, x := range []*indexDef{{Fields: []string{"f"}}, {Fields: []string{"o.a"}}, {Fields: []string{"o", "f"}}} {
		if _, ok := scalarEntry(x, list); ok {
			t.Errorf("index %v: a short way for %#v", x.Fields, list.Fields)
		}
	}
}
