package schema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A Breaking is a change of a record type's field between two releases
// that records stored under the old one may not survive: the records
// that Probe matches would be read, filtered or validated wrongly under
// the new release. Whether any such record exists is the store's to say.
type Breaking struct {
	Type, Field string
	// Change says what changed, for people: "type Int → String",
	// "becomes required", "enum Color loses RED".
	Change string
	// Probe is an ArcQL filter, valid on the old release's model, that
	// matches the records the change breaks ("*" for every record).
	Probe string
	// Missing is true when Probe finds records that lack the field
	// (rather than records that hold a value the new release cannot read).
	Missing bool
}

// BreakingChanges lists the changes from old to next that stored records
// may not survive, by type and field name:
//
//   - a field's type changes (another scalar, enum, referenced or embedded
//     type, or list ↔ single value), except the widenings Int → Float and
//     ID, Email or an enum → String, which read stored values as they are;
//   - an enum a field uses loses values;
//   - a field becomes required (`!`), or a required field is added to a
//     type that existed.
//
// Types and fields that go away are not listed: their data stays in the
// store, unread, and comes back if a later release declares them again.
// Built-in types are core's own and are not compared.
func BreakingChanges(old, next *Model) []Breaking {
	var out []Breaking
	for _, nt := range next.Types {
		ot, ok := old.Type(nt.Name)
		if !ok || nt.Builtin {
			continue
		}
		for _, nf := range nt.Fields {
			of, ok := ot.Field(nf.Name)
			if !ok {
				if nf.NonNull {
					out = append(out, Breaking{Type: nt.Name, Field: nf.Name, Change: "is added as required", Probe: "*", Missing: true})
				}
				continue
			}
			if b, ok := typeChange(old, next, of, nf); ok {
				b.Type, b.Field = nt.Name, nf.Name
				out = append(out, b)
				continue
			}
			if nf.NonNull && !of.NonNull {
				out = append(out, Breaking{Type: nt.Name, Field: nf.Name, Change: "becomes required", Probe: "NOT EXIST " + nf.Name, Missing: true})
			}
		}
	}
	return out
}

// typeChange compares the type of one field in two releases.
func typeChange(old, next *Model, of, nf *Field) (Breaking, bool) {
	was, is := typeText(of), typeText(nf)
	if of.List == nf.List && of.Kind == nf.Kind && of.Type == nf.Type {
		if of.Kind != KindEnum {
			return Breaking{}, false
		}
		return enumLoss(old, next, of)
	}
	if of.List == nf.List && widens(of, nf) {
		return Breaking{}, false
	}
	return Breaking{Change: "type " + was + " → " + is, Probe: "EXIST " + of.Name}, true
}

// widens reports whether values stored for of read as they are as values
// of nf.
func widens(of, nf *Field) bool {
	if nf.Kind != KindScalar {
		return false
	}
	switch nf.Type {
	case "Float":
		return of.Kind == KindScalar && of.Type == "Int"
	case "String":
		return of.Kind == KindEnum || (of.Kind == KindScalar && (of.Type == "ID" || of.Type == "Email"))
	}
	return false
}

// enumLoss lists the values a field's enum loses between releases.
func enumLoss(old, next *Model, of *Field) (Breaking, bool) {
	oe, ok1 := old.Enum(of.Type)
	ne, ok2 := next.Enum(of.Type)
	if !ok1 || !ok2 {
		return Breaking{}, false
	}
	var lost, probe []string
	for _, v := range oe.Values {
		if !slices.Contains(ne.Values, v) {
			lost = append(lost, v)
			probe = append(probe, of.Name+" = "+strconv.Quote(v))
		}
	}
	if len(lost) == 0 {
		return Breaking{}, false
	}
	return Breaking{
		Change: fmt.Sprintf("enum %s loses %s", of.Type, strings.Join(lost, ", ")),
		Probe:  strings.Join(probe, " OR "),
	}, true
}

// typeText writes a field's type as the SDL does: [Int!]!.
func typeText(f *Field) string { return sdlTypeRef(f.Type, f.List, f.ElemNonNull, f.NonNull) }

// SDLType writes the argument's type as the SDL does: [Int!]!.
func (a *Arg) SDLType() string { return sdlTypeRef(a.Type, a.List, a.ElemNonNull, a.NonNull) }

// sdlTypeRef writes a named type, a list of it or not, as the SDL does.
func sdlTypeRef(name string, list, elemNonNull, nonNull bool) string {
	if list {
		if elemNonNull {
			name += "!"
		}
		name = "[" + name + "]"
	}
	if nonNull {
		name += "!"
	}
	return name
}
