package arcql

// Walk calls visit with e and, while visit answers true, with the nodes
// under it, depth first: the terms of an And or Or, the X of a Not and
// the Sub of a Hop.
func Walk(e Expr, visit func(Expr) bool) {
	if e == nil || !visit(e) {
		return
	}
	switch n := e.(type) {
	case *And:
		for _, t := range n.Terms {
			Walk(t, visit)
		}
	case *Or:
		for _, t := range n.Terms {
			Walk(t, visit)
		}
	case *Not:
		Walk(n.X, visit)
	case *Hop:
		Walk(n.Sub, visit)
	}
}
