package schema

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuiltins(t *testing.T) {
	t.Parallel()
	m, err := Parse("", DefaultLimits())
	if err != nil {
		t.Fatalf("Parse of an empty schema: %v", err)
	}
	var records, objects, enums, inputs []string
	for _, ty := range m.Types {
		records = append(records, ty.Name)
		if !ty.Builtin {
			t.Errorf("record %s is not Builtin", ty.Name)
		}
	}
	for _, ty := range m.Objects {
		objects = append(objects, ty.Name)
		if !ty.Builtin {
			t.Errorf("object %s is not Builtin", ty.Name)
		}
	}
	for _, e := range m.Enums {
		enums = append(enums, e.Name)
	}
	for _, in := range m.Inputs {
		inputs = append(inputs, in.Name)
	}
	got := [][]string{records, objects, enums, inputs, m.Scalars}
	want := [][]string{
		{"AccessRight", "Account", "EmailVerification", "EventHook", "File", "PasswordReminder", "ScheduledFunction", "URL", "Webhook"},
		{"FileURL", "GraphQLRef", "Phone", "WebhookResponse"},
		{"AccessRightType", "FileStatus", "OpType", "ScheduleInterval"},
		{"PasswordInput", "TriggerConfig", "TriggerRef", "URLInput", "WebhookPayload"},
		nil, // built-in scalars are not listed
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("built-in types (-want +got):\n%s", diff)
	}

	account, _ := m.Type("Account")
	password, _ := account.Field("password")
	if !password.Hidden || password.Type != "String" {
		t.Errorf("Account.password = %+v, want a hidden String", password)
	}
	emails, _ := account.Field("emails")
	if !emails.Unique || !emails.List || emails.Type != "Email" {
		t.Errorf("Account.emails = %+v, want a unique [Email!]", emails)
	}
	if len(m.Queries)+len(m.Mutations) != 0 {
		t.Errorf("an empty schema has root fields")
	}
	op, _ := m.Enum("OpType")
	if diff := cmp.Diff([]string{"Query", "Mutation", "Subscription"}, op.Values); diff != "" {
		t.Errorf("OpType (-want +got):\n%s", diff)
	}
}

// TestBuiltinDirectiveDeclarations: a schema may declare the built-in
// directives, but only exactly as core does.
func TestBuiltinDirectiveDeclarations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		sdl  string
		ok   bool
	}{
		{"all identical", `
"described differently"
directive @fn(name: String!, version: String!, env: [String!]) on FIELD_DEFINITION
directive @indices(sets: [[String!]!]!) on OBJECT
directive @unique on FIELD_DEFINITION
directive @deprecated(reason: String = "No longer supported") on FIELD_DEFINITION`, true},
		{"other argument type", `directive @fn(name: String!, version: String, env: [String!]) on FIELD_DEFINITION`, false},
		{"other location", `directive @unique on FIELD_DEFINITION | INPUT_FIELD_DEFINITION`, false},
		{"repeatable", `directive @unique repeatable on FIELD_DEFINITION`, false},
		{"other default", `directive @deprecated(reason: String) on FIELD_DEFINITION`, false},
		{"declared twice", "directive @unique on FIELD_DEFINITION\ndirective @unique on FIELD_DEFINITION", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.sdl+"\ntype Book @indices(sets: [[\"a\"]]) { a: Int @unique }", DefaultLimits())
			if (err == nil) != tt.ok {
				t.Errorf("Parse error = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestHiddenNotIndexable uses a prelude that indexes a hidden field: an
// application cannot declare hidden fields, so only the prelude could.
func TestHiddenNotIndexable(t *testing.T) {
	t.Parallel()
	prelude := strings.Replace(builtinSDL, "type Account {", `type Account @indices(sets: [["password"]]) {`, 1)
	_, err := parse("", prelude, DefaultLimits())
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("parse error = %v, want Errors", err)
	}
	line := strings.Count(prelude[:strings.Index(prelude, "type Account @indices")], "\n") + 1
	want := Errors{{line, 32, "type Account: @indices: password is hidden and cannot be indexed"}}
	if diff := cmp.Diff(want, es); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
