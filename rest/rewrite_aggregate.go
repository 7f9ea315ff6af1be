package rest

import (
	"slices"
	"strings"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
)

// aggregateParams are the query parameters of GET /aggregate/{type}.
var aggregateParams = []string{"after", "distinct", "first", "groupBy", "having", "includeTrashed", "where"}

// rewriteAggregate rewrites GET /aggregate/{type} into Query.aggregate:
// the type's field (where, includeTrashed) or, with groupBy, its With
// field aliased to the type's name, so that the answer is always
// {"data": {"aggregate": {"<type>": …}}} (an object, or a list of groups).
// The selection is every aggregate of every field; distinct=true adds
// countDistinct, sumDistinct and avgDistinct. groupBy is repeatable:
// field[:ASC|DESC][:UNIT].
func rewriteAggregate(a *API, r Request) (Plan, error) {
	if err := checkType(a, r.Aggregate); err != nil {
		return Plan{}, err
	}
	var unknown []string
	for name := range r.Query {
		if !slices.Contains(aggregateParams, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		return Plan{}, unknownNames("parameter", unknown, aggregateParams)
	}
	t, _ := a.model.Type(r.Aggregate)
	name := gql.AggregateField(t.Name)
	agg, err := builtin(a, rootQuery, "aggregate")
	if err != nil {
		return Plan{}, err
	}
	field := named(agg.out).(*graphql.Object).Fields()[name]
	grouped := r.Query.Has("groupBy")
	if grouped {
		field = named(agg.out).(*graphql.Object).Fields()[name+"With"]
	} else {
		for _, p := range []string{"having", "first", "after"} {
			if r.Query.Has(p) {
				return Plan{}, errcode.New(errcode.BadRequest, "parameter %s applies to groups: give groupBy too", p)
			}
		}
	}
	vars := map[string]any{}
	for _, arg := range field.Args {
		vals, ok := r.Query[arg.PrivateName]
		if !ok {
			continue
		}
		var v any
		var err error
		if arg.PrivateName == "groupBy" {
			v, err = groupByArg(t.Name, vals, arg.Type)
		} else {
			v, err = coerce(arg.PrivateName, vals, arg.Type)
		}
		if err != nil {
			return Plan{}, err
		}
		vars[arg.PrivateName] = v
	}
	distinct := false
	if vals, ok := r.Query["distinct"]; ok {
		v, err := coerce("distinct", vals, graphql.Boolean)
		if err != nil {
			return Plan{}, err
		}
		distinct = v.(bool)
	}
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	slices.Sort(names)

	var b strings.Builder
	b.WriteString("query")
	if len(names) > 0 {
		b.WriteString("(")
		for i, n := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("$" + n + ": " + argType(field, n).String())
		}
		b.WriteString(")")
	}
	b.WriteString(" { aggregate { " + name + ": " + field.Name)
	if len(names) > 0 {
		b.WriteString("(")
		for i, n := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n + ": $" + n)
		}
		b.WriteString(")")
	}
	b.WriteString(" ")
	b.WriteString(aggSelection(named(field.Type).(*graphql.Object), distinct))
	b.WriteString(" } }")
	return Plan{GraphQL: gql.Request{Query: b.String(), Variables: vars}, Field: "aggregate", Shape: ShapeData}, nil
}

func argType(f *graphql.FieldDefinition, name string) graphql.Type {
	for _, a := range f.Args {
		if a.PrivateName == name {
			return a.Type
		}
	}
	return nil
}

// groupByArg reads groupBy values: field[:ASC|DESC][:UNIT].
func groupByArg(typ string, vals []string, t graphql.Input) (any, error) {
	in := named(t).(*graphql.InputObject)
	fieldEnum := named(in.Fields()["field"].Type).(*graphql.Enum)
	unitEnum := named(in.Fields()["dateGranularity"].Type).(*graphql.Enum)
	has := func(e *graphql.Enum, v string) bool {
		return slices.ContainsFunc(e.Values(), func(ev *graphql.EnumValueDefinition) bool { return ev.Name == v })
	}
	out := make([]any, 0, len(vals))
	for _, v := range vals {
		parts := strings.Split(v, ":")
		if len(parts) > 3 || parts[0] == "" {
			return nil, errcode.New(errcode.BadRequest, "parameter groupBy: %s is not field[:ASC|DESC][:UNIT]", quoteShort(v))
		}
		if !has(fieldEnum, parts[0]) {
			return nil, errcode.New(errcode.BadRequest, "parameter groupBy: %s has no field %s to group by", typ, quoteShort(parts[0]))
		}
		key := map[string]any{"field": parts[0]}
		for _, p := range parts[1:] {
			switch {
			case (p == "ASC" || p == "DESC") && key["order"] == nil && key["dateGranularity"] == nil:
				key["order"] = p
			case has(unitEnum, p) && key["dateGranularity"] == nil:
				key["dateGranularity"] = p
			default:
				return nil, errcode.New(errcode.BadRequest, "parameter groupBy: %s is not field[:ASC|DESC][:UNIT] (UNIT: SECONDS, MINUTES, HOURS, DAYS, MONTHS or YEARS)", quoteShort(v))
			}
		}
		out = append(out, key)
	}
	return out, nil
}

// aggSelection selects every aggregate of a <T>Aggs object: every field
// of every Agg object, and with distinct the distinct variants too.
func aggSelection(o *graphql.Object, distinct bool) string {
	var b strings.Builder
	var sel func(o *graphql.Object)
	sel = func(o *graphql.Object) {
		b.WriteString("{")
		for _, n := range fieldOrder(o) {
			if omitted(o, n) {
				continue
			}
			fd := o.Fields()[n]
			b.WriteString(" " + n)
			if sub, ok := named(fd.Type).(*graphql.Object); ok {
				b.WriteString(" ")
				sel(sub)
			}
			if distinct && len(fd.Args) == 1 && fd.Args[0].PrivateName == "distinct" {
				b.WriteString(" " + n + "Distinct: " + n + "(distinct: true)")
			}
		}
		b.WriteString(" }")
	}
	sel(o)
	return b.String()
}

// omitted reports whether REST leaves field n of o out of its answers: a
// field aggregate's groupValues (AggInt, AggFloat, AggDateTime, AggOther),
// Hypi's place for them, which repeat the group's own.
func omitted(o *graphql.Object, n string) bool {
	return n == "groupValues" && strings.HasPrefix(o.Name(), "Agg")
}
