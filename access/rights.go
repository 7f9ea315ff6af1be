package access

import (
	"sort"
	"time"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// Set is the records of one type a caller may run one operation on
// through grants, beyond its own records, and the fields the grants
// cover on each.
type Set struct {
	// All: every record of the type (an SBP).
	All bool
	// Owners: every record of the type these accounts own (RBP "*").
	Owners []string
	// IDs: these records (RBP on one record).
	IDs []string
	// The fields covered: by the SBPs, per owner and per record.
	scope       *cover
	owners, ids map[string]*cover
	terms       []arcql.Expr
}

// cover is the union of the fields of the grants on some records.
type cover struct {
	every  bool
	fields map[string]struct{}
}

func (c *cover) add(fields []string) {
	switch {
	case c.every:
	case fields == nil:
		c.every, c.fields = true, nil
	default:
		if c.fields == nil {
			c.fields = map[string]struct{}{}
		}
		for _, f := range fields {
			c.fields[f] = struct{}{}
		}
	}
}

// join adds the fields another cover covers.
func (c *cover) join(o *cover) {
	if o.every {
		c.add(nil)
		return
	}
	fields := make([]string, 0, len(o.fields))
	for f := range o.fields {
		fields = append(fields, f)
	}
	c.add(fields)
}

// Allows reports whether the grants cover a record.
func (s *Set) Allows(rec *store.Record) bool {
	if s.All {
		return true
	}
	if _, ok := s.ids[rec.ID]; ok {
		return true
	}
	_, ok := s.owners[rec.CreatedBy]
	return ok && rec.CreatedBy != ""
}

// Fields returns the fields the grants cover on a record they allow:
// limited is false when some grant covers every field; otherwise only
// holds the union of the grants' fields.
func (s *Set) Fields(rec *store.Record) (only map[string]struct{}, limited bool) {
	var u cover
	for _, c := range [...]*cover{s.scope, s.ids[rec.ID], s.owners[rec.CreatedBy]} {
		if c == nil {
			continue
		}
		if c.every {
			return nil, false
		}
		for f := range c.fields {
			u.add([]string{f})
		}
	}
	return u.fields, true
}

// Limited reports whether some grant of the set covers only some fields:
// then what the caller reads of a record depends on the record (Fields).
func (s *Set) Limited() bool {
	if s.scope != nil && !s.scope.every {
		return true
	}
	for _, m := range [...]map[string]*cover{s.owners, s.ids} {
		for _, c := range m {
			if !c.every {
				return true
			}
		}
	}
	return false
}

// Terms are the filter terms, one of which a record the grants cover
// matches: `core.createdBy IN Owners`, `core.id IN IDs`. A caller ORs
// them with its own rule (none when All or no grant). They are shared:
// read them, never change them.
func (s *Set) Terms() []arcql.Expr { return s.terms }

// Rights returns the records of typ p may run operation on through grants
// at now: get or find (reading, which either grants), or upsert, delete,
// trash, untrash, link or unlink. source reads the members of grants
// with a members source (nil: none are read). The instance token is not
// asked about: it may do everything.
func Rights(grants []Grant, p auth.Principal, typ, operation string, now time.Time, source Members) *Set {
	s := &Set{}
	for i := range grants {
		g := &grants[i]
		if !g.covers(typ) || !g.allows(operation) || !g.Active(now) || !g.names(p, source) {
			continue
		}
		switch {
		case g.Scope:
			s.All = true
			if s.scope == nil {
				s.scope = &cover{}
			}
			s.scope.add(g.Fields)
		case g.Resource == "*":
			if g.Owner != "" && g.Owner != p.AccountID {
				s.Owners = s.add(&s.owners, s.Owners, g.Owner, g.Fields)
			}
		case g.Resource != "":
			s.IDs = s.add(&s.ids, s.IDs, g.Resource, g.Fields)
		}
	}
	s.build()
	return s
}

// Union returns the Set of the grants of s and o together (an implicit
// grant a caller adds to the instance's, such as gql's accountFields).
func (s *Set) Union(o *Set) *Set { return s.union(o) }

// union returns the Set of the grants of s and o together: what Rights
// over both gives. s itself when o holds nothing (a Set is read only).
func (s *Set) union(o *Set) *Set {
	if !o.All && o.scope == nil && len(o.Owners) == 0 && len(o.IDs) == 0 {
		return s
	}
	u := &Set{All: s.All || o.All, scope: joined(s.scope, o.scope)}
	u.Owners, u.owners = joinCovers(s.Owners, s.owners, o.Owners, o.owners)
	u.IDs, u.ids = joinCovers(s.IDs, s.ids, o.IDs, o.ids)
	u.build()
	return u
}

// joined returns the union of two covers, either of which may be nil. A
// cover alone is shared, as Restrict shares them: built, it is read only.
func joined(a, b *cover) *cover {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	c := &cover{}
	c.join(a)
	c.join(b)
	return c
}

// joinCovers returns the keys of two Sets' lists (a's, then b's not in
// a) and their covers, joined for a key in both.
func joinCovers(ak []string, am map[string]*cover, bk []string, bm map[string]*cover) ([]string, map[string]*cover) {
	if len(ak)+len(bk) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(ak)+len(bk))
	m := make(map[string]*cover, len(ak)+len(bk))
	for _, k := range ak {
		keys, m[k] = append(keys, k), am[k]
	}
	for _, k := range bk {
		if c, ok := m[k]; ok {
			m[k] = joined(c, bm[k])
		} else {
			keys, m[k] = append(keys, k), bm[k]
		}
	}
	return keys, m
}

// build sorts the lists and makes the terms. A stable order keeps a
// query's text, and so its cached plan, the same from one request to the
// next.
func (s *Set) build() {
	sort.Strings(s.Owners)
	sort.Strings(s.IDs)
	s.terms = nil
	if len(s.Owners) > 0 {
		s.terms = append(s.terms, arcql.NewInIDs("core.createdBy", s.Owners))
	}
	if len(s.IDs) > 0 {
		s.terms = append(s.terms, arcql.NewInIDs("core.id", s.IDs))
	}
}

// Restrict returns the part of s whose grants show every one of fields:
// what a query that filters or sorts on those fields may select, so that
// a field a grant hides cannot be probed by filtering on it (a record
// whose grants hide one of them is left out, as if it did not match). A
// record shown by the union of an id grant's and an owner grant's fields,
// but by neither alone, is left out too: the restriction errs on the safe
// side. s itself when no grant limits fields.
func (s *Set) Restrict(fields []string) *Set {
	if len(fields) == 0 || !s.Limited() {
		return s
	}
	shows := func(cs ...*cover) bool {
		for _, f := range fields {
			seen := false
			for _, c := range cs {
				if c == nil {
					continue
				}
				if _, ok := c.fields[f]; ok || c.every {
					seen = true
					break
				}
			}
			if !seen {
				return false
			}
		}
		return true
	}
	r := &Set{scope: s.scope, owners: map[string]*cover{}, ids: map[string]*cover{}}
	r.All = s.All && shows(s.scope)
	for _, o := range s.Owners {
		if shows(s.scope, s.owners[o]) {
			r.Owners = append(r.Owners, o)
			r.owners[o] = s.owners[o]
		}
	}
	for _, id := range s.IDs {
		if shows(s.scope, s.ids[id]) {
			r.IDs = append(r.IDs, id)
			r.ids[id] = s.ids[id]
		}
	}
	r.build()
	return r
}

// add records a grant's fields under key, and key in list the first time.
func (s *Set) add(m *map[string]*cover, list []string, key string, fields []string) []string {
	if *m == nil {
		*m = map[string]*cover{}
	}
	c, ok := (*m)[key]
	if !ok {
		c = &cover{}
		(*m)[key] = c
		list = append(list, key)
	}
	c.add(fields)
	return list
}
