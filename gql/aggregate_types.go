package gql

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
)

// Aggregations: Query.aggregate is a CoreAggregation with two fields per
// record type, book (one group of every record a where filter selects)
// and bookWith (groups by groupBy keys, kept by having, paged by first and
// after). Each answers BookAggs: core { count created updated cursor },
// one AggInt, AggFloat, AggDateTime or AggOther per aggregatable field,
// and groupValues. The store computes them in one pass (store.Aggregate);
// only the fields the selection (and having) names are aggregated, and
// distinct sets only where a distinct argument is given. This file builds
// the types; resolve_aggregate.go answers them.

// coreCreated and coreUpdated are the group keys of the record times, as
// the <T>AggField enums spell them.
const (
	coreCreated = "core_created"
	coreUpdated = "core_updated"
)

// aggKinds are the object types of the aggregates of one field.
type aggKinds struct {
	intT, floatT, timeT, otherT, core, pair *graphql.Object
	order, unit                             *graphql.Enum
}

// aggregatable lists the fields of a type that have aggregates: single
// scalars, enums and references that are not hidden. A field named
// groupValues is left out (the name is the group's values).
func aggregatable(t *schema.Type) []*schema.Field {
	var out []*schema.Field
	for _, f := range t.Fields {
		if f.Hidden || f.List || f.Kind == schema.KindObject || f.Name == "groupValues" || (f.Kind == schema.KindScalar && schema.IsJSONScalar(f.Type)) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// aggSource is the source of a <T>Aggs object: one group.
type aggSource struct {
	g       *store.Group
	grouped bool
	keys    []store.GroupKey
}

// fieldAggSource is the source of an Agg* object.
type fieldAggSource struct {
	fa   *store.FieldAggs
	kind string // Int, Float, DateTime or "" (other)
	// group is the group the aggregates are of, for groupValues.
	group *aggSource
}

// AggregateField is the CoreAggregation field of a record type: its name
// with the first letter lower-case (book for Book; bookWith groups).
func AggregateField(typ string) string { return lowerFirst(typ) }

// lowerFirst is a type name as the CoreAggregation fields spell it.
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// newAggKinds builds the types every record type's aggregates share.
func newAggKinds(dateTime graphql.Output) *aggKinds {
	k := &aggKinds{}
	distinct := graphql.FieldConfigArgument{"distinct": &graphql.ArgumentConfig{Type: graphql.Boolean, Description: "Over distinct values only."}}
	pick := func(p graphql.ResolveParams, all, dist any) any {
		if d, _ := p.Args["distinct"].(bool); d {
			return dist
		}
		return all
	}
	count := &graphql.Field{Type: graphql.NewNonNull(graphql.Int), Args: distinct, Description: "The number of values (not null).",
		Resolve: func(p graphql.ResolveParams) (any, error) {
			fa := p.Source.(*fieldAggSource).fa
			return pick(p, fa.Count, fa.CountDist), nil
		}}
	sum := func(t graphql.Output) *graphql.Field {
		return &graphql.Field{Type: t, Args: distinct, Description: "The sum of the values; null when there are none.",
			Resolve: func(p graphql.ResolveParams) (any, error) {
				fa := p.Source.(*fieldAggSource).fa
				return pick(p, fa.Sum, fa.SumDist), nil
			}}
	}
	avg := &graphql.Field{Type: graphql.Float, Args: distinct, Description: "The mean of the values; null when there are none.",
		Resolve: func(p graphql.ResolveParams) (any, error) {
			fa := p.Source.(*fieldAggSource).fa
			return pick(p, fa.Avg, fa.AvgDist), nil
		}}
	extreme := func(t graphql.Output, max bool) *graphql.Field {
		desc := "The least value"
		if max {
			desc = "The greatest value"
		}
		return &graphql.Field{Type: t, Description: desc + "; null when there are none.",
			Resolve: func(p graphql.ResolveParams) (any, error) {
				fa := p.Source.(*fieldAggSource).fa
				if max {
					return fa.Max, nil
				}
				return fa.Min, nil
			}}
	}
	k.pair = graphql.NewObject(graphql.ObjectConfig{Name: "Pair", Description: "A group key and its value, as text (null for records without one).", Fields: graphql.Fields{
		"key":   &graphql.Field{Type: graphql.NewNonNull(graphql.String)},
		"value": &graphql.Field{Type: graphql.String},
	}})
	// groupValues inside each field's aggregates, where Hypi has them
	// (price { avg groupValues { key value } }), as on the group itself.
	fieldGroupValues := &graphql.Field{Type: graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(k.pair))),
		Description: "The group's key values, as text (none when not grouped): the same as the group's own groupValues.",
		Resolve: func(p graphql.ResolveParams) (any, error) {
			return groupPairs(p.Source.(*fieldAggSource).group), nil
		}}
	k.intT = graphql.NewObject(graphql.ObjectConfig{Name: "AggInt", Description: "Aggregates of an Int field.", Fields: graphql.Fields{
		"count": count, "sum": sum(graphql.Int), "avg": avg, "min": extreme(graphql.Int, false), "max": extreme(graphql.Int, true), "groupValues": fieldGroupValues}})
	k.floatT = graphql.NewObject(graphql.ObjectConfig{Name: "AggFloat", Description: "Aggregates of a Float field.", Fields: graphql.Fields{
		"count": count, "sum": sum(graphql.Float), "avg": avg, "min": extreme(graphql.Float, false), "max": extreme(graphql.Float, true), "groupValues": fieldGroupValues}})
	k.timeT = graphql.NewObject(graphql.ObjectConfig{Name: "AggDateTime", Description: "Aggregates of a DateTime field.", Fields: graphql.Fields{
		"count": count, "min": extreme(dateTime, false), "max": extreme(dateTime, true), "groupValues": fieldGroupValues}})
	k.otherT = graphql.NewObject(graphql.ObjectConfig{Name: "AggOther", Description: "Aggregates of a field that is not a number or a time.", Fields: graphql.Fields{
		"count": count, "groupValues": fieldGroupValues}})
	times := func(field string) *graphql.Field {
		return &graphql.Field{Type: k.timeT, Resolve: func(p graphql.ResolveParams) (any, error) {
			s := p.Source.(*aggSource)
			return &fieldAggSource{fa: s.g.Fields[field], kind: "DateTime", group: s}, nil
		}}
	}
	k.core = graphql.NewObject(graphql.ObjectConfig{Name: "CoreAggs", Description: "The records of a group.", Fields: graphql.Fields{
		"count": &graphql.Field{Type: graphql.NewNonNull(graphql.Int), Description: "The number of records.",
			Resolve: func(p graphql.ResolveParams) (any, error) { return p.Source.(*aggSource).g.Count, nil }},
		"created": times("core.created"),
		"updated": times("core.updated"),
		"cursor": &graphql.Field{Type: graphql.String, Description: "The group's position, for after; null when not grouped.",
			Resolve: func(p graphql.ResolveParams) (any, error) {
				s := p.Source.(*aggSource)
				if !s.grouped {
					return nil, nil
				}
				return encodeGroupCursor(s.g.Keys), nil
			}},
	}})
	k.order = graphql.NewEnum(graphql.EnumConfig{Name: "AggOrder", Values: graphql.EnumValueConfigMap{
		"ASC": {Value: "ASC"}, "DESC": {Value: "DESC"}}})
	units := graphql.EnumValueConfigMap{}
	for _, u := range []store.TimeUnit{store.Seconds, store.Minutes, store.Hours, store.Days, store.Months, store.Years} {
		units[string(u)] = &graphql.EnumValueConfig{Value: string(u)}
	}
	k.unit = graphql.NewEnum(graphql.EnumConfig{Name: "TimeUnit", Description: "A time bucket, in UTC.", Values: units})
	return k
}

// aggregateField returns Query.aggregate.
func (b *builder) aggregateField() *graphql.Field {
	k := newAggKinds(b.scalars["DateTime"])
	fields := graphql.Fields{}
	for _, t := range b.m.Types {
		aggs := b.aggsObject(t, k)
		name := lowerFirst(t.Name)
		typ := t
		where := &graphql.ArgumentConfig{Type: graphql.String, Description: "An ArcQL filter; the records it selects are aggregated (default: all)."}
		trashed := &graphql.ArgumentConfig{Type: graphql.Boolean, Description: "Count trashed records too."}
		fields[name] = &graphql.Field{
			Type:        graphql.NewNonNull(aggs),
			Description: "Aggregates of the " + t.Name + " records a filter selects.",
			Args:        graphql.FieldConfigArgument{"where": where, "includeTrashed": trashed},
			Resolve:     func(p graphql.ResolveParams) (any, error) { return resolveAggregate(p, typ, false) },
		}
		fields[name+"With"] = &graphql.Field{
			Type:        graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(aggs))),
			Description: "Aggregates of the " + t.Name + " records a filter selects, by group.",
			Args: graphql.FieldConfigArgument{
				"where":          where,
				"groupBy":        &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(b.groupByInput(t, k))))},
				"having":         &graphql.ArgumentConfig{Type: graphql.String, Description: "An ArcQL filter over a group's aggregates: core.count, <field>.sum, …"},
				"first":          &graphql.ArgumentConfig{Type: graphql.Int, Description: fmt.Sprintf("At most this many groups (default %d, at most %d).", defaultGroups, maxGroups)},
				"after":          &graphql.ArgumentConfig{Type: graphql.String, Description: "Only the groups after the one with this cursor (core.cursor)."},
				"includeTrashed": trashed,
			},
			Resolve: func(p graphql.ResolveParams) (any, error) { return resolveAggregate(p, typ, true) },
		}
	}
	agg := graphql.NewObject(graphql.ObjectConfig{Name: "CoreAggregation", Description: "Aggregates of every record type.", Fields: fields})
	return &graphql.Field{
		Type:        graphql.NewNonNull(agg),
		Description: "Counts, sums, averages, extremes and groups of the records the caller may read.",
		Resolve:     func(graphql.ResolveParams) (any, error) { return struct{}{}, nil },
	}
}

// aggsObject returns <T>Aggs.
func (b *builder) aggsObject(t *schema.Type, k *aggKinds) *graphql.Object {
	fields := graphql.Fields{
		"core": &graphql.Field{Type: graphql.NewNonNull(k.core), Resolve: func(p graphql.ResolveParams) (any, error) { return p.Source, nil }},
		"groupValues": &graphql.Field{Type: graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(k.pair))),
			Description: "The group's key values, as text (none when not grouped).",
			Resolve: func(p graphql.ResolveParams) (any, error) {
				return groupPairs(p.Source.(*aggSource)), nil
			}},
	}
	for _, f := range aggregatable(t) {
		name := f.Name
		var out *graphql.Object
		kind := ""
		switch {
		case f.Kind == schema.KindScalar && f.Type == "Int":
			out, kind = k.intT, "Int"
		case f.Kind == schema.KindScalar && f.Type == "Float":
			out, kind = k.floatT, "Float"
		case f.Kind == schema.KindScalar && f.Type == "DateTime":
			out, kind = k.timeT, "DateTime"
		default:
			out = k.otherT
		}
		fields[name] = &graphql.Field{Type: graphql.NewNonNull(out), Resolve: func(p graphql.ResolveParams) (any, error) {
			s := p.Source.(*aggSource)
			return &fieldAggSource{fa: s.g.Fields[name], kind: kind, group: s}, nil
		}}
	}
	return graphql.NewObject(graphql.ObjectConfig{Name: t.Name + "Aggs", Description: "Aggregates of " + t.Name + " records.", Fields: fields})
}

// groupByInput returns <T>GroupBy and its <T>AggField enum.
func (b *builder) groupByInput(t *schema.Type, k *aggKinds) *graphql.InputObject {
	values := graphql.EnumValueConfigMap{
		coreCreated: {Value: coreCreated},
		coreUpdated: {Value: coreUpdated},
	}
	for _, f := range aggregatable(t) {
		values[f.Name] = &graphql.EnumValueConfig{Value: f.Name}
	}
	field := graphql.NewEnum(graphql.EnumConfig{Name: t.Name + "AggField", Values: values})
	return graphql.NewInputObject(graphql.InputObjectConfig{Name: t.Name + "GroupBy", Fields: graphql.InputObjectConfigFieldMap{
		"field":           {Type: graphql.NewNonNull(field)},
		"order":           {Type: k.order, Description: "ASC (default) or DESC."},
		"dateGranularity": {Type: k.unit, Description: "Buckets a DateTime key in UTC."},
	}})
}

// groupKeyName is a group key's field as clients name it.
func groupKeyName(field string) string {
	switch field {
	case "core.created":
		return coreCreated
	case "core.updated":
		return coreUpdated
	}
	return field
}

// groupValueText is a group value as text: numbers as JSON writes them,
// times as DateTime does, null as null.
func groupValueText(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case time.Time:
		return formatTime(x)
	}
	return fmt.Sprint(v)
}

// groupPairs is groupValues: a group's key values, as text.
func groupPairs(s *aggSource) []map[string]any {
	out := make([]map[string]any, len(s.keys))
	for i, key := range s.keys {
		out[i] = map[string]any{"key": groupKeyName(key.Field), "value": groupValueText(s.g.Keys[i])}
	}
	return out
}
