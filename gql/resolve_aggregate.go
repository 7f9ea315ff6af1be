package gql

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// Query.aggregate's resolvers (its types: aggregate_types.go).

// The memory of aggregations: each holds at most store.DefaultMaxBytes of
// groups and distinct values (TOO_COMPLEX past it), and all the engine's
// aggregations at once aggregateMemory (UNAVAILABLE past it: the next may
// pass). Three aggregations at their bound fit at once; a fourth fails
// until one ends. The bounds count an estimate of the heap held; the process's
// heap grows to about three times that at the collector's target (cored's
// GOGC 200).
const aggregateMemory = 3 * store.DefaultMaxBytes

// Group paging: first defaults to defaultGroups and may not pass
// maxGroups.
const (
	defaultGroups = 1000
	maxGroups     = 10_000
)

// resolveAggregate answers <type> and <type>With.
func resolveAggregate(p graphql.ResolveParams, t *schema.Type, grouped bool) (any, error) {
	c := callFrom(p.Context)
	if err := requireData(c); err != nil {
		return nil, err
	}
	q := &store.AggQuery{Type: t.Name, Shared: c.aggMemory}
	for _, f := range aggregatable(t) {
		if f.Kind == schema.KindScalar && f.Type == "Int" {
			q.Ints = append(q.Ints, f.Name)
		}
	}
	q.IncludeTrashed, _ = p.Args["includeTrashed"].(bool)
	where, _ := p.Args["where"].(string)
	if where != "" {
		bq, err := bindFilter(p.Context, c, t.Name, where)
		if err != nil {
			return nil, err
		}
		if len(bq.Sort) > 0 {
			return nil, errcode.New(errcode.BadFilter, "where: an aggregate's filter cannot sort (groupBy orders the groups)")
		}
		q.Filter = bq.Filter
	}
	if grouped {
		if err := groupArgs(c, p, t, q); err != nil {
			return nil, err
		}
	}
	q.Fields = selectedAggregates(p, t, q.Having)
	filter, err := scopeFilter(p.Context, c, t.Name, "find", q.Filter, nil)
	if err != nil {
		return nil, err
	}
	q.Filter = filter
	groups, err := aggregateFor(p, c, q)
	if err != nil {
		return nil, err
	}
	if !grouped {
		return &aggSource{g: groups[0]}, nil
	}
	out := make([]*aggSource, len(groups))
	for i, g := range groups {
		out[i] = &aggSource{g: g, grouped: true, keys: q.GroupBy}
	}
	return out, nil
}

// aggregateFor computes a query's groups. A caller whose grants cover
// only some fields of some records sees those fields as null there, like
// find shows them: its records are read a batch at a time, masked, and
// aggregated here; every other caller's are aggregated by the store.
func aggregateFor(p graphql.ResolveParams, c *call, q *store.AggQuery) ([]*store.Group, error) {
	masked := false
	if c.Principal.Kind != auth.InstanceAdmin {
		s, err := c.rights(p.Context, q.Type, "find")
		if err != nil {
			return nil, err
		}
		masked = s.Limited()
	}
	if !masked {
		groups, err := c.Store.Aggregate(p.Context, c.Instance.ID, q)
		if err != nil {
			return nil, storeError(err)
		}
		return groups, nil
	}
	acc := store.NewAccumulator(q)
	defer acc.Release()
	after := ""
	for {
		recs, err := c.Store.Find(p.Context, c.Instance.ID, &store.Query{Type: q.Type, Filter: q.Filter, IncludeTrashed: q.IncludeTrashed, After: after, Limit: maskedBatch})
		if err != nil {
			return nil, storeError(err)
		}
		for _, r := range recs {
			if err := acc.Add(shown(p.Context, c, r)); err != nil {
				return nil, storeError(err)
			}
		}
		if len(recs) < maskedBatch {
			return acc.Groups(), nil
		}
		after = recs[len(recs)-1].ID
	}
}

// maskedBatch is how many records aggregateFor reads at a time.
const maskedBatch = 1000

// groupArgs reads groupBy, having, first and after.
func groupArgs(c *call, p graphql.ResolveParams, t *schema.Type, q *store.AggQuery) error {
	keys, _ := p.Args["groupBy"].([]any)
	if len(keys) == 0 {
		return errcode.New(errcode.BadRequest, "groupBy: name at least one field")
	}
	seen := map[string]bool{}
	for _, raw := range keys {
		m, _ := raw.(map[string]any)
		name, _ := m["field"].(string)
		key := store.GroupKey{Field: name}
		switch name {
		case coreCreated:
			key.Field = "core.created"
		case coreUpdated:
			key.Field = "core.updated"
		}
		if seen[key.Field] {
			return errcode.New(errcode.BadRequest, "groupBy: %s is named twice", name)
		}
		seen[key.Field] = true
		key.Desc = m["order"] == "DESC"
		if unit, _ := m["dateGranularity"].(string); unit != "" {
			if f, ok := t.Field(key.Field); ok && f.Type != "DateTime" {
				return errcode.New(errcode.BadRequest, "groupBy: dateGranularity applies to DateTime fields; %s.%s is %s", t.Name, name, f.Type)
			}
			key.Unit = store.TimeUnit(unit)
		}
		q.GroupBy = append(q.GroupBy, key)
	}
	if text, _ := p.Args["having"].(string); text != "" {
		pq, err := arcql.Parse(text, arcql.DefaultLimits())
		if err == nil {
			pq, err = arcql.Bind(pq, aggSchema(c, t), t.Name, c.Instance.ID)
		}
		if err != nil {
			return errcode.Wrap(errcode.BadFilter, err, "having: %s", err.Error())
		}
		if len(pq.Sort) > 0 {
			return errcode.New(errcode.BadFilter, "having: cannot sort (groupBy orders the groups)")
		}
		q.Having = pq.Filter
	}
	q.First = defaultGroups
	if n, ok := p.Args["first"].(int); ok {
		if n < 1 || n > maxGroups {
			return errcode.New(errcode.BadRequest, "first: must be between 1 and %d", maxGroups)
		}
		q.First = n
	}
	if cur, _ := p.Args["after"].(string); cur != "" {
		after, err := decodeGroupCursor(cur, len(q.GroupBy))
		if err != nil {
			return err
		}
		q.After = after
	}
	return nil
}

// aggSchema describes a type's aggregates to having's binder.
func aggSchema(c *call, t *schema.Type) store.AggSchema {
	kinds := map[string]arcql.FieldKind{}
	for _, f := range aggregatable(t) {
		if af, ok := c.schema.model.Field(t.Name, f.Name); ok {
			kinds[f.Name] = af.Kind
		}
	}
	return store.AggSchema{Kinds: kinds}
}

// selectedAggregates lists the field aggregates a selection of <T>Aggs
// (and having) reads; Distinct where a distinct argument is given.
func selectedAggregates(p graphql.ResolveParams, t *schema.Type, having arcql.Expr) []store.AggField {
	want := map[string]bool{} // field → distinct
	var order []string
	need := func(field string, distinct bool) {
		d, ok := want[field]
		if !ok {
			order = append(order, field)
		}
		want[field] = d || distinct
	}
	aggregated := map[string]bool{}
	for _, f := range aggregatable(t) {
		aggregated[f.Name] = true
	}
	for _, sel := range fieldsOf(p, p.Info.FieldASTs) {
		switch {
		case sel.Name.Value == "core":
			for _, sub := range fieldsOf(p, []*ast.Field{sel}) {
				switch sub.Name.Value {
				case "created":
					need("core.created", usesDistinct(p, sub))
				case "updated":
					need("core.updated", usesDistinct(p, sub))
				}
			}
		case aggregated[sel.Name.Value]:
			need(sel.Name.Value, usesDistinct(p, sel))
		}
	}
	arcql.Fields(having, nil, func(name string) {
		field, agg, _ := strings.Cut(name, ".")
		if aggregated[field] {
			need(field, strings.HasSuffix(agg, "Distinct"))
		}
	})
	out := make([]store.AggField, len(order))
	for i, f := range order {
		out[i] = store.AggField{Field: f, Distinct: want[f]}
	}
	return out
}

// fieldsOf lists the fields selected under some fields, fragments
// flattened.
func fieldsOf(p graphql.ResolveParams, parents []*ast.Field) []*ast.Field {
	var out []*ast.Field
	var walk func(set *ast.SelectionSet, depth int)
	walk = func(set *ast.SelectionSet, depth int) {
		if set == nil || depth > 64 {
			return
		}
		for _, s := range set.Selections {
			switch s := s.(type) {
			case *ast.Field:
				out = append(out, s)
			case *ast.InlineFragment:
				walk(s.SelectionSet, depth+1)
			case *ast.FragmentSpread:
				if def, ok := p.Info.Fragments[s.Name.Value].(*ast.FragmentDefinition); ok {
					walk(def.SelectionSet, depth+1)
				}
			}
		}
	}
	for _, f := range parents {
		walk(f.SelectionSet, 0)
	}
	return out
}

// usesDistinct reports whether a selection of an Agg* object passes a
// distinct argument anywhere.
func usesDistinct(p graphql.ResolveParams, f *ast.Field) bool {
	for _, sub := range fieldsOf(p, []*ast.Field{f}) {
		for _, a := range sub.Arguments {
			if a.Name.Value == "distinct" {
				return true
			}
		}
	}
	return false
}

// A group cursor is its key values, as JSON with the kinds kept
// (numbers as {"n": text}, times as {"t": text}), in base64url.
func encodeGroupCursor(keys []any) string {
	out := make([]any, len(keys))
	for i, k := range keys {
		switch x := k.(type) {
		case int64:
			out[i] = map[string]string{"i": strconv.FormatInt(x, 10)}
		case float64:
			out[i] = map[string]string{"f": strconv.FormatFloat(x, 'g', -1, 64)}
		case time.Time:
			out[i] = map[string]string{"t": x.UTC().Format(time.RFC3339Nano)}
		default:
			out[i] = x
		}
	}
	b, _ := json.Marshal(out)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeGroupCursor(s string, n int) ([]any, error) {
	bad := errcode.New(errcode.BadRequest, "after: not a group cursor of this query")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) > 64<<10 {
		return nil, bad
	}
	var raw []any
	if json.Unmarshal(b, &raw) != nil || len(raw) != n {
		return nil, bad
	}
	for i, v := range raw {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if len(m) != 1 {
			return nil, bad
		}
		var text string
		var kind string
		for kind, v = range m {
			text, ok = v.(string)
		}
		if !ok {
			return nil, bad
		}
		switch kind {
		case "i":
			raw[i], err = strconv.ParseInt(text, 10, 64)
		case "f":
			var f float64
			f, err = strconv.ParseFloat(text, 64)
			if math.IsNaN(f) {
				err = bad
			}
			raw[i] = f
		case "t":
			raw[i], err = time.Parse(time.RFC3339Nano, text)
		default:
			err = bad
		}
		if err != nil {
			return nil, bad
		}
	}
	return raw, nil
}
