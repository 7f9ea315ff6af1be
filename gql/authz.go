package gql

import (
	"context"
	"slices"
	"strings"

	"github.com/corehq/core/access"
	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// owned reports whether the owner rule lets the caller change a record:
// the instance token changes everything; a user session the records its
// account created and its own Account record; an anonymous caller
// nothing.
func owned(c *call, r *store.Record) bool {
	switch c.Principal.Kind {
	case auth.InstanceAdmin:
		return true
	case auth.User:
		return r.CreatedBy == c.Principal.AccountID || (r.Type == "Account" && r.ID == c.Principal.AccountID)
	}
	return false
}

// visible reports whether the caller may read a record.
func visible(ctx context.Context, c *call, r *store.Record) bool { return may(ctx, c, r, "find") }

// may reports whether the caller may run operation on a record: what it
// owns, and what grants allow it (package access). A failure to read the
// grants refuses.
func may(ctx context.Context, c *call, r *store.Record, operation string) bool {
	if owned(c, r) {
		return true
	}
	s, err := c.rights(ctx, r.Type, operation)
	return err == nil && s.Allows(r) || ruleAllows(ctx, c, r, ruleOp(operation))
}

// ruleOp names the @access rule that widens a grant operation: find →
// read; upsert, link and unlink → update; delete, trash and untrash →
// delete.
func ruleOp(operation string) string {
	switch operation {
	case "find":
		return "read"
	case "upsert", "link", "unlink":
		return "update"
	case "delete", "trash", "untrash":
		return "delete"
	}
	return operation
}

// ruleAllows reports whether the type's @access rule op holds for r (false
// where the type has none). The rule's hops were resolved into id lists
// (c.rule), so arcql.Match answers exactly what the store query would.
func ruleAllows(ctx context.Context, c *call, r *store.Record, op string) bool {
	f, err := c.rule(ctx, r.Type, op)
	return err == nil && f != nil && arcql.Match(f, r)
}

// rule returns the @access rule op of typ with this request's parameters
// ($caller: the session's account, none for anonymous callers; $now: the
// request's time) and its hops resolved, once per request; nil when typ
// has no such rule. A rule is the app's: its hops read every record they
// pass through, whatever the caller may read (no scopeHops), bounded as a
// filter's hops are. Resolved rules serve later requests of the caller
// while the records their hops read are unchanged (ruleCache).
func (c *call) rule(ctx context.Context, typ, op string) (arcql.Expr, error) {
	t, ok := c.schema.model.Type(typ)
	if !ok || t.Rules[op] == nil {
		return nil, nil
	}
	key := typ + "\x00" + op
	c.rightsMu.Lock()
	defer c.rightsMu.Unlock()
	if f, ok := c.rulesOf[key]; ok {
		return f, nil
	}
	p := arcql.Params{Now: c.now}
	if c.Principal.Kind == auth.User {
		p.Caller = c.Principal.AccountID
	}
	rule := t.Rules[op]
	ck := ruleKey{rule: rule, caller: p.Caller}
	cached := c.rules != nil && !rule.Now // a rule of $now holds for one request
	if cached && !c.rulesChecked {
		seq, err := c.rules.check(ctx, c.Instance.ID)
		if err != nil {
			return nil, storeError(err)
		}
		c.rulesSeq, c.rulesChecked = seq, true
	}
	f, hit := arcql.Expr(nil), false
	if cached {
		f, hit = c.rules.get(c.Instance.ID, ck, c.now)
	}
	if !hit {
		var err error
		f, err = store.ResolveHops(ctx, c.Store, c.Instance.ID, arcql.WithParams(rule.Filter, p), c.schema.cfg.MaxHopResults)
		if err != nil {
			return nil, storeError(err)
		}
		f = mergeIDs(f)
		if cached {
			c.rules.put(c.Instance.ID, ck, f, c.rulesSeq, c.now)
		}
	}
	if c.rulesOf == nil {
		c.rulesOf = map[string]arcql.Expr{}
	}
	c.rulesOf[key] = f
	return f, nil
}

// shown returns a record as the caller may read it: r itself, or, when
// only grants with a fields list make it readable, a copy without the
// other fields (they read as null).
func shown(ctx context.Context, c *call, r *store.Record) *store.Record {
	if owned(c, r) || ruleAllows(ctx, c, r, "read") {
		return r
	}
	s, err := c.rights(ctx, r.Type, "find")
	if err != nil {
		return r // visible refused it already
	}
	only, limited := s.Fields(r)
	if !limited {
		return r
	}
	cp := *r
	cp.Fields = make(map[string]any, len(only))
	for f := range only {
		if v, ok := r.Fields[f]; ok {
			cp.Fields[f] = v
		}
	}
	return &cp
}

// rights returns the records of typ the caller may run operation on
// through grants, computed once per request, type and operation.
func (c *call) rights(ctx context.Context, typ, operation string) (*access.Set, error) {
	key := typ + "\x00" + operation
	c.rightsMu.Lock()
	defer c.rightsMu.Unlock()
	if s, ok := c.rightsOf[key]; ok {
		return s, nil
	}
	var s *access.Set
	if c.grants == nil {
		s = access.Rights(nil, c.Principal, typ, operation, c.now, nil)
	} else {
		var err error
		s, err = c.grants.Rights(ctx, c.Instance.ID, c.Principal, typ, operation, c.now,
			func(src access.Source) []string { return c.sourceMembers(ctx, src) })
		if err != nil {
			return nil, errcode.Wrap(errcode.Internal, err, "internal error")
		}
	}
	if typ == "Account" && c.Principal.Kind == auth.User {
		if g, ok := accountFieldsGrant(c); ok {
			s = s.Union(access.Rights([]access.Grant{g}, c.Principal, typ, operation, c.now, nil))
		}
	}
	if c.rightsOf == nil {
		c.rightsOf = map[string]*access.Set{}
	}
	c.rightsOf[key] = s
	return s, nil
}

// accountFieldsGrant is the grant the instance's accountFields setting
// stands for: every account reads those fields of every Account record
// (a hidden field never, whatever the setting holds); false when it
// lists none.
func accountFieldsGrant(c *call) (access.Grant, bool) {
	if len(c.Instance.Settings.AccountFields) == 0 {
		return access.Grant{}, false
	}
	t, _ := c.schema.model.Type("Account")
	fields := make([]string, 0, len(c.Instance.Settings.AccountFields))
	for _, name := range c.Instance.Settings.AccountFields {
		if f, ok := t.Field(name); ok && !f.Hidden {
			fields = append(fields, name)
		}
	}
	return access.Grant{ResourceType: "Account", OperationType: "Query", Operation: "find", Scope: true,
		Members: []string{access.Everyone}, Fields: fields}, len(fields) > 0
}

// sourceMembers returns the accounts a grant's members source holds (a
// team record's list field), read once per request: linking or unlinking
// there grants or revokes at the next request. Called under rightsMu.
func (c *call) sourceMembers(ctx context.Context, src access.Source) []string {
	if ids, ok := c.sources[src]; ok {
		return ids
	}
	var ids []string
	r, err := c.Store.Get(ctx, c.Instance.ID, src.Type, src.ID)
	if err == nil && r.Trashed == nil {
		ids = store.Strings(r.Fields[src.Field])
	}
	if c.sources == nil {
		c.sources = map[access.Source][]string{}
	}
	c.sources[src] = ids
	return ids
}

// scopeFilter narrows a bound filter to the records the caller may run
// operation on: its own, those grants allow and those the type's @access
// rule for it allows, pushed into the store
// query so that pages are full pages and bulk changes touch nothing
// else.
func scopeFilter(ctx context.Context, c *call, typ, operation string, f arcql.Expr, sort []arcql.SortKey) (arcql.Expr, error) {
	if c.Principal.Kind == auth.InstanceAdmin {
		return f, nil
	}
	f, err := scopeHops(ctx, c, f)
	if err != nil {
		return nil, err
	}
	s, err := c.rights(ctx, typ, operation)
	if err != nil {
		return nil, err
	}
	// A filter or sort on a field some grant hides selects only records
	// whose grants show it (access.Set.Restrict); most sets hide nothing.
	if s.Limited() {
		s = s.Restrict(namedFields(f, sort))
	}
	if s.All {
		return f, nil
	}
	terms := s.Terms()
	if c.Principal.Kind == auth.User {
		terms = append([]arcql.Expr{ownTerm(c, typ)}, terms...)
	}
	rule, err := c.rule(ctx, typ, ruleOp(operation))
	if err != nil {
		return nil, err
	}
	if or, ok := rule.(*arcql.Or); ok {
		terms = append(terms, or.Terms...) // one flat OR: a store unions its terms' indexes
	} else if rule != nil {
		terms = append(terms, rule)
	}
	switch len(terms) {
	case 0:
		// An id list without ids matches no record, on every store.
		return and(f, &arcql.InIDs{Field: "core.id"}), nil
	case 1:
		return and(f, terms[0]), nil
	}
	return and(f, &arcql.Or{Terms: terms}), nil
}

// scopeHops limits every reference hop of f (author.name = 'x') to the
// target records the caller may read, so that a filter cannot probe
// records it cannot see: a reference to one of them matches as if the
// target did not match.
func scopeHops(ctx context.Context, c *call, f arcql.Expr) (arcql.Expr, error) {
	if !hasHop(f) {
		return f, nil // the usual case: nothing to copy
	}
	switch n := f.(type) {
	case *arcql.And:
		terms, err := scopeTerms(ctx, c, n.Terms)
		return &arcql.And{Terms: terms}, err
	case *arcql.Or:
		terms, err := scopeTerms(ctx, c, n.Terms)
		return &arcql.Or{Terms: terms}, err
	case *arcql.Not:
		x, err := scopeHops(ctx, c, n.X)
		return &arcql.Not{X: x}, err
	case *arcql.Hop:
		sub, err := scopeFilter(ctx, c, n.Target, "find", n.Sub, nil)
		if err != nil {
			return nil, err
		}
		return &arcql.Hop{Field: n.Field, List: n.List, Target: n.Target, Sub: sub}, nil
	}
	return f, nil
}

// mergeIDs simplifies a rule whose hops were resolved: in an OR, the id
// lists of one field become one (board IN a OR board IN b is board IN
// a∪b) and an empty one, which matches nothing, is dropped.
func mergeIDs(f arcql.Expr) arcql.Expr {
	or, ok := f.(*arcql.Or)
	if !ok {
		return f
	}
	var terms []arcql.Expr
	merged := map[string]int{} // field → index in terms of its InIDs
	for _, t := range or.Terms {
		t = mergeIDs(t)
		in, ok := t.(*arcql.InIDs)
		if !ok {
			terms = append(terms, t)
			continue
		}
		if len(in.IDs) == 0 {
			continue
		}
		if i, seen := merged[in.Field]; seen {
			prev := terms[i].(*arcql.InIDs)
			ids := append(slices.Clone(prev.IDs), in.IDs...)
			slices.Sort(ids)
			terms[i] = arcql.NewInIDs(in.Field, slices.Compact(ids))
			continue
		}
		merged[in.Field] = len(terms)
		terms = append(terms, t)
	}
	switch len(terms) {
	case 0:
		return &arcql.InIDs{Field: "core.id"} // matches nothing
	case 1:
		return terms[0]
	}
	return &arcql.Or{Terms: terms}
}

// hasHop reports whether f holds a reference hop.
func hasHop(f arcql.Expr) bool {
	found := false
	arcql.Walk(f, func(e arcql.Expr) bool {
		if _, ok := e.(*arcql.Hop); ok {
			found = true
		}
		return !found
	})
	return found
}

func scopeTerms(ctx context.Context, c *call, terms []arcql.Expr) ([]arcql.Expr, error) {
	out := make([]arcql.Expr, len(terms))
	for i, t := range terms {
		var err error
		if out[i], err = scopeHops(ctx, c, t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// namedFields lists the record fields a filter and a sort name (the first
// part of each path; core metadata is never hidden).
func namedFields(f arcql.Expr, sort []arcql.SortKey) []string {
	var out []string
	arcql.Fields(f, sort, func(name string) {
		if strings.HasPrefix(name, "core.") {
			return
		}
		first, _, _ := strings.Cut(name, ".")
		if !slices.Contains(out, first) {
			out = append(out, first)
		}
	})
	return out
}

// ownTerm matches the records the owner rule gives a user session.
func ownTerm(c *call, typ string) arcql.Expr {
	acct := arcql.Value{Kind: arcql.KindString, Str: c.Principal.AccountID}
	var own arcql.Expr = &arcql.Compare{Path: arcql.Path{Parts: []string{"core.createdBy"}}, Op: arcql.OpEq, Value: acct}
	if typ == "Account" {
		own = &arcql.Or{Terms: []arcql.Expr{own, &arcql.Compare{Path: arcql.Path{Parts: []string{"core.id"}}, Op: arcql.OpEq, Value: acct}}}
	}
	return own
}

func and(f, g arcql.Expr) arcql.Expr {
	if f == nil {
		return g
	}
	return &arcql.And{Terms: []arcql.Expr{f, g}}
}

// requireData fails unless the caller may use the data operations: the
// instance token, a user session, or an anonymous caller where the
// instance allows anonymous requests (it then reaches what grants to
// anonymous allow, and nothing else).
func requireData(c *call) error {
	if c.Principal.Kind == auth.Anonymous && !c.Instance.Settings.AnonymousRequests {
		return errcode.New(errcode.Unauthenticated, "authorization required: send a token in the authorization header")
	}
	return nil
}
