package schema

import (
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
)

// Same reports whether two SDL texts declare the same schema: equal once
// comments, white space and descriptions are left out (definitions in the
// same order). Text that does not parse within lim is the same only as
// itself.
func Same(a, b string, lim Limits) bool {
	if a == b {
		return true
	}
	ca, okA := canonical(a, lim)
	cb, okB := canonical(b, lim)
	return okA && okB && ca == cb
}

// canonical prints an SDL without its comments and descriptions.
func canonical(sdl string, lim Limits) (string, bool) {
	lim = lim.orDefault()
	if len(sdl) > lim.MaxBytes {
		return "", false
	}
	doc, err := parser.ParseSchemaWithLimit(&ast.Source{Name: "schema.graphql", Input: sdl}, lim.MaxTokens)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	formatter.NewFormatter(&b, formatter.WithoutDescription(), formatter.WithCompacted()).FormatSchemaDocument(doc)
	return b.String(), true
}
