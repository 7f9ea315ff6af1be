package schema

// IsJSONScalar reports whether a scalar takes any JSON value: Json, and
// Any (Hypi's name for it).
func IsJSONScalar(name string) bool { return name == "Json" || name == "Any" }

// ValidUUID reports whether s is a UUID in its 36-character text form,
// 8-4-4-4-12 hexadecimal digits (either case).
func ValidUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// redeclarable reports whether an application may declare a built-in
// scalar again (Hypi's scalars, which schemas written before Core had
// them declare themselves): the declaration means the built-in.
func redeclarable(def *named, kind string) bool {
	return def.builtin && def.kind == kindScalar && kind == "SCALAR" && (def.name == "Any" || def.name == "UUID" || def.name == "Long")
}

// buildScalar checks a custom scalar. Its values are taken as they come
// (like Json) and filtered as strings; gql serves them unchanged.
func (b *builder) buildScalar(n *named) {
	for _, p := range n.parts() {
		b.checkDirectives(p.Directives, whereScalar, "scalar "+n.name)
	}
}
