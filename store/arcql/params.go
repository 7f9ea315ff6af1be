package arcql

import (
	"slices"
	"time"
)

// Params are the values of an access rule's parameters for one request.
type Params struct {
	// Caller is the calling account's id; "" for an anonymous caller (and
	// for the instance token, which no rule concerns).
	Caller string
	// Now is the request's timestamp.
	Now time.Time
}

// WithParams returns the bound rule e with its parameters given their
// values; e is not modified and is returned itself when it has none.
//
// An anonymous caller (Caller "") matches no $caller comparison, and
// negating one does not turn it into a match: a comparison with $caller
// becomes whatever allows the least where it stands, false under an even
// number of NOTs and true under an odd number, so that neither
// `owner = $caller` nor `NOT owner = $caller` (nor `owner != $caller`)
// lets an anonymous caller through. A rule only widens by such terms
// what it already allows without them.
func WithParams(e Expr, p Params) Expr {
	s := &substitution{p: p, now: Value{Kind: KindTime, Time: p.Now.UTC(), Str: canonicalTime(p.Now.UTC())}}
	return s.expr(e, false)
}

type substitution struct {
	p   Params
	now Value
}

// expr substitutes in e; negated says whether e stands under an odd number
// of NOTs.
func (s *substitution) expr(e Expr, negated bool) Expr {
	switch n := e.(type) {
	case *And:
		terms, changed := s.terms(n.Terms, negated)
		if !changed {
			return e
		}
		return fold(&And{Terms: terms})
	case *Or:
		terms, changed := s.terms(n.Terms, negated)
		if !changed {
			return e
		}
		return fold(&Or{Terms: terms})
	case *Not:
		x := s.expr(n.X, !negated)
		if x == n.X {
			return e
		}
		return not(x)
	case *Hop:
		sub := s.expr(n.Sub, negated)
		if sub == n.Sub {
			return e
		}
		if isNever(sub) {
			return Never()
		}
		return &Hop{Field: n.Field, List: n.List, Target: n.Target, Sub: sub}
	case *Compare:
		if n.Value.Kind != KindParam {
			return e
		}
		if n.Value.Str == "caller" && s.p.Caller == "" {
			if negated {
				return &All{}
			}
			return Never()
		}
		c := *n
		c.Value = s.value(n.Value)
		return &c
	case *Range:
		if n.Lo.Kind != KindParam && n.Hi.Kind != KindParam {
			return e
		}
		r := *n
		r.Lo, r.Hi = s.value(n.Lo), s.value(n.Hi)
		return &r
	}
	return e
}

// value gives a parameter its value (other values stay).
func (s *substitution) value(v Value) Value {
	if v.Kind != KindParam {
		return v
	}
	switch v.Str {
	case "caller":
		return Value{Kind: KindString, Str: s.p.Caller, Pos: v.Pos}
	case "now":
		now := s.now
		now.Pos = v.Pos
		return now
	}
	return v
}

func (s *substitution) terms(in []Expr, negated bool) ([]Expr, bool) {
	var out []Expr
	for i, t := range in {
		x := s.expr(t, negated)
		if x != t && out == nil {
			out = slices.Clone(in[:i:i])
			out = append(out, make([]Expr, 0, len(in)-i)...)
		}
		if out != nil {
			out = append(out, x)
		}
	}
	return out, out != nil
}

// fold drops the constant terms of an And or Or, as Bind does.
func fold(e Expr) Expr {
	switch n := e.(type) {
	case *And:
		var terms []Expr
		for _, t := range n.Terms {
			if isNever(t) {
				return Never()
			}
			if !isAll(t) {
				terms = append(terms, t)
			}
		}
		switch len(terms) {
		case 0:
			return &All{}
		case 1:
			return terms[0]
		}
		return &And{Terms: terms}
	case *Or:
		var terms []Expr
		for _, t := range n.Terms {
			if isAll(t) {
				return &All{}
			}
			if !isNever(t) {
				terms = append(terms, t)
			}
		}
		switch len(terms) {
		case 0:
			return Never()
		case 1:
			return terms[0]
		}
		return &Or{Terms: terms}
	}
	return e
}
