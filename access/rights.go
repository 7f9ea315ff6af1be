package access

import (
	"sort"
	"time"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// Set is the records of one type a caller may run one operation on
// through grants, beyond its own records.
type Set struct {
	// All: every record of the type (an SBP).
	All bool
	// Owners: every record of the type these accounts own (RBP "*").
	Owners []string
	// IDs: these records (RBP on one record).
	IDs []string
	// owners and ids hold the same for lookups.
	owners, ids map[string]struct{}
}

// None reports whether the grants add nothing.
func (r *Set) None() bool { return !r.All && len(r.Owners) == 0 && len(r.IDs) == 0 }

// Allows reports whether the grants cover a record.
func (r *Set) Allows(rec *store.Record) bool {
	if r.All {
		return true
	}
	if _, ok := r.ids[rec.ID]; ok {
		return true
	}
	_, ok := r.owners[rec.CreatedBy]
	return ok && rec.CreatedBy != ""
}

// Terms are the filter terms, one of which a record the grants cover
// matches: `core.createdBy IN Owners`, `core.id IN IDs`. A
// caller ORs them with its own rule (nil when All or None).
func (r *Set) Terms() []arcql.Expr {
	var out []arcql.Expr
	if len(r.Owners) > 0 {
		out = append(out, &arcql.InIDs{Field: "core.createdBy", IDs: r.Owners})
	}
	if len(r.IDs) > 0 {
		out = append(out, &arcql.InIDs{Field: "core.id", IDs: r.IDs})
	}
	return out
}

// Rights returns the records of typ p may run operation on through grants
// at now: get or find (reading, which either grants), or upsert, delete,
// trash, untrash, link or unlink. The instance token is not asked about:
// it may do everything.
func Rights(grants []Grant, p auth.Principal, typ, operation string, now time.Time) *Set {
	r := &Set{}
	for i := range grants {
		g := &grants[i]
		if !g.covers(typ) || !g.allows(operation) || !g.Active(now) || !g.names(p) {
			continue
		}
		switch {
		case g.Scope:
			return &Set{All: true}
		case g.Resource == "*":
			if g.Owner != "" && g.Owner != p.AccountID {
				add(&r.owners, &r.Owners, g.Owner)
			}
		case g.Resource != "":
			add(&r.ids, &r.IDs, g.Resource)
		}
	}
	// A stable order keeps a query's text, and so its cached plan, the
	// same from one request to the next.
	sort.Strings(r.Owners)
	sort.Strings(r.IDs)
	return r
}

func add(set *map[string]struct{}, list *[]string, v string) {
	if *set == nil {
		*set = map[string]struct{}{}
	}
	if _, ok := (*set)[v]; !ok {
		(*set)[v] = struct{}{}
		*list = append(*list, v)
	}
}
