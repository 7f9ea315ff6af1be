package gql

import (
	"strconv"

	"github.com/graphql-go/graphql/language/ast"
)

// checkLimits measures a validated document against the configured depth,
// alias and complexity limits. Fragments are expanded where they are
// spread; validation has already refused fragment cycles.
func checkLimits(doc *ast.Document, vars map[string]any, cfg Config) error {
	frags := map[string]*ast.FragmentDefinition{}
	for _, d := range doc.Definitions {
		if f, ok := d.(*ast.FragmentDefinition); ok {
			frags[f.Name.Value] = f
		}
	}
	w := &limitWalker{frags: frags, vars: vars, cfg: cfg}
	for _, d := range doc.Definitions {
		op, ok := d.(*ast.OperationDefinition)
		if !ok {
			continue
		}
		if err := w.walk(op.SelectionSet, 1, 1); err != nil {
			return err
		}
	}
	return nil
}

type limitWalker struct {
	frags      map[string]*ast.FragmentDefinition
	vars       map[string]any
	cfg        Config
	aliases    int
	complexity int
	spreads    int
}

// walk visits a selection set at a depth; mult is how many times the
// enclosing lists make it run.
func (w *limitWalker) walk(set *ast.SelectionSet, depth, mult int) error {
	if set == nil {
		return nil
	}
	if depth > w.cfg.MaxDepth {
		return tooComplex("the document is nested deeper than %d levels", w.cfg.MaxDepth)
	}
	for _, sel := range set.Selections {
		switch sel := sel.(type) {
		case *ast.Field:
			if sel.Alias != nil && sel.Alias.Value != sel.Name.Value {
				w.aliases++
				if w.aliases > w.cfg.MaxAliases {
					return tooComplex("the document has more than %d aliases", w.cfg.MaxAliases)
				}
			}
			w.complexity += mult
			if w.complexity > w.cfg.MaxComplexity {
				return tooComplex("the document is too complex: its estimated cost exceeds %d", w.cfg.MaxComplexity)
			}
			if err := w.walk(sel.SelectionSet, depth+1, mult*w.factor(sel)); err != nil {
				return err
			}
		case *ast.InlineFragment:
			if err := w.walk(sel.SelectionSet, depth, mult); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			// Bound the expansion itself: a chain of fragments each spread
			// many times grows exponentially.
			w.spreads++
			if w.spreads > w.cfg.MaxComplexity {
				return tooComplex("the document is too complex: its estimated cost exceeds %d", w.cfg.MaxComplexity)
			}
			if f, ok := w.frags[sel.Name.Value]; ok {
				if err := w.walk(f.SelectionSet, depth, mult); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// factor is how many items a field's selection may run for: its first or
// last argument, or the default page size for find.
func (w *limitWalker) factor(f *ast.Field) int {
	n := 0
	for _, a := range f.Arguments {
		if a.Name.Value != "first" && a.Name.Value != "last" {
			continue
		}
		switch v := a.Value.(type) {
		case *ast.IntValue:
			n, _ = strconv.Atoi(v.Value)
		case *ast.Variable:
			if x, ok := w.vars[v.Name.Value].(float64); ok {
				n = int(x)
			}
		}
	}
	if n <= 0 && f.Name.Value == "find" {
		n = w.cfg.DefaultPageSize
	}
	if n <= 0 {
		n = 1
	}
	if n > w.cfg.MaxPageSize {
		n = w.cfg.MaxPageSize
	}
	return n
}
