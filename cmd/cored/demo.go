package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/corehq/core/tenant"
	"github.com/corehq/core/testdata/demo"
)

// demoQuery lists the demo books; the printed curl sends it.
const demoQuery = `{ find(type: Book, arcql: "*") { edges { node { ... on Book { title price } } } } }`

// deployDemo deploys the demo app on its domain unless an instance already
// serves it, seeding its records through h's /graphql in process; then,
// on every start, rotates the instance token and prints it with a curl
// that lists the records. A failed seeding removes the new instance, so
// the next start tries again from scratch.
func deployDemo(ctx context.Context, reg *tenant.Directory, h http.Handler, base string, out io.Writer) error {
	app, sdl, err := loadApp(demo.FS())
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if len(app.Instances) != 1 {
		return fmt.Errorf("demo: app.yaml lists %d instances, want 1", len(app.Instances))
	}
	want := app.Instances[0]
	domain := tenant.NormalizeDomain(want.Domain)
	if _, ok := reg.Lookup(domain); !ok {
		if _, _, err := reg.PutRelease(ctx, app.App, app.Release, app.Realm, sdl); err != nil {
			return fmt.Errorf("demo: publishing %s/%s: %w", app.App, app.Release, err)
		}
		_, token, err := reg.CreateInstance(ctx, tenant.InstanceSpec{
			Domain:  domain,
			App:     app.App,
			Release: app.Release,
			Settings: tenant.Settings{
				AnonymousRequests:     want.AnonymousRequests,
				AnonymousRegistration: want.AnonymousRegistration,
				Env:                   want.Env,
			},
		})
		if err != nil {
			return fmt.Errorf("demo: creating %s: %w", domain, err)
		}
		if err := seedDemo(ctx, h, domain, token); err != nil {
			if _, derr := reg.DeleteInstance(context.WithoutCancel(ctx), domain); derr != nil {
				err = errors.Join(err, derr)
			}
			return fmt.Errorf("demo: seeding %s: %w", domain, err)
		}
		fmt.Fprintf(out, "demo: deployed %s/%s on %s and seeded its records\n", app.App, app.Release, domain)
	}
	_, token, err := reg.RotateToken(ctx, domain)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	body, err := json.Marshal(map[string]string{"query": demoQuery})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintf(out, "demo: instance token of %s (a new one at every start): %s\n", domain, token)
	fmt.Fprintf(out, "demo: list its books with:\n\ncurl -s %s/graphql -H '%s: %s' -H 'authorization: %s' -H 'content-type: application/json' -d '%s'\n\n",
		base, tenant.Header, domain, token, body)
	return nil
}

// seedDemo upserts the steps of seed.json in order, in one mutation (root
// mutation fields run one after another).
func seedDemo(ctx context.Context, h http.Handler, domain, token string) error {
	raw, err := fs.ReadFile(demo.FS(), "seed.json")
	if err != nil {
		return err
	}
	var steps []json.RawMessage
	if err := json.Unmarshal(raw, &steps); err != nil {
		return fmt.Errorf("seed.json: %w", err)
	}
	var params, fields []string
	vars := map[string]json.RawMessage{}
	for i, s := range steps {
		params = append(params, fmt.Sprintf("$v%d: CoreUpsertInputUnion!", i))
		fields = append(fields, fmt.Sprintf("s%d: upsert(values: $v%d) { id }", i, i))
		vars[fmt.Sprintf("v%d", i)] = s
	}
	doc := "mutation(" + strings.Join(params, ", ") + ") { " + strings.Join(fields, " ") + " }"
	body, err := json.Marshal(map[string]any{"query": doc, "variables": vars})
	if err != nil {
		return err
	}
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("content-type", "application/json")
	req.Header.Set(tenant.Header, domain)
	req.Header.Set("authorization", token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var res struct {
		Data   map[string][]map[string]any `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || rec.Code != http.StatusOK || len(res.Errors) > 0 {
		answer := rec.Body.String()
		if len(answer) > 500 {
			answer = answer[:500] + "…"
		}
		return fmt.Errorf("POST /graphql answered %d: %s", rec.Code, answer)
	}
	return nil
}
