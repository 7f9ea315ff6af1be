package schema

// buildScalar checks a custom scalar. Its values are taken as they come
// (like Json) and filtered as strings; gql serves them unchanged.
func (b *builder) buildScalar(n *named) {
	for _, p := range n.parts() {
		b.checkDirectives(p.Directives, whereScalar, "scalar "+n.name)
	}
}
