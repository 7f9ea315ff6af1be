package gql

import (
	"fmt"
	"sort"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
)

// Hypi's record shapes of the mail requests: an upsert of
// PasswordReminder {to} does what requestPasswordReset does, one of
// EmailVerification {email, redirectTo} what requestEmailVerification
// does. Neither is kept: the answer is the metadata of a request that
// was taken (the same whether the address has an account or not), and
// nothing of a code or link is ever read back.

// mailRequests maps the request types to the field naming the address.
var mailRequests = map[string]string{"PasswordReminder": "to", "EmailVerification": "email"}

// mailRequestOwnFields are the fields of the Hypi shapes that the
// instance's operator decides (smtp.from, mailTemplates) or the service
// makes (the code): no client writes them.
var mailRequestOwnFields = map[string]bool{"code": true, "from": true, "subject": true, "htmlMessage": true, "plainTextMessage": true}

// upsertMailRequests runs the mail requests of an upsert's values. It
// reports false when the values name none; an upsert that names one
// names nothing else (a request is not a record to write with others).
func upsertMailRequests(p graphql.ResolveParams, values map[string]any) ([]any, bool, error) {
	types := make([]string, 0, len(values))
	requests := 0
	for name := range values {
		types = append(types, name)
		if _, ok := mailRequests[name]; ok {
			requests++
		}
	}
	if requests == 0 {
		return nil, false, nil
	}
	if requests != len(types) {
		return nil, true, errcode.New(errcode.BadRequest, "values: PasswordReminder and EmailVerification are requests, not records: upsert them apart from other types")
	}
	sort.Strings(types)
	c := callFrom(p.Context)
	var out []any
	for _, name := range types {
		list, isList := values[name].([]any)
		if !isList {
			list = []any{values[name]}
		}
		for i, in := range list {
			path := fmt.Sprintf("%s[%d]", name, i)
			if err := mailRequest(p, name, in, path); err != nil {
				return nil, true, err
			}
			out = append(out, &meta{rec: &store.Record{Type: name, ID: store.NewID(), Created: c.now, Updated: c.now, CreatedBy: c.Principal.AccountID}})
		}
	}
	return out, true, nil
}

// mailRequest checks one PasswordReminder or EmailVerification input and
// makes its request.
func mailRequest(p graphql.ResolveParams, typ string, in any, path string) error {
	obj, ok := in.(map[string]any)
	if !ok {
		return errcode.New(errcode.BadRequest, "%s: expected an object", path)
	}
	addrField := mailRequests[typ]
	var redirect string
	for name, v := range obj {
		switch {
		case name == addrField:
		case name == "core":
			return errcode.New(errcode.BadRequest, "%s.core: a %s is a request, not kept: it has no id to set", path, typ)
		case mailRequestOwnFields[name]:
			if v != nil {
				return errcode.New(errcode.BadRequest, "%s.%s: set by the service and the instance's operator (smtp.from, mailTemplates), not by a client", path, name)
			}
		case typ == "PasswordReminder" && name == "valid":
			if v != nil && v != true {
				return errcode.New(errcode.BadRequest, "%s.valid: a new reminder is valid; only true may be written", path)
			}
		case typ == "EmailVerification" && name == "redirectTo":
			s, isStr := v.(string)
			if v != nil && !isStr {
				return errcode.New(errcode.BadRequest, "%s.redirectTo: expected a string", path)
			}
			redirect = s
		default:
			return errcode.New(errcode.BadRequest, "%s: unknown field %s.%s", path, typ, name)
		}
	}
	email, ok := emailValue(obj[addrField])
	if !ok {
		return errcode.New(errcode.BadRequest, "%s.%s: an e-mail address is required", path, addrField)
	}
	var err error
	if typ == "PasswordReminder" {
		_, err = requestPasswordReset(p, email)
	} else {
		_, err = requestEmailVerification(p, email, redirect)
	}
	return err
}
