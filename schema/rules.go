package schema

import (
	"errors"
	"slices"
	"strconv"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/corehq/core/store/arcql"
)

// RuleOps are the operations an @access rule may name, in the order
// messages list them.
var RuleOps = [...]string{"read", "create", "update", "delete"}

// Rule is one @access rule of a record type.
type Rule struct {
	// Text is the rule as written.
	Text string
	// Filter is the rule bound in its type, with $caller and $now kept as
	// parameters (arcql.WithParams gives them their values per request).
	Filter arcql.Expr
	// Reads are the types the rule's reference hops read, nested ones
	// too: what it resolves to holds while no record of them changes.
	Reads []string
	// Now says the rule compares with $now: what it resolves to holds
	// for one request.
	Now bool
}

// NewRule returns the rule text bound as f, with what it reads.
func NewRule(text string, f arcql.Expr) *Rule {
	r := &Rule{Text: text, Filter: f}
	arcql.Walk(f, func(e arcql.Expr) bool {
		isNow := func(v arcql.Value) bool { return v.Kind == arcql.KindParam && v.Str == "now" }
		switch n := e.(type) {
		case *arcql.Hop:
			if !slices.Contains(r.Reads, n.Target) {
				r.Reads = append(r.Reads, n.Target)
			}
		case *arcql.Compare:
			r.Now = r.Now || isNow(n.Value)
		case *arcql.Range:
			r.Now = r.Now || isNow(n.Lo) || isNow(n.Hi)
		}
		return true
	})
	return r
}

// pendingRules is an @access directive waiting for every type to be built.
type pendingRules struct {
	t *Type
	d *ast.Directive
}

// compileRules parses and binds every @access rule (arcql.BindRule): the
// language's limits apply, fields must exist and be filterable (a hidden
// field such as Account.password cannot be named), a path crosses at most
// arcql.MaxHops references. A problem is reported at its place in the SDL,
// naming the type, the rule and the position inside the rule.
func (b *builder) compileRules(m *Model) {
	for _, p := range b.access {
		for _, op := range RuleOps {
			a := p.d.Arguments.ForName(op)
			if a == nil || a.Value == nil || a.Value.Kind == ast.NullValue {
				continue
			}
			text := a.Value.Raw
			pos := valuePos(a.Value, p.d.Position)
			q, err := arcql.Parse(text, arcql.DefaultLimits())
			var f arcql.Expr
			if err == nil {
				if q.Filter == nil && len(q.Sort) == 0 && text == "" {
					err = &arcql.Error{Msg: "a rule must not be empty (write * to allow every record)"}
				} else {
					f, err = arcql.BindRule(q, m, p.t.Name)
				}
			}
			if err != nil {
				var e *arcql.Error
				msg := err.Error()
				if errors.As(err, &e) {
					pos = rulePos(pos, e)
					msg = e.Msg
					if e.Line > 0 {
						msg = strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Col) + ": " + e.Msg
					}
				}
				b.errs.at(pos, "type %s: @access rule %s: %s", p.t.Name, op, msg)
				continue
			}
			if p.t.Rules == nil {
				p.t.Rules = map[string]*Rule{}
			}
			p.t.Rules[op] = NewRule(text, f)
		}
	}
}

// rulePos places a position inside a rule's text in the SDL: the value's
// position is where its text starts (after the quotes); a line after the
// first starts the SDL's line.
func rulePos(at *ast.Position, e *arcql.Error) *ast.Position {
	if e.Line == 0 || at == nil {
		return at
	}
	p := *at
	if e.Line == 1 {
		p.Column += e.Col - 1
	} else {
		p.Line += e.Line - 1
		p.Column = e.Col
	}
	return &p
}
