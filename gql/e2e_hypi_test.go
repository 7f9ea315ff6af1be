package gql_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/internal/nodetest"
	"github.com/corehq/core/internal/testfiles"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestHypiTodoApp publishes a to-do schema written as Hypi's example apps
// write theirs (metadata declared, hypi read as core) and runs such an
// app's documents through graphql-js (e2e-clients/hypi-todo.mjs) on both
// stores, as every server test here: the client builds the introspected schema and validates
// each document against it; sign-up with emails: [{value: $email}], login
// by e-mail and by name, upsert through CoreUpsertInputUnion, get and find
// with fragments selecting core { id }, and delete with a defaulted
// $clearArrayReferences answer as the app expects.
func TestHypiTodoApp(t *testing.T) {
	t.Parallel()
	node, script := nodetest.Script(t, "Hypi to-do app test", filepath.Join("e2e-clients", "hypi-todo.mjs"), "graphql")
	env := servertest.Start(t)
	env.PutRelease("todo", "v1", testfiles.Read(t, "e2e", "hypi-todo.graphql"))
	token := env.CreateInstance("todo.test", "todo", "v1", tenant.Settings{})
	// A bound on the whole run against a hang, not a timing assertion.
	out, err := nodetest.Run(node, script, 3*time.Minute, "CORE_URL="+env.URL, "CORE_DOMAIN=todo.test", "CORE_TOKEN="+token)
	if err != nil || !strings.HasSuffix(string(out), "\nok\n") && string(out) != "ok\n" {
		t.Fatalf("node %s failed (%v):\n%s", filepath.Base(script), err, out)
	}
}

// TestHypiScalars publishes a schema using Hypi's scalars Any and UUID and
// writes through GraphQL and REST (on both stores, as every server test
// here): a UUID is validated (a bad one refuses the whole batch, naming
// the field) and kept in lower case, where ArcQL finds it; Any takes any
// JSON value, as Json.
func TestHypiScalars(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("tags", "v1", "type Tag {\n  core: Core\n  ref: UUID @unique\n  data: Any\n}")
	c := &client{t: t, env: env, domain: "tags.test"}
	c.token = env.CreateInstance(c.domain, "tags", "v1", tenant.Settings{})
	h := map[string]string{tenant.Header: c.domain, "authorization": c.token}
	const ref = "123E4567-E89B-12D3-A456-426614174000"
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Tag": []any{
		map[string]any{"ref": ref, "data": map[string]any{"n": 1.5, "list": []any{"a", true}}}}}})
	status, body := env.Do(http.MethodPost, "/rest/v1/", h, map[string]any{"values": map[string]any{"Tag": map[string]any{
		"ref": "00000000-0000-4000-8000-000000000001", "data": "text"}}})
	if status != 200 {
		t.Fatalf("REST upsert: %d %s", status, dump(body))
	}
	found := c.data(`{ find(type: Tag, arcql: "ref = '123e4567-e89b-12d3-a456-426614174000'") { edges { node { ... on Tag { ref data } } } } }`, nil)
	want := []any{map[string]any{"node": map[string]any{"ref": strings.ToLower(ref), "data": map[string]any{"n": 1.5, "list": []any{"a", true}}}}}
	if diff := cmp.Diff(want, path(found, "find", "edges")); diff != "" {
		t.Errorf("the tag by its UUID (-want +got):\n%s", diff)
	}
	for _, bad := range []any{"123e4567e89b12d3a456426614174000", "not a uuid", 7.0} {
		vals := map[string]any{"Tag": []any{map[string]any{"ref": "00000000-0000-4000-8000-000000000002"}, map[string]any{"ref": bad}}}
		_, msg, code := c.fail(upsertDoc, map[string]any{"v": vals})
		if code != "BAD_REQUEST" || !strings.Contains(msg, "ref") || !strings.Contains(msg, "UUID") {
			t.Errorf("ref %v through GraphQL: %s %q; want BAD_REQUEST naming ref and UUID", bad, code, msg)
		}
		status, body := env.Do(http.MethodPost, "/rest/v1/", h, map[string]any{"values": vals})
		if msg, _ := servertest.FirstError(body); status == 200 || !strings.Contains(msg, "UUID") {
			t.Errorf("ref %v through REST: %d %s; want an error naming UUID", bad, status, dump(body))
		}
	}
	if n := len(path(c.data(`{ find(type: Tag, arcql: "*") { edges { cursor } } }`, nil), "find", "edges").([]any)); n != 2 {
		t.Errorf("%d tags, want 2: a refused batch wrote some of its records", n)
	}
}
