package gql

import (
	"context"
	"errors"
	"fmt"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/hooks"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// The EventHook records (package hooks delivers them): what an upsert
// checks of one, its write-only secret, and the note that tells the
// delivery service of a new hook.

// checkEventHook refuses an EventHook input whose url, types, operations
// or arcql cannot be delivered, and a new hook past hooks.MaxHooks.
func (u *upserter) checkEventHook(ctx context.Context, set map[string]any, id, path string) error {
	if _, err := u.c.Store.Get(ctx, u.c.Instance.ID, hooks.Type, id); errors.Is(err, store.ErrNotFound) {
		if err := u.roomFor(ctx, hooks.Type, hooks.MaxHooks, "event hooks", path); err != nil {
			return err
		}
	} else if err != nil {
		return storeError(err)
	}
	if url, ok := set["url"].(string); ok {
		if err := hooks.CheckURL(url); err != nil {
			return errcode.New(errcode.BadRequest, "%s.url: %v", path, err)
		}
	}
	types, _ := set["types"].([]any)
	for i, v := range types {
		name, _ := v.(string)
		if _, ok := u.c.schema.model.Type(name); !ok || name == hooks.Type {
			return errcode.New(errcode.BadRequest, "%s.types[%d]: %q is not a record type of the schema whose changes a hook can take", path, i, name)
		}
	}
	ops, _ := set["operations"].([]any)
	for i, v := range ops {
		op, _ := v.(string)
		if err := hooks.CheckOperation(op); err != nil {
			return errcode.New(errcode.BadRequest, "%s.operations[%d]: %v", path, i, err)
		}
	}
	text, ok := set["arcql"].(string)
	if !ok || text == "" {
		return nil
	}
	q, err := arcql.Parse(text, arcql.DefaultLimits())
	if err != nil {
		return errcode.New(errcode.BadRequest, "%s.arcql: %v", path, err)
	}
	for _, v := range types {
		name, _ := v.(string)
		if _, err := arcql.Bind(q, u.c.schema.model, name, u.c.Instance.ID); err != nil {
			return errcode.New(errcode.BadRequest, "%s.arcql on %s: %v", path, name, err)
		}
	}
	return nil
}

// hookSecret checks an EventHook secret and returns it sealed by the key
// ring, as the record keeps it.
func (u *upserter) hookSecret(v any, path string) (any, error) {
	secret, ok := v.(string)
	if !ok {
		return nil, errcode.New(errcode.BadRequest, "%s: expected a string", path)
	}
	if u.c.sealer == nil {
		return nil, errcode.New(errcode.Internal, "%s: the service has no keys to keep secrets with", path)
	}
	sealed, err := hooks.SealSecret(u.c.sealer, u.c.Instance.ID, secret)
	if err != nil {
		return nil, errcode.New(errcode.BadRequest, "%s: %v", path, err)
	}
	return sealed, nil
}

// notedHooks tells the delivery service of the EventHook records an
// upsert wrote (new ones start at the instance's newest change).
func (u *upserter) notedHooks(ctx context.Context, results []store.OpResult) error {
	var created []string
	wrote := false
	for i, op := range u.ops {
		if op.Type != hooks.Type {
			continue
		}
		wrote = true
		if results[i].Created {
			created = append(created, op.ID)
		}
	}
	if !wrote {
		return nil
	}
	if err := hooks.Noted(ctx, u.c.Store, u.c.Instance.ID, created); err != nil {
		return storeError(fmt.Errorf("noting the event hooks: %w", err))
	}
	return nil
}
