package gql

import (
	"github.com/graphql-go/graphql"

	"github.com/corehq/core/schema"
)

// Schema is a release's compiled executable schema, shared by every
// instance of the release, with its cache of parsed and validated
// documents. Build makes one: the builder (build.go) generates its types
// and resolvers; documents are compiled into plans later, once each, by
// the plan compiler (plan_compile.go). Safe for concurrent use.
type Schema struct {
	model *schema.Model
	cfg   Config
	gql   graphql.Schema
	docs  *docCache
	// direct are the fields the compiled executor reads without their
	// resolvers (plan_direct.go).
	direct directFields
	// referenceOnly runs every document on graphql.Execute (benchmarks
	// and tests compare the executors with it).
	referenceOnly bool
}

// Model returns the model the schema was built from.
func (s *Schema) Model() *schema.Model { return s.model }

// GraphQL returns the graphql-go schema (for introspection and printing).
func (s *Schema) GraphQL() *graphql.Schema { return &s.gql }

// Build compiles a model into an executable schema bounded by cfg (its
// zero figures DefaultConfig's).
func Build(m *schema.Model, cfg Config) (*Schema, error) {
	cfg = cfg.withDefaults()
	b := newBuilder(m, cfg)
	g, err := b.build()
	if err != nil {
		return nil, err
	}
	if differential != nil {
		wrapResolvers(&g, b.direct)
	}
	return &Schema{model: m, cfg: cfg, gql: g, docs: newDocCache(cfg.DocumentCacheSize), direct: b.direct}, nil
}
