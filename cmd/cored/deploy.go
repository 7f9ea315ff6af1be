package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// deploy applies DIR/app.yaml to a running server through the admin API:
// it publishes the release, creates the instances that do not exist
// (printing their tokens, shown once) and changes the others only where
// they differ. Re-running it changes nothing.
func deploy(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("deploy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: cored deploy [flags] DIR\n\nApplies DIR/app.yaml to a running server. Flags:\n")
		fs.PrintDefaults()
	}
	serverURL := fs.String("server", "http://127.0.0.1:8080", "base URL of the server")
	token := fs.String("admin-token", "", "admin token (default $CORE_ADMIN_TOKEN)")
	force := fs.Bool("force", false, "move instances to the release even when their stored records would not survive it (BREAKING_CHANGE); records keep their values")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"want exactly one app directory (cored deploy DIR)"}
	}
	if *token == "" {
		*token = getenv("CORE_ADMIN_TOKEN")
	}
	if *token == "" {
		return usageError{"the admin token is required: set CORE_ADMIN_TOKEN or pass --admin-token"}
	}
	app, sdl, err := loadApp(os.DirFS(pos[0]))
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	c := &adminClient{base: strings.TrimRight(*serverURL, "/") + "/admin/v1", token: *token, hc: &http.Client{Timeout: time.Minute}}
	return apply(ctx, c, app, sdl, *force, stdout)
}

// apply publishes the functions and the release of app and brings its
// instances in line. Functions go first, so that a release binding them
// can be called at once.
func apply(ctx context.Context, c *adminClient, app *appFile, sdl string, force bool, out io.Writer) error {
	for _, p := range app.packages {
		var res struct {
			Status string `json:"status"`
		}
		path := "/apps/" + url.PathEscape(app.App) + "/functions/" + url.PathEscape(p.name) + "/" + url.PathEscape(p.version)
		if _, err := c.do(ctx, http.MethodPut, path, rawBody(p.body), &res); err != nil {
			return fmt.Errorf("function %s %s (%s): %w", p.name, p.version, p.path, err)
		}
		fmt.Fprintf(out, "function %s %s: %s\n", p.name, p.version, res.Status)
	}
	var rel struct {
		Status string `json:"status"`
	}
	relPath := "/apps/" + url.PathEscape(app.App) + "/releases/" + url.PathEscape(app.Release)
	if _, err := c.do(ctx, http.MethodPut, relPath, map[string]any{"realm": app.Realm, "schema": sdl}, &rel); err != nil {
		return err
	}
	fmt.Fprintf(out, "release %s/%s: %s\n", app.App, app.Release, rel.Status)

	for _, want := range app.Instances {
		path := "/instances/" + url.PathEscape(want.Domain)
		var have instanceView
		status, err := c.do(ctx, http.MethodGet, path, nil, &have)
		if status == http.StatusNotFound {
			var created instanceView
			_, err := c.do(ctx, http.MethodPost, "/instances", map[string]any{
				"domain":                want.Domain,
				"app":                   app.App,
				"release":               app.Release,
				"anonymousRequests":     want.AnonymousRequests,
				"anonymousRegistration": want.AnonymousRegistration,
				"env":                   want.Env,
			}, &created)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "instance %s: created; token (shown once): %s\n", created.Domain, created.Token)
			continue
		}
		if err != nil {
			return err
		}
		if have.App != app.App {
			return fmt.Errorf("instance %s runs app %s, not %s: choose another domain or delete it first", want.Domain, have.App, app.App)
		}
		patch, changed := diff(app.Release, want, have)
		if len(changed) == 0 {
			fmt.Fprintf(out, "instance %s: unchanged\n", have.Domain)
			continue
		}
		if _, ok := patch["release"]; ok && force {
			patch["force"] = true
		}
		if _, err := c.do(ctx, http.MethodPatch, path, patch, nil); err != nil {
			return fmt.Errorf("instance %s: %w", have.Domain, err)
		}
		fmt.Fprintf(out, "instance %s: updated (%s)\n", have.Domain, strings.Join(changed, ", "))
	}
	return nil
}

// instanceView is the part of the admin API's instance answer deploy uses.
type instanceView struct {
	Domain                string            `json:"domain"`
	App                   string            `json:"app"`
	Release               string            `json:"release"`
	AnonymousRequests     bool              `json:"anonymousRequests"`
	AnonymousRegistration bool              `json:"anonymousRegistration"`
	Env                   map[string]string `json:"env"`
	Token                 string            `json:"token"`
}

// diff returns the PATCH body that turns have into want and the names of
// the fields it changes.
func diff(release string, want appInstance, have instanceView) (map[string]any, []string) {
	patch := map[string]any{}
	var changed []string
	set := func(name string, v any) {
		patch[name] = v
		changed = append(changed, name)
	}
	if have.Release != release {
		set("release", release)
	}
	if have.AnonymousRequests != want.AnonymousRequests {
		set("anonymousRequests", want.AnonymousRequests)
	}
	if have.AnonymousRegistration != want.AnonymousRegistration {
		set("anonymousRegistration", want.AnonymousRegistration)
	}
	if !maps.Equal(have.Env, want.Env) {
		env := want.Env
		if env == nil {
			env = map[string]string{} // clears
		}
		set("env", env)
	}
	return patch, changed
}

// adminClient calls the admin API.
type adminClient struct {
	base  string // …/admin/v1
	token string
	hc    *http.Client
}

// rawBody is a request body sent as it is, not as JSON.
type rawBody []byte

// do sends a request with a JSON body (a rawBody as it is; none when
// nil) and decodes a 2xx answer into out (when not nil). A non-2xx answer
// is an error carrying the envelope's message; the status is returned
// either way.
func (c *adminClient) do(ctx context.Context, method, path string, body, out any) (int, error) {
	var r io.Reader
	contentType := "application/json"
	switch b := body.(type) {
	case nil:
	case rawBody:
		r, contentType = bytes.NewReader(b), "application/octet-stream"
	default:
		j, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return 0, err
	}
	req.Header.Set("authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("content-type", contentType)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, req.URL.Redacted(), err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return res.StatusCode, fmt.Errorf("%s %s: reading the answer: %w", method, req.URL.Redacted(), err)
	}
	if res.StatusCode/100 != 2 {
		return res.StatusCode, fmt.Errorf("%s %s: %s", method, req.URL.Redacted(), describeFailure(res.StatusCode, raw))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return res.StatusCode, fmt.Errorf("%s %s: decoding the answer: %w", method, req.URL.Redacted(), err)
		}
	}
	return res.StatusCode, nil
}

// describeFailure renders an error answer: each envelope message, or the
// start of the body when it is no envelope.
func describeFailure(status int, body []byte) string {
	var env struct {
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &env) != nil || len(env.Errors) == 0 {
		s := strings.TrimSpace(string(body))
		if len(s) > 300 {
			s = s[:300] + "…"
		}
		return fmt.Sprintf("%d %s: %s", status, http.StatusText(status), s)
	}
	msgs := make([]string, 0, len(env.Errors))
	for _, e := range env.Errors {
		msgs = append(msgs, e.Message)
	}
	code, _ := env.Errors[0].Extensions["code"].(string)
	return fmt.Sprintf("%d %s: %s", status, code, strings.Join(msgs, "\n  "))
}
