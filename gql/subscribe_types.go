package gql

import (
	"github.com/graphql-go/graphql"

	"github.com/corehq/core/store"
)

// event is the source of a CoreChange: one change of the feed as a
// subscriber sees it, with the record it reads (nil for DELETED).
type event struct {
	change store.Change
	node   *node
	cursor string
}

// subscriptionRoot returns the Subscription root: the built-in subscribe
// field and the CoreChange and CoreChangeOp types it answers. Its
// resolver returns the event the subscription engine (subscribe.go)
// executes the document on; graphql.Execute never opens a stream itself.
func (b *builder) subscriptionRoot() *graphql.Object {
	op := graphql.NewEnum(graphql.EnumConfig{
		Name:        "CoreChangeOp",
		Description: "What a change did to its record.",
		Values: graphql.EnumValueConfigMap{
			string(store.ChangeCreated):   {Value: string(store.ChangeCreated), Description: "The record was created."},
			string(store.ChangeUpdated):   {Value: string(store.ChangeUpdated), Description: "Fields of the record changed (a link or unlink changes the reference field)."},
			string(store.ChangeDeleted):   {Value: string(store.ChangeDeleted), Description: "The record was deleted; node is null."},
			string(store.ChangeTrashed):   {Value: string(store.ChangeTrashed), Description: "The record was trashed."},
			string(store.ChangeUntrashed): {Value: string(store.ChangeUntrashed), Description: "The record was restored from the trash."},
		},
	})
	ev := func(p graphql.ResolveParams) *event { e, _ := p.Source.(*event); return e }
	fields := graphql.Fields{
		"op": &graphql.Field{Type: graphql.NewNonNull(op), Resolve: func(p graphql.ResolveParams) (any, error) {
			return string(ev(p).change.Op), nil
		}},
		"id": &graphql.Field{Type: graphql.NewNonNull(graphql.ID), Description: "The record's id.", Resolve: func(p graphql.ResolveParams) (any, error) {
			return ev(p).change.ID, nil
		}},
		"node": &graphql.Field{Type: b.union, Description: "The record after the change, as get reads it; null for DELETED.", Resolve: func(p graphql.ResolveParams) (any, error) {
			if n := ev(p).node; n != nil {
				return n, nil
			}
			return nil, nil
		}},
		"changed": &graphql.Field{Type: graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(graphql.String))), Description: "The fields whose value changed (every field set on CREATED).", Resolve: func(p graphql.ResolveParams) (any, error) {
			if c := ev(p).change.Changed; c != nil {
				return c, nil
			}
			return []string{}, nil
		}},
		"cursor": &graphql.Field{Type: graphql.NewNonNull(graphql.String), Description: "This event's position: pass it as after to resume after it.", Resolve: func(p graphql.ResolveParams) (any, error) {
			return ev(p).cursor, nil
		}},
	}
	// Hypi's shape: a field per record type, the record when the change is
	// of that type (subscribe { Author { name } }).
	for _, t := range b.m.Types {
		if _, taken := fields[t.Name]; taken {
			continue
		}
		name := t.Name
		fields[name] = &graphql.Field{Type: b.objects[name], Description: "The record when the change is of a " + name + " (Hypi's shape); null otherwise and for DELETED.",
			Resolve: func(p graphql.ResolveParams) (any, error) {
				if e := ev(p); e.node != nil && e.change.Type == name {
					return e.node, nil
				}
				return nil, nil
			}}
	}
	change := graphql.NewObject(graphql.ObjectConfig{
		Name:        "CoreChange",
		Description: "One change of a record, as a subscription delivers it.",
		Fields:      fields,
	})
	return graphql.NewObject(graphql.ObjectConfig{Name: "Subscription", Fields: graphql.Fields{
		"subscribe": &graphql.Field{
			Type:        graphql.NewNonNull(change),
			Description: "The changes of the records of a type (or of the types the selection names) the caller may read, as they commit: all of them, those an ArcQL filter matches (after the change; before it for DELETED), or one record by id; after resumes after a cursor.",
			Args: graphql.FieldConfigArgument{
				"type":  &graphql.ArgumentConfig{Type: b.typeEnum, Description: "The record type; without it, the types whose fields the selection names (Hypi's subscribe { Author { name } })."},
				"arcql": &graphql.ArgumentConfig{Type: graphql.String, Description: "Only the records this filter matches."},
				"id":    &graphql.ArgumentConfig{Type: graphql.String, Description: "Only this record."},
				"after": &graphql.ArgumentConfig{Type: graphql.String, Description: "Resume after this cursor: the retained changes since are replayed first."},
			},
			Resolve: func(p graphql.ResolveParams) (any, error) {
				if e, ok := p.Source.(*event); ok {
					return e, nil
				}
				return nil, errSubscriptionTransport
			},
		},
	}})
}
