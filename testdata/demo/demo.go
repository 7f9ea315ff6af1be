// Package demo holds the demo app that `cored serve --demo` deploys: the
// bookstore of the service description with a few records. The files are
// embedded, so the binary carries them wherever it runs.
package demo

import (
	"embed"
	"io/fs"
)

//go:embed app.yaml schema.graphql seed.json
var files embed.FS

// FS returns the demo app directory: app.yaml (the format `cored deploy`
// reads), schema.graphql, and seed.json (a list of upsert steps, each the
// CoreUpsertInputUnion value of one upsert, applied in order).
func FS() fs.FS { return files }
