package arcql

import "strings"

// Fields calls add with the name of each record field that deciding e and
// ordering by keys reads: the first part of each path (a field of the
// queried type, or a metadata name starting with "core."). A name may come
// more than once. e should be bound and its hops resolved: a Hop's
// sub-expression reads another type's fields, so a Hop adds its Field only.
// A store uses it to decode just these fields of the records it tests.
func Fields(e Expr, keys []SortKey, add func(name string)) {
	walkFields(e, add)
	for _, k := range keys {
		addPath(k.Path, add)
	}
}

func walkFields(e Expr, add func(string)) {
	Walk(e, func(e Expr) bool {
		switch e := e.(type) {
		case *Exist:
			addPath(e.Path, add)
		case *Compare:
			addPath(e.Path, add)
		case *Range:
			addPath(e.Path, add)
		case *Hop:
			add(e.Field)
			return false // its sub-expression reads another type's fields
		case *InIDs:
			if strings.HasPrefix(e.Field, "core.") {
				add(e.Field)
			} else {
				name, _, _ := strings.Cut(e.Field, ".")
				add(name)
			}
		}
		return true
	})
}

func addPath(p Path, add func(string)) {
	switch {
	case len(p.Parts) == 0:
	case len(p.Parts) >= 2 && p.Parts[0] == "core":
		add("core." + p.Parts[1])
	default:
		add(p.Parts[0])
	}
}
