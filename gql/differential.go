package gql

import (
	"context"

	"github.com/graphql-go/graphql"
)

// Hooks of the differential tests (differential_test.go), nil outside them.
// When set, every request runs through both executors: differential is
// given the compiled and the reference execution and returns the answer,
// and wrapResolvers lets the tests record each resolver call of the
// compiled run and replay it to graphql.Execute, so that a mutation or a
// login runs once yet both executors complete the same values. Direct
// fields (plan_direct.go) are pure reads the compiled run may skip: they
// are left as they are.
var (
	differential  func(ctx context.Context, s *Schema, req Request, compiled, reference func(context.Context) *Result) *Result
	wrapResolvers func(s *graphql.Schema, direct directFields)
)
