package rest

import (
	"net/http"

	"github.com/corehq/core/errcode"
)

// loginFields are the root fields that accept the parameter type=query,
// which the service description's login samples send.
var loginFields = map[string]bool{"login": true, "loginByEmail": true}

// rewriteFn rewrites GET, POST and PUT /fn/{root}/{fn} into a call of
// that root field: with GET its arguments come from the query string,
// coerced by their types; with POST and PUT the body is the object of
// arguments, passed on as it is. GET does not run mutations.
func rewriteFn(a *API, r Request) (Plan, error) {
	if r.Root != rootQuery && r.Root != rootMutation {
		return Plan{}, errcode.New(errcode.NotFound, "no root %s: /fn/{root}/{fn} takes query or mutation", quoteShort(r.Root))
	}
	f, ok := a.field(r.Root, r.Fn)
	if !ok {
		return Plan{}, errcode.New(errcode.NotFound, "%s has no function %s", r.Root, quoteShort(r.Fn))
	}
	var vars map[string]any
	what := "body field"
	if r.Method == http.MethodGet {
		if f.root == rootMutation {
			return Plan{}, errcode.New(errcode.BadRequest, "mutation %s changes data: call it with POST or PUT", f.name)
		}
		q := r.Query
		if loginFields[f.name] && q.Has("type") {
			if t := q["type"]; len(t) != 1 || t[0] != rootQuery {
				return Plan{}, errcode.New(errcode.BadRequest, "parameter type of %s must be query", f.name)
			}
			q = cloneWithout(q, "type")
		}
		var err error
		if vars, err = queryArgs(f, q); err != nil {
			return Plan{}, err
		}
		what = "parameter"
	} else {
		if err := noQuery(r); err != nil {
			return Plan{}, err
		}
		var err error
		if vars, err = bodyArgs(f, r.Body); err != nil {
			return Plan{}, err
		}
	}
	if err := requireArgs(f, vars, what); err != nil {
		return Plan{}, err
	}
	narrow := ""
	if f.typed {
		if t, ok := vars["type"].(string); ok {
			if err := checkType(a, t); err != nil {
				return Plan{}, err
			}
			narrow = t
		}
	}
	return plan(f, vars, narrow, ShapeData), nil
}

// rewriteLogin rewrites POST /login: a body {username, password} calls
// login, a body {email, password} loginByEmail.
func rewriteLogin(a *API, r Request) (Plan, error) {
	if err := noQuery(r); err != nil {
		return Plan{}, err
	}
	_, byName := r.Body["username"]
	_, byEmail := r.Body["email"]
	name := "login"
	switch {
	case byName && byEmail:
		return Plan{}, errcode.New(errcode.BadRequest, "the body must carry username or email, not both")
	case byEmail:
		name = "loginByEmail"
	case !byName:
		return Plan{}, errcode.New(errcode.BadRequest, `the body must be {"username", "password"} or {"email", "password"}`)
	}
	f, err := builtin(a, rootQuery, name)
	if err != nil {
		return Plan{}, err
	}
	vars, err := bodyArgs(f, r.Body)
	if err != nil {
		return Plan{}, err
	}
	if err := requireArgs(f, vars, "body field"); err != nil {
		return Plan{}, err
	}
	return plan(f, vars, "", ShapeLogin), nil
}

// bodyArgs takes the arguments of f from a body object: every field must
// be an argument; values are passed on as sent and checked by GraphQL's
// variable coercion.
func bodyArgs(f *rootField, body map[string]any) (map[string]any, error) {
	vars := make(map[string]any, len(body))
	var unknown []string
	for k, v := range body {
		if _, ok := f.arg(k); !ok {
			unknown = append(unknown, k)
			continue
		}
		vars[k] = v
	}
	if len(unknown) > 0 {
		return nil, unknownNames("body field", unknown, allowed(f, nil))
	}
	return vars, nil
}

// cloneWithout returns q without the parameter name.
func cloneWithout(q map[string][]string, name string) map[string][]string {
	out := make(map[string][]string, len(q))
	for k, v := range q {
		if k != name {
			out[k] = v
		}
	}
	return out
}
