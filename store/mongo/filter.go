package mongo

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/corehq/core/store/arcql"
)

// A filter compiles into two MongoDB filters built as values (never from
// text): pos selects a superset of the records the expression matches, neg
// a superset of those it does not (what its negation selects). A node is
// exact when pos selects exactly its matches and neg exactly the others;
// NOT swaps the two, so negation never needs a subset. Find runs pos and
// checks every record it reads with arcql.Match, so an inexact filter only
// costs records read, never a wrong answer; an exact one lets the server
// apply Skip and Limit.
//
// Exact here assumes what every typed field guarantees: no list directly
// inside a list on the path (only a Json value can hold one; MongoDB looks
// one list level deep where arcql looks through all).
type cond struct {
	pos, neg bson.D
	exact    bool
}

// all selects every document; never selects none (every document has an
// _id).
var (
	all   = bson.D{}
	never = bson.D{{Key: "_id", Value: bson.D{{Key: "$exists", Value: false}}}}
)

func isAll(d bson.D) bool { return len(d) == 0 }
func isNever(d bson.D) bool {
	if len(d) != 1 || d[0].Key != "_id" {
		return false
	}
	v, ok := d[0].Value.(bson.D)
	return ok && len(v) == 1 && v[0].Key == "$exists" && v[0].Value == false
}

// existTypes are the BSON types of a present, non-null leaf value. $type
// looks into arrays, so an empty list (or one of nulls) has none of them.
var existTypes = bson.A{"double", "string", "object", "bool", "int", "long", "date"}

// compile turns a bound, hop-free arcql expression into a cond. nil
// matches everything.
func compile(e arcql.Expr) (cond, error) {
	switch n := e.(type) {
	case nil, *arcql.All:
		return cond{pos: all, neg: never, exact: true}, nil
	case *arcql.Not:
		x, err := compile(n.X)
		if err != nil {
			return cond{}, err
		}
		return cond{pos: x.neg, neg: x.pos, exact: x.exact}, nil
	case *arcql.And:
		return compileTerms(n.Terms, true)
	case *arcql.Or:
		return compileTerms(n.Terms, false)
	case *arcql.Exist:
		p, _, exact, err := docPath(n.Path)
		if err != nil {
			return cond{}, err
		}
		pos := bson.D{{Key: p, Value: bson.D{{Key: "$type", Value: existTypes}}}}
		return cond{pos: pos, neg: nor(pos), exact: exact}, nil
	case *arcql.Compare:
		return compileCompare(n)
	case *arcql.Range:
		return compileRange(n)
	case *arcql.InIDs:
		return compileInIDs(n), nil
	case *arcql.Hop:
		return cond{}, errors.New("mongo: a reference hop reached the filter compiler unresolved")
	}
	return cond{}, fmt.Errorf("mongo: unknown filter node %T", e)
}

// compileTerms compiles an AND (and=true) or an OR of terms: by De Morgan,
// the negation of an AND is the OR of the negations, and so on.
func compileTerms(terms []arcql.Expr, and bool) (cond, error) {
	exact := true
	var pos, neg []bson.D
	for _, t := range terms {
		c, err := compile(t)
		if err != nil {
			return cond{}, err
		}
		exact = exact && c.exact
		pos, neg = append(pos, c.pos), append(neg, c.neg)
	}
	if and {
		return cond{pos: andOf(pos...), neg: orOf(neg...), exact: exact}, nil
	}
	return cond{pos: orOf(pos...), neg: andOf(neg...), exact: exact}, nil
}

// andOf joins filters with $and, folding all and never, flattening
// nested $and and writing terms with distinct keys as one document.
func andOf(ds ...bson.D) bson.D {
	var terms []bson.D
	var add func(d bson.D) bool
	add = func(d bson.D) bool {
		switch {
		case isNever(d):
			return false
		case isAll(d):
			return true
		}
		if len(d) == 1 && d[0].Key == "$and" {
			if inner, ok := d[0].Value.(bson.A); ok {
				for _, x := range inner {
					if !add(x.(bson.D)) {
						return false
					}
				}
				return true
			}
		}
		terms = append(terms, d)
		return true
	}
	for _, d := range ds {
		if !add(d) {
			return never
		}
	}
	switch len(terms) {
	case 0:
		return all
	case 1:
		return terms[0]
	}
	seen := map[string]bool{}
	var merged bson.D
	for _, d := range terms {
		for _, e := range d {
			if seen[e.Key] {
				a := make(bson.A, len(terms))
				for i, t := range terms {
					a[i] = t
				}
				return bson.D{{Key: "$and", Value: a}}
			}
			seen[e.Key] = true
			merged = append(merged, e)
		}
	}
	return merged
}

// orOf joins filters with $or, folding all and never.
func orOf(ds ...bson.D) bson.D {
	var terms bson.A
	for _, d := range ds {
		switch {
		case isAll(d):
			return all
		case isNever(d):
			continue
		}
		terms = append(terms, d)
	}
	switch len(terms) {
	case 0:
		return never
	case 1:
		return terms[0].(bson.D)
	}
	return bson.D{{Key: "$or", Value: terms}}
}

// nor is the exact negation of d.
func nor(d bson.D) bson.D {
	switch {
	case isAll(d):
		return never
	case isNever(d):
		return all
	}
	return bson.D{{Key: "$nor", Value: bson.A{d}}}
}

// docPath maps a bound path to its document path. meta is the metadata
// name ("core.created", …) or "". exact is false for a path that MongoDB
// reads differently from arcql: a numeric part below the field, which
// MongoDB also takes as a list index.
func docPath(p arcql.Path) (path, meta string, exact bool, err error) {
	parts := p.Parts
	if len(parts) == 0 {
		return "", "", false, errors.New("mongo: empty path in a filter")
	}
	name := parts[0]
	rest := parts[1:]
	if name == "core" && len(parts) >= 2 {
		name, rest = "core."+parts[1], parts[2:]
	}
	if strings.HasPrefix(name, "core.") {
		f, ok := metaField[name]
		if !ok || len(rest) > 0 {
			return "", "", false, fmt.Errorf("mongo: %s cannot be filtered or sorted on", p)
		}
		return f, name, true, nil
	}
	exact = true
	for _, r := range rest {
		if r != "" && strings.Trim(r, "0123456789") == "" {
			exact = false
		}
	}
	return fieldPath(parts), "", exact, nil
}

// isMetaTime reports the metadata timestamps, stored as BSON dates.
func isMetaTime(meta string) bool {
	return meta == "core.created" || meta == "core.updated" || meta == "core.trashed"
}

// timeLayout is how DateTime fields are stored (gql's fixed-width UTC
// milliseconds), so their text sorts chronologically.
const timeLayout = "2006-01-02T15:04:05.000Z"

// timeBound turns a comparison with an instant t into one with a whole
// millisecond, which is all that stored times hold: for example "> t"
// with a sub-millisecond t is "> floor(t)". never reports an equality
// that no stored time can satisfy.
func timeBound(op arcql.Op, t time.Time) (arcql.Op, time.Time, bool) {
	floor := t.Truncate(time.Millisecond)
	if floor.Equal(t) {
		return op, t, false
	}
	switch op {
	case arcql.OpEq:
		return op, floor, true
	case arcql.OpGe:
		return arcql.OpGt, floor, false
	case arcql.OpLt:
		return arcql.OpLe, floor, false
	}
	return op, floor, false // OpGt, OpLe
}

var opNames = map[arcql.Op]string{arcql.OpLt: "$lt", arcql.OpLe: "$lte", arcql.OpGt: "$gt", arcql.OpGe: "$gte"}

func compileCompare(c *arcql.Compare) (cond, error) {
	p, meta, exact, err := docPath(c.Path)
	if err != nil {
		return cond{}, err
	}
	v := c.Value
	switch c.Op {
	case arcql.OpWords, arcql.OpPrefix, arcql.OpWildcard:
		return compileText(p, meta, c.Op, v), nil
	case arcql.OpNe:
		eq := *c
		eq.Op = arcql.OpEq
		x, err := compileCompare(&eq)
		if err != nil {
			return cond{}, err
		}
		return cond{pos: x.neg, neg: x.pos, exact: x.exact}, nil
	}
	op := c.Op
	var val any
	switch v.Kind {
	case arcql.KindString:
		val = v.Str
	case arcql.KindNumber:
		val = numberValue(v)
	case arcql.KindBool:
		if op != arcql.OpEq {
			// Booleans have no order in arcql: no ordered comparison holds.
			return cond{pos: never, neg: all, exact: true}, nil
		}
		val = v.Bool
	case arcql.KindTime:
		var t time.Time
		var none bool
		op, t, none = timeBound(op, v.Time)
		if none {
			return cond{pos: never, neg: all, exact: true}, nil
		}
		if isMetaTime(meta) {
			val = dateOf(t)
		} else {
			// A DateTime field holds text: exact for the form the
			// service writes; Match decides for any other.
			val = t.UTC().Format(timeLayout)
			exact = false
		}
	default:
		return cond{}, fmt.Errorf("mongo: cannot compare %s with a value of kind %d", c.Path, v.Kind)
	}
	var pos bson.D
	if op == arcql.OpEq {
		pos = bson.D{{Key: p, Value: val}}
	} else {
		pos = bson.D{{Key: p, Value: bson.D{{Key: opNames[op], Value: val}}}}
	}
	c2 := cond{pos: pos, neg: nor(pos), exact: exact}
	if !exact {
		c2.neg = all
	}
	return c2, nil
}

// compileRange compiles IN: both bounds on the same field. On a list the
// two conditions may hold for different elements, so the filter is a
// superset unless the field holds single values; Match settles it. What
// its negation certainly excludes is a list with an element in range.
func compileRange(r *arcql.Range) (cond, error) {
	p, meta, _, err := docPath(r.Path)
	if err != nil {
		return cond{}, err
	}
	loOp, hiOp := arcql.OpGt, arcql.OpLt
	if r.LoIncl {
		loOp = arcql.OpGe
	}
	if r.HiIncl {
		hiOp = arcql.OpLe
	}
	bound := func(op arcql.Op, v arcql.Value) (string, any, bool) {
		switch v.Kind {
		case arcql.KindString:
			return opNames[op], v.Str, true
		case arcql.KindNumber:
			return opNames[op], numberValue(v), true
		case arcql.KindTime:
			op, t, _ := timeBound(op, v.Time)
			if isMetaTime(meta) {
				return opNames[op], dateOf(t), true
			}
			return opNames[op], t.UTC().Format(timeLayout), true
		}
		return "", nil, false // booleans and null have no order
	}
	lo, lv, ok1 := bound(loOp, r.Lo)
	hi, hv, ok2 := bound(hiOp, r.Hi)
	if !ok1 || !ok2 {
		return cond{pos: never, neg: all, exact: true}, nil
	}
	rng := bson.D{{Key: lo, Value: lv}, {Key: hi, Value: hv}}
	return cond{
		pos: bson.D{{Key: p, Value: rng}},
		neg: nor(bson.D{{Key: p, Value: bson.D{{Key: "$elemMatch", Value: rng}}}}),
	}, nil
}

func compileInIDs(in *arcql.InIDs) cond {
	if len(in.IDs) == 0 {
		return cond{pos: never, neg: all, exact: true}
	}
	p, ok := metaField[in.Field] // core.id, core.createdBy
	if !ok {
		p = fieldPath(strings.Split(in.Field, "."))
	}
	ids := make(bson.A, len(in.IDs))
	for i, id := range in.IDs {
		ids[i] = id
	}
	return cond{
		pos:   bson.D{{Key: p, Value: bson.D{{Key: "$in", Value: ids}}}},
		neg:   bson.D{{Key: p, Value: bson.D{{Key: "$nin", Value: ids}}}},
		exact: true,
	}
}

// compileText compiles ~, ^ and * as regular expressions built from the
// literal with every character quoted. They see text; arcql also lets them
// see numbers as their decimal text and timestamps as RFC 3339, which no
// regular expression reaches: when the literal could match such a text,
// pos adds every number (or the whole type, for a timestamp) and Match
// decides.
func compileText(p, meta string, op arcql.Op, v arcql.Value) cond {
	if v.Kind != arcql.KindString {
		return cond{pos: never, neg: all, exact: true}
	}
	if isMetaTime(meta) {
		return cond{pos: all, neg: all}
	}
	var re, opts string
	numeric := false
	exact := true
	switch op {
	case arcql.OpWords:
		words := splitWords(v.Str)
		if len(words) == 0 {
			return cond{pos: never, neg: all, exact: true}
		}
		var terms []bson.D
		for _, w := range words {
			terms = append(terms, bson.D{{Key: p, Value: bson.D{
				{Key: "$regex", Value: regexp.QuoteMeta(w)}, {Key: "$options", Value: "i"}}}})
			numeric = numeric || numericText(w)
		}
		pos := andOf(terms...)
		if numeric {
			pos = orOf(pos, bson.D{{Key: p, Value: bson.D{{Key: "$type", Value: "number"}}}})
		}
		// Substrings, not words: a superset.
		return cond{pos: pos, neg: all}
	case arcql.OpPrefix:
		re = "^" + regexp.QuoteMeta(v.Str)
		numeric = numericText(v.Str)
	case arcql.OpWildcard:
		var b strings.Builder
		b.WriteString("^")
		lit := make([]rune, 0, len(v.Str))
		for _, r := range v.Str {
			switch r {
			case '*':
				b.WriteString(".*")
			case '?':
				b.WriteString(".")
			default:
				b.WriteString(regexp.QuoteMeta(string(r)))
				lit = append(lit, r)
			}
		}
		b.WriteString("$")
		re, opts = b.String(), "s"
		numeric = numericText(string(lit))
	}
	rx := bson.D{{Key: "$regex", Value: re}}
	if opts != "" {
		rx = append(rx, bson.E{Key: "$options", Value: opts})
	}
	pos := bson.D{{Key: p, Value: rx}}
	if numeric {
		pos = orOf(pos, bson.D{{Key: p, Value: bson.D{{Key: "$type", Value: "number"}}}})
		exact = false
	}
	if !exact {
		return cond{pos: pos, neg: all}
	}
	return cond{pos: pos, neg: nor(pos), exact: true}
}

// numericText reports whether s could be (part of) the decimal text of a
// number: strconv.FormatFloat(x, 'f', -1, 64) writes only these runes.
func numericText(s string) bool {
	return strings.Trim(s, "+-0123456789.NaInf") == ""
}

// splitWords splits text into words as arcql does: runs of letters and
// digits, combining marks kept in the word they follow.
func splitWords(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		w := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		if start < 0 && w && !unicode.IsMark(r) {
			start = i
		} else if start >= 0 && !w {
			out = append(out, s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// numberValue is a numeric literal as MongoDB compares it: an int64 when
// float64 cannot hold it exactly (a Long beyond 2^53), else a double.
func numberValue(v arcql.Value) any {
	if v.IsInt {
		return v.Int
	}
	return v.Num
}
