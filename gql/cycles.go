package gql

import (
	"errors"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"
)

// fragmentCycle reports a fragment that spreads itself, directly or
// through others. It runs before graphql-go's validation: its
// OverlappingFieldsCanBeMerged rule (v0.8.1) recurses without end on such a
// cycle, a stack overflow that kills the process, although its
// NoFragmentCycles rule would refuse the document.
func fragmentCycle(doc *ast.Document) error {
	frags := fragments(doc)
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var visit func(name string) string
	var spreads func(set *ast.SelectionSet) string
	spreads = func(set *ast.SelectionSet) string {
		if set == nil {
			return ""
		}
		for _, sel := range set.Selections {
			var cyclic string
			switch sel := sel.(type) {
			case *ast.Field:
				cyclic = spreads(sel.SelectionSet)
			case *ast.InlineFragment:
				cyclic = spreads(sel.SelectionSet)
			case *ast.FragmentSpread:
				if sel.Name != nil {
					cyclic = visit(sel.Name.Value)
				}
			}
			if cyclic != "" {
				return cyclic
			}
		}
		return ""
	}
	visit = func(name string) string {
		switch state[name] {
		case visiting:
			return name
		case done:
			return ""
		}
		f, ok := frags[name]
		if !ok {
			return "" // unknown: validation says so
		}
		state[name] = visiting
		cyclic := spreads(f.SelectionSet)
		state[name] = done
		return cyclic
	}
	for name := range frags {
		if cyclic := visit(name); cyclic != "" {
			return errors.New(graphql.CycleErrorMessage(cyclic, nil))
		}
	}
	return nil
}
