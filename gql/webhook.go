package gql

import (
	"fmt"
	"strings"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
)

// CheckWebhookTarget reports whether a Webhook's query may point at a
// root field: it must exist and have the signature
// (payload: WebhookPayload): WebhookResponse.
func CheckWebhookTarget(m *schema.Model, opType, field string) error {
	var roots []*schema.Field
	switch opType {
	case "Query":
		roots = m.Queries
	case "Mutation":
		roots = m.Mutations
	default:
		return fmt.Errorf("query.type %q: a webhook runs a Query or a Mutation field", opType)
	}
	for _, f := range roots {
		if f.Name != field {
			continue
		}
		if len(f.Args) != 1 || f.Args[0].Name != "payload" || f.Args[0].Type != "WebhookPayload" || f.Args[0].List ||
			f.Type != "WebhookResponse" || f.List {
			return fmt.Errorf("%s.%s must have the signature (payload: WebhookPayload): WebhookResponse", opType, field)
		}
		return nil
	}
	return fmt.Errorf("%s.%s is not a field of the schema", opType, field)
}

// CheckWebhookSelection reports whether a Webhook's query.selection lists
// only fields of WebhookResponse.
func CheckWebhookSelection(sel string) error {
	for _, f := range strings.FieldsFunc(sel, func(r rune) bool { return r == ' ' || r == ',' || r == '\n' || r == '\t' }) {
		switch f {
		case "status", "headers", "body":
		default:
			return fmt.Errorf("query.selection may list only status, headers and body, not %q", f)
		}
	}
	return nil
}

// checkWebhook validates a Webhook record input before it is saved, and
// makes its `as` the saving account when a new webhook does not say.
func (u *upserter) checkWebhook(p graphql.ResolveParams, obj map[string]any, set map[string]any, id, path string) error {
	if ref, ok := obj["query"].(map[string]any); ok {
		opType, _ := ref["type"].(string)
		field, _ := ref["field"].(string)
		if err := CheckWebhookTarget(u.c.schema.model, opType, field); err != nil {
			return errcode.New(errcode.BadRequest, "%s: %v", path, err)
		}
		if sel, ok := ref["selection"].(string); ok {
			if err := CheckWebhookSelection(sel); err != nil {
				return errcode.New(errcode.BadRequest, "%s: %v", path, err)
			}
		}
	}
	if _, given := obj["as"]; given {
		return nil
	}
	if _, err := u.c.Store.Get(p.Context, u.c.Instance.ID, "Webhook", id); err == nil {
		return nil // an update keeps its account
	}
	set["as"] = u.c.Principal.AccountID
	return nil
}
