package fn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/dop251/goja"

	"github.com/corehq/core/store"
)

// depthKey carries how many function calls enclose a context.
type depthKey struct{}

func depthOf(ctx context.Context) int {
	d, _ := ctx.Value(depthKey{}).(int)
	return d
}

// newCore returns the global core object: core.graphql(query,
// variables) returns a Promise of the instance's GraphQL response,
// executed as the caller by the host (Invocation.GraphQL).
func (c *call) newCore(ctx context.Context) *goja.Object {
	obj := c.vm.NewObject()
	must(obj.Set("graphql", func(fc goja.FunctionCall) goja.Value { return c.graphql(ctx, fc) }))
	must(obj.Set("verifyWebhook", func(fc goja.FunctionCall) goja.Value { return c.verifyWebhook(ctx, fc) }))
	return obj
}

func (c *call) graphql(ctx context.Context, fc goja.FunctionCall) goja.Value {
	vm := c.vm
	p, resolve, reject := vm.NewPromise()
	fail := func(err error) goja.Value {
		if rerr := reject(vm.NewGoError(err)); rerr != nil {
			panic(rerr)
		}
		return vm.ToValue(p)
	}
	if c.inv.GraphQL == nil {
		return fail(errors.New("core.graphql is not available to this call"))
	}
	if c.graphqlCalls >= c.j.cfg.MaxGraphQLCalls {
		return fail(fmt.Errorf("a call may make at most %d core.graphql requests", c.j.cfg.MaxGraphQLCalls))
	}
	query := fc.Argument(0)
	if _, ok := query.Export().(string); !ok {
		return fail(errors.New("core.graphql(query, variables): query must be a string"))
	}
	var vars map[string]any
	if v := fc.Argument(1); !isNullish(v) {
		s, err := c.stringify(v)
		if err != nil {
			return fail(fmt.Errorf("core.graphql: variables cannot be encoded as JSON: %v", err))
		}
		if len(s) > c.j.cfg.MaxInputBytes {
			return fail(fmt.Errorf("core.graphql: variables are larger than %d bytes", c.j.cfg.MaxInputBytes))
		}
		if err := json.Unmarshal([]byte(s), &vars); err != nil {
			return fail(errors.New("core.graphql: variables must be an object"))
		}
	}
	c.graphqlCalls++
	c.pending++
	q := query.String()
	ctx = context.WithValue(ctx, depthKey{}, depthOf(ctx)+1)
	go func() {
		res, err := c.callHost(ctx, q, vars)
		if err == nil && len(res) > c.j.cfg.MaxInputBytes {
			err = fmt.Errorf("core.graphql: the response is larger than %d bytes", c.j.cfg.MaxInputBytes)
		}
		c.post(func() error {
			if err != nil {
				return reject(vm.NewGoError(err))
			}
			v, perr := c.parseJSON(string(res))
			if perr != nil {
				return reject(vm.NewGoError(errors.New("core.graphql: the response is not JSON")))
			}
			return resolve(v)
		})
	}()
	return vm.ToValue(p)
}

// callHost runs the host's GraphQL (Invocation.GraphQL) for a
// core.graphql request of c, on a goroutine of its own. A panic there
// would end the process, so it is recovered: the request fails with a
// generic error (the function sees nothing of the panic), and the panic
// with its stack goes to the instance's function log. The host (the
// engine) recovers its resolvers' panics itself; this is the last line.
func (c *call) callHost(ctx context.Context, query string, vars map[string]any) (res []byte, err error) {
	defer func() {
		if x := recover(); x != nil {
			if c.j.logs != nil {
				c.j.logs.Append(c.inv.Caller.InstanceID, []LogEntry{{Time: time.Now().UTC(), Level: "runtime",
					Function: c.inv.Name + "@" + c.inv.Version, Call: store.NewID(),
					Message: cut(fmt.Sprintf("core.graphql: internal error: %v\n%s", x, debug.Stack()), 16<<10)}})
			}
			res, err = nil, errors.New("core.graphql: internal error in the service")
		}
	}()
	return c.inv.GraphQL(ctx, query, vars)
}
