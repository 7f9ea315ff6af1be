package schema

import (
	"fmt"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// reservedTypeName explains why an application may not name a type name,
// or returns "". Built-in type names and <T>Input are checked by the
// builder, which knows the types.
func reservedTypeName(name string) string {
	switch {
	case strings.HasPrefix(name, "__"):
		return fmt.Sprintf("%s: names starting with __ are reserved", name)
	case strings.HasPrefix(name, "Core"):
		return fmt.Sprintf("%s: type names starting with Core are reserved", name)
	case name == "aggregate":
		return "aggregate is reserved: /rest/v1/aggregate/{type} is the REST path of aggregations"
	case name == "AccessToken", name == "PageInfo",
		name == "AggInt", name == "AggFloat", name == "AggDateTime", name == "AggOther",
		name == "AggOrder", name == "TimeUnit", name == "Pair", name == "MathInputInt", name == "MathInputFloat":
		return fmt.Sprintf("%s is reserved: it is a generated type", name)
	}
	return ""
}

// reservedFieldName explains why a field, argument or enum value may not be
// called name, or returns "". record is set for fields of record types,
// where core is the metadata object.
func reservedFieldName(name string, record bool) string {
	switch {
	case strings.HasPrefix(name, "__"):
		return "names starting with __ are reserved"
	case record && name == "core":
		return "core is reserved for the record metadata; a type may declare it only as core: Core"
	}
	return ""
}

// generatedSuffixes are the suffixes of the types generated for every
// record type T (TInput also for embedded object types), and what each is.
var generatedSuffixes = []struct{ suffix, what string }{
	{"Input", "input type"},
	{"Aggs", "aggregates type"},
	{"GroupBy", "group-by input type"},
	{"AggField", "aggregated-field enum"},
	{"Maths", "math input type"},
}

// declaresMeta reports whether a record type's field declares the metadata
// itself, as `core: Core` (or `core: Core!`) with no arguments or
// directives: it means exactly the implicit field, as Hypi's schemas
// declare `hypi: Hypi`.
func declaresMeta(fd *ast.FieldDefinition) bool {
	return fd.Name == "core" && fd.Type != nil && fd.Type.Elem == nil && fd.Type.NamedType == "Core" &&
		len(fd.Arguments) == 0 && len(fd.Directives) == 0
}
