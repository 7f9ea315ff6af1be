package gql

import (
	"maps"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/schema"
)

// queryFields returns the Query root: the built-ins and the schema's own.
func (b *builder) queryFields() graphql.Fields {
	typeArg := &graphql.ArgumentConfig{Type: graphql.NewNonNull(b.typeEnum), Description: "The record type."}
	fields := graphql.Fields{
		"find": &graphql.Field{
			Type:        graphql.NewNonNull(b.conn),
			Description: "Records of a type that an ArcQL filter matches, a page at a time.",
			Args: graphql.FieldConfigArgument{
				"type":           typeArg,
				"arcql":          &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.String), Description: "The filter, e.g. `price > 5 SORT price DESC`; `*` matches all."},
				"first":          &graphql.ArgumentConfig{Type: graphql.Int, Description: "Page size, counting forward (default 25)."},
				"after":          &graphql.ArgumentConfig{Type: graphql.String, Description: "Start after the record with this id (FIRST: from the start)."},
				"last":           &graphql.ArgumentConfig{Type: graphql.Int, Description: "Page size, counting back from the end or from before."},
				"before":         &graphql.ArgumentConfig{Type: graphql.String, Description: "End before the record with this id (LAST: at the end)."},
				"includeTrashed": &graphql.ArgumentConfig{Type: graphql.Boolean, Description: "Include trashed records."},
				"page":           &graphql.ArgumentConfig{Type: graphql.Int, Description: "Page number counting from 1: skips (page-1) pages."},
			},
			Resolve: resolveFind,
		},
		"get": &graphql.Field{
			Type:        b.union,
			Description: "One record by id; null when there is none (or it is trashed).",
			Args: graphql.FieldConfigArgument{
				"type": typeArg,
				"id":   &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.String)},
			},
			Resolve: resolveGet,
		},
		"login":        b.loginField("username", "Log in by username: a session token, or an error code.", false),
		"loginByEmail": b.loginField("email", "Log in by e-mail address: a session token, or an error code.", true),
		"aggregate":    b.aggregateField(),
	}
	for _, f := range b.m.Queries {
		fields[f.Name] = b.userRoot(f)
	}
	return fields
}

// mutationFields returns the Mutation root: the built-ins and the
// schema's own.
func (b *builder) mutationFields() graphql.Fields {
	typeArg := &graphql.ArgumentConfig{Type: graphql.NewNonNull(b.typeEnum), Description: "The record type."}
	arcqlArg := &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.String), Description: "The filter selecting the records; `*` selects all."}
	linkArgs := graphql.FieldConfigArgument{
		"from":        typeArg,
		"to":          typeArg,
		"via":         &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.String), Description: "The reference field of `from` that points at `to`."},
		"whereFromID": &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.String)},
		"andToID":     &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.String)},
	}
	fields := graphql.Fields{
		"upsert": &graphql.Field{
			Type:        graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(b.core))),
			Description: "Create or merge records (nested records too); one metadata entry per top-level record, created null for an update.",
			Args: graphql.FieldConfigArgument{
				"values": &graphql.ArgumentConfig{Type: graphql.NewNonNull(b.inputs["CoreUpsertInputUnion"])},
			},
			Resolve: resolveUpsert,
		},
		"delete": &graphql.Field{
			Type:        graphql.NewNonNull(graphql.Int),
			Description: "Delete the records a filter matches; the number deleted. Fails while a list reference points at one, unless clearArrayReferences.",
			Args: graphql.FieldConfigArgument{
				"type":                 typeArg,
				"arcql":                arcqlArg,
				"clearArrayReferences": &graphql.ArgumentConfig{Type: graphql.Boolean, DefaultValue: false},
			},
			Resolve: resolveDelete,
		},
		"trash": &graphql.Field{
			Type:        graphql.NewNonNull(graphql.Int),
			Description: "Trash (soft-delete) the records a filter matches; the number trashed.",
			Args:        graphql.FieldConfigArgument{"type": typeArg, "arcql": arcqlArg},
			Resolve:     resolveTrash(true),
		},
		"untrash": &graphql.Field{
			Type:        graphql.NewNonNull(graphql.Int),
			Description: "Restore trashed records a filter matches; the number restored.",
			Args:        graphql.FieldConfigArgument{"type": typeArg, "arcql": arcqlArg},
			Resolve:     resolveTrash(false),
		},
		"link": &graphql.Field{
			Type:        graphql.NewNonNull(graphql.Boolean),
			Description: "Make the reference field `via` of a record point at another record (appended to a list).",
			Args:        linkArgs,
			Resolve:     resolveLink(true),
		},
		"unlink": &graphql.Field{
			Type:        graphql.NewNonNull(graphql.Boolean),
			Description: "Remove a record from the reference field `via` of another.",
			Args:        linkArgs,
			Resolve:     resolveLink(false),
		},
		"createAccount": &graphql.Field{
			Type:        b.core,
			Description: "Create an account with a password and a username or e-mail address.",
			Args: graphql.FieldConfigArgument{
				"value": &graphql.ArgumentConfig{Type: graphql.NewNonNull(b.inputs["AccountInput"])},
			},
			Resolve: resolveCreateAccount,
		},
		"logout": &graphql.Field{
			Type:        graphql.NewNonNull(graphql.Boolean),
			Description: "Revoke every session of the caller's account issued until now.",
			Resolve:     resolveLogout,
		},
	}
	maps.Copy(fields, b.mathRoots(typeArg))
	maps.Copy(fields, passwordRoots())
	maps.Copy(fields, verificationRoots())
	for _, f := range b.m.Mutations {
		fields[f.Name] = b.userRoot(f)
	}
	return fields
}

// userRoot returns a root field the schema declares. Fields bound to a
// function run it; the function runtime is wired in by the fn package.
func (b *builder) userRoot(f *schema.Field) *graphql.Field {
	args := graphql.FieldConfigArgument{}
	for _, a := range f.Args {
		ac := &graphql.ArgumentConfig{Type: wrap(b.namedInput(a.Type), a.List, a.NonNull, a.ElemNonNull)}
		if a.Default != nil {
			if v, err := a.Default.Value(nil); err == nil {
				ac.DefaultValue = v
			}
		}
		args[a.Name] = ac
	}
	m := b.m
	return &graphql.Field{
		Type:        wrap(b.named(f.Type), f.List, f.NonNull, f.ElemNonNull),
		Description: f.Description,
		Args:        args,
		Resolve: func(p graphql.ResolveParams) (any, error) {
			return callFunction(p, f, m)
		},
	}
}
