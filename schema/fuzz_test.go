package schema

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary SDL to Parse, seeded from testdata/schema and a
// few hostile shapes: it never panics, answers a Model or Errors, and a
// Model answers Field for every field it lists.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(testdataDir, "*.graphql"))
	for _, file := range files {
		sdl, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(sdl))
	}
	for _, s := range []string{
		"",
		"input A { b: B! }\ninput B { a: A! }",
		"type A @indices(sets: [[\"b\"], \"b\", [[\"b\"]]]) { b: [Int] }",
		"type Query { f(a: [[Int]] = [[1]], b: I = {c: {d: 1}}): Int @fn(name: \"f\", version: \"v\", env: \"E\") }\ninput I { c: J } input J { d: Int! }",
		"extend input I @deprecated(reason: $r)",
		"enum E { A B } extend enum E { B C } type T { e: E = A }",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sdl string) {
		m, err := Parse(sdl, DefaultLimits())
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %v (%T) is not a non-empty Errors", err, err)
			}
			for _, e := range es {
				if e.Message == "" || e.Line < 0 || e.Column < 0 {
					t.Fatalf("bad error %+v", e)
				}
			}
			if m != nil {
				t.Fatal("a Model with an error")
			}
			return
		}
		for _, ts := range [][]*Type{m.Types, m.Objects} {
			for _, ty := range ts {
				for _, fd := range ty.Fields {
					if _, ok := m.Field(ty.Name, fd.Name); !ok {
						t.Fatalf("Field(%q, %q) not found", ty.Name, fd.Name)
					}
				}
			}
		}
	})
}
