package gql

import (
	"context"
	"errors"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// storeError turns a store error into the coded error a client sees.
// Anything unexpected becomes INTERNAL with the cause kept for the log.
func storeError(err error) error {
	var fe *store.FieldError
	var ae *arcql.Error
	var ce *errcode.Error
	var be *store.BoundError
	switch {
	case errors.As(err, &ce):
		return ce
	case errors.As(err, &fe) && errors.Is(err, store.ErrUnique):
		return errcode.Wrap(errcode.Conflict, err, "%s", fe.Error())
	case errors.As(err, &fe):
		return errcode.Wrap(errcode.BadRequest, err, "%s", fe.Error())
	case errors.As(err, &ae):
		return errcode.Wrap(errcode.BadFilter, err, "%s", ae.Error())
	case errors.As(err, &be):
		return errcode.Wrap(errcode.TooComplex, err, "%s", be.Msg)
	case errors.Is(err, store.ErrAggregateMemory):
		return errcode.Wrap(errcode.Unavailable, err, "aggregate: the aggregations running now hold the memory the server allows them all; try again shortly")
	case errors.Is(err, store.ErrTooMany):
		return errcode.Wrap(errcode.BadFilter, err, "%s", err.Error())
	case errors.Is(err, store.ErrNotFound):
		return errcode.Wrap(errcode.NotFound, err, "not found")
	case errors.Is(err, store.ErrUnavailable):
		return errcode.Wrap(errcode.Unavailable, err, "the store is unavailable; try again")
	}
	return errcode.Wrap(errcode.Internal, err, "internal error")
}

// bindFilter parses and binds an ArcQL text for a record type.
// Comparisons of @secret fields are resolved first (resolveSecrets).
func bindFilter(ctx context.Context, c *call, typ, text string) (*arcql.Query, error) {
	q, err := arcql.Parse(text, arcql.DefaultLimits())
	if err != nil {
		return nil, errcode.Wrap(errcode.BadFilter, err, "%s", err.Error())
	}
	if err := resolveSecrets(ctx, c, typ, q); err != nil {
		return nil, err
	}
	q, err = arcql.Bind(q, c.schema.model, typ, c.Instance.ID)
	if err != nil {
		return nil, errcode.Wrap(errcode.BadFilter, err, "%s", err.Error())
	}
	return q, nil
}
