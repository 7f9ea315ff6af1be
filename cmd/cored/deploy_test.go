package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/corehq/core/admin"
	"github.com/corehq/core/auth"
	"github.com/corehq/core/fn"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// startWithFunctions starts a test server with the function routes
// mounted as serve mounts them.
func startWithFunctions(t *testing.T) *servertest.Env {
	t.Helper()
	l := &late{}
	l.env = servertest.Start(t, servertest.WithRoutes(func(e *echo.Echo) {
		admin.NewFunctions(l, l, l).Register(admin.Mount(e, auth.HashToken(servertest.AdminToken)))
	}))
	f, err := newFunctions(l.env.Store, l.env.Directory, fn.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	l.f = f
	t.Cleanup(func() { f.close(zap.NewNop()) })
	return l.env
}

// late forwards the function routes to what is built after the server
// starts (its store and directory exist only then).
type late struct {
	env *servertest.Env
	f   *functions
}

func (l *late) Publish(ctx context.Context, app, name, version string, b []byte) (fn.Info, fn.PutResult, error) {
	return l.f.packages.Publish(ctx, app, name, version, b)
}
func (l *late) Info(ctx context.Context, app, name, version string) (fn.Info, error) {
	return l.f.packages.Info(ctx, app, name, version)
}
func (l *late) List(ctx context.Context, app string) ([]fn.Info, error) {
	return l.f.packages.List(ctx, app)
}
func (l *late) Delete(ctx context.Context, app, name, version string) (fn.Info, error) {
	return l.f.packages.Delete(ctx, app, name, version)
}
func (l *late) Read(ctx context.Context, id string, limit int) ([]fn.LogEntry, error) {
	return l.f.logs.Read(ctx, id, limit)
}
func (l *late) Clear(ctx context.Context, id string) error { return l.f.logs.Clear(ctx, id) }
func (l *late) Instance(domain string) (*tenant.Instance, error) {
	return l.env.Directory.Instance(domain)
}

const bookstoreSDL = `type Author { name: String age: Int bestbook: Book booklist: [Book!] }
type Book @indices(sets: [["price"]]) { title: String authorid: Int price: Float }
`

// env returns a getenv over fixed values.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runCmd runs cored in process.
func runCmd(t *testing.T, getenv func(string) string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(t.Context(), args, getenv, &out, &errOut)
	return code, out.String(), errOut.String()
}

// createdRE matches the line deploy prints for a new instance.
var createdRE = regexp.MustCompile(`^(instance (\S+): created; token \(shown once\): )(\S+)$`)

func TestDeploy(t *testing.T) {
	t.Parallel()
	srv := startWithFunctions(t)
	dir := t.TempDir()
	admin := env(map[string]string{"CORE_ADMIN_TOKEN": servertest.AdminToken})
	tokens := map[string]string{}

	steps := []struct {
		name  string
		files map[string]string
		want  []string // stdout lines; "<token>" stands for any token
	}{
		{
			name: "first deploy creates everything",
			files: map[string]string{
				"schema.graphql": bookstoreSDL,
				"app.yaml": `app: bookstore
release: v1
schema: schema.graphql
instances:
  - domain: a.test
  - domain: b.test
    anonymousRequests: true
    env: {STRIPE_SECRET: whsec_example}
`,
			},
			want: []string{
				"release bookstore/v1: created",
				"instance a.test: created; token (shown once): <token>",
				"instance b.test: created; token (shown once): <token>",
			},
		},
		{
			name: "re-running changes nothing",
			want: []string{"release bookstore/v1: unchanged", "instance a.test: unchanged", "instance b.test: unchanged"},
		},
		{
			name: "changed settings are patched",
			files: map[string]string{"app.yaml": `app: bookstore
release: v1
schema: schema.graphql
instances:
  - domain: a.test
  - domain: b.test
    anonymousRegistration: true
    env: {STRIPE_SECRET: whsec_rotated, PORT: 8080}
`},
			want: []string{"release bookstore/v1: unchanged", "instance a.test: unchanged",
				"instance b.test: updated (anonymousRequests, anonymousRegistration, env)"},
		},
		{
			name: "a new release moves the instances; functions are published first",
			files: map[string]string{
				"functions/verify-stripe/package.json": `{"main": "src/main.js"}`,
				"functions/verify-stripe/src/main.js":  `const s = require('./sign'); exports.main = (i, cb) => cb(s(), null);`,
				"functions/verify-stripe/src/sign.js":  `module.exports = () => 'signed';`,
				"functions/verify-stripe/.git/config":  `not packaged`,
				"functions/echo.js":                    `exports.main = (i, cb) => cb(i.args, null);`,
				"schema2.graphql":                      bookstoreSDL + "type Shelf { label: String }\n",
				"app.yaml": `app: bookstore
realm: main
release: v2
schema: schema2.graphql
functions:
  verify-stripe:
    v1: functions/verify-stripe
  echo:
    "1.0": functions/echo.js
    "2.0": functions/echo.js
instances:
  - domain: a.test
  - domain: b.test
    anonymousRegistration: true
    env: {STRIPE_SECRET: whsec_rotated, PORT: "8080"}
  - domain: c.test
`,
			},
			want: []string{
				"function echo 1.0: created",
				"function echo 2.0: created",
				"function verify-stripe v1: created",
				"release bookstore/v2: created",
				"instance a.test: updated (release)",
				"instance b.test: updated (release)",
				"instance c.test: created; token (shown once): <token>",
			},
		},
	}
	for _, s := range steps {
		writeFiles(t, dir, s.files)
		code, out, errOut := runCmd(t, admin, "deploy", "--server", srv.URL, dir)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", s.name, code, out, errOut)
		}
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		got := make([]string, len(lines))
		for i, l := range lines {
			got[i] = l
			if m := createdRE.FindStringSubmatch(l); m != nil {
				got[i] = m[1] + "<token>"
				tokens[m[2]] = m[3]
			}
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("%s: output (-want +got):\n%s", s.name, diff)
		}
	}

	// The printed tokens are the instances' tokens, and the settings landed.
	for _, d := range []string{"a.test", "b.test", "c.test"} {
		inst, ok := srv.Directory.Lookup(d)
		if !ok || !auth.TokenMatches(tokens[d], inst.TokenHash) {
			t.Errorf("%s: the printed token %q does not open the instance", d, tokens[d])
		}
	}
	b, _ := srv.Directory.Lookup("b.test")
	want := tenant.Settings{AnonymousRegistration: true, Env: map[string]string{"STRIPE_SECRET": "whsec_rotated", "PORT": "8080"}}
	if diff := cmp.Diff(want, b.Settings); diff != "" || b.Release().Name != "v2" {
		t.Errorf("b.test settings (-want +got):\n%s\nrelease %s", diff, b.Release().Name)
	}

	// The functions landed as packages; re-running publishes nothing new.
	fns, err := fn.NewPackages(srv.Store, fn.DefaultPackagesConfig()).List(t.Context(), "bookstore")
	if err != nil {
		t.Fatal(err)
	}
	var published []string
	for _, i := range fns {
		published = append(published, fmt.Sprintf("%s %s %s %v", i.Name, i.Version, i.Main, i.Files))
	}
	if diff := cmp.Diff([]string{"echo 1.0 index.js [index.js]", "echo 2.0 index.js [index.js]",
		"verify-stripe v1 src/main.js [package.json src/main.js src/sign.js]"}, published); diff != "" {
		t.Errorf("published functions (-want +got):\n%s", diff)
	}
	code, out, errOut := runCmd(t, admin, "deploy", "--server", srv.URL, dir)
	if code != 0 || !strings.HasPrefix(out, "function echo 1.0: unchanged\nfunction echo 2.0: unchanged\nfunction verify-stripe v1: unchanged\n") {
		t.Errorf("re-run: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	// Changing a release that instances run is refused with the server's
	// reason, and nothing changes.
	writeFiles(t, dir, map[string]string{"schema2.graphql": bookstoreSDL + "type Shelf { label: String size: Int }\n"})
	code, out, errOut = runCmd(t, admin, "deploy", dir, "--server", srv.URL) // flags after DIR work too
	if code != 1 || !strings.Contains(errOut, "409 CONFLICT") || !strings.Contains(errOut, "publish a new release") {
		t.Errorf("changed schema of a release in use: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	// A release that stored records would not survive is refused for the
	// instance holding them; --force moves it anyway.
	if status, body := srv.GraphQL("a.test", tokens["a.test"], `mutation { upsert(values: {Book: {title: "Dune", price: 9.5}}) { id } }`, nil); status != 200 || body["errors"] != nil {
		t.Fatalf("creating a book: %d %v", status, body)
	}
	writeFiles(t, dir, map[string]string{
		"schema3.graphql": strings.Replace(bookstoreSDL, "price: Float", "price: Int", 1),
		"app.yaml":        "app: bookstore\nrelease: v3\nschema: schema3.graphql\ninstances:\n  - domain: a.test\n",
	})
	code, out, errOut = runCmd(t, admin, "deploy", "--server", srv.URL, dir)
	if code != 1 || !strings.Contains(errOut, "instance a.test: PATCH") || !strings.Contains(errOut, "409 BREAKING_CHANGE") ||
		!strings.Contains(errOut, "Book.price type Float → Int, and records hold values") {
		t.Errorf("a breaking release: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	code, out, errOut = runCmd(t, admin, "deploy", "--force", "--server", srv.URL, dir)
	if code != 0 || !strings.Contains(out, "instance a.test: updated (release)") {
		t.Errorf("a breaking release, forced: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if a, _ := srv.Directory.Lookup("a.test"); a.Release().Name != "v3" {
		t.Errorf("after the forced deploy a.test runs %s, want v3", a.Release().Name)
	}
}

func TestDeployBadInput(t *testing.T) {
	t.Parallel()
	srv := startWithFunctions(t)
	srv.PutRelease("shop", "v1", bookstoreSDL)
	srv.CreateInstance("taken.test", "shop", "v1", tenant.Settings{})
	admin := env(map[string]string{"CORE_ADMIN_TOKEN": servertest.AdminToken})
	good := "app: bookstore\nrelease: v1\nschema: schema.graphql\n"

	for _, tc := range []struct {
		name   string
		files  map[string]string
		getenv func(string) string
		args   []string // after "deploy --server URL"; "DIR" is the app directory
		code   int
		stderr string // a part of stderr
	}{
		{name: "no admin token", getenv: env(nil), args: []string{"DIR"}, code: 2, stderr: "admin token is required"},
		{name: "no directory", args: nil, code: 2, stderr: "exactly one app directory"},
		{name: "two directories", args: []string{"DIR", "DIR"}, code: 2, stderr: "exactly one app directory"},
		{name: "unknown flag", args: []string{"--nope", "DIR"}, code: 2, stderr: "flag provided but not defined"},
		{name: "no app.yaml", args: []string{"DIR"}, code: 1, stderr: "reading app.yaml"},
		{name: "unknown key", files: map[string]string{"app.yaml": good + "relase: v2\n", "schema.graphql": bookstoreSDL},
			args: []string{"DIR"}, code: 1, stderr: "field relase not found"},
		{name: "no release", files: map[string]string{"app.yaml": "app: bookstore\nschema: schema.graphql\n"},
			args: []string{"DIR"}, code: 1, stderr: "release is required"},
		{name: "schema outside the directory", files: map[string]string{"app.yaml": "app: bookstore\nrelease: v1\nschema: ../schema.graphql\n"},
			args: []string{"DIR"}, code: 1, stderr: "inside the app directory"},
		{name: "missing schema file", files: map[string]string{"app.yaml": good}, args: []string{"DIR"}, code: 1, stderr: "reading the schema"},
		{name: "duplicate domain", files: map[string]string{"app.yaml": good + "instances:\n  - domain: x.test\n  - domain: x.test\n", "schema.graphql": bookstoreSDL},
			args: []string{"DIR"}, code: 1, stderr: "x.test is listed twice"},
		{name: "invalid schema", files: map[string]string{"app.yaml": good, "schema.graphql": "type Book {\n  title: Strin\n}"},
			args: []string{"DIR"}, code: 1, stderr: "invalid schema: 2:"},
		{name: "wrong admin token", getenv: env(map[string]string{"CORE_ADMIN_TOKEN": "not-the-admin-token"}),
			files: map[string]string{"app.yaml": good, "schema.graphql": bookstoreSDL}, args: []string{"DIR"}, code: 1, stderr: "401 UNAUTHENTICATED"},
		{name: "function outside the directory", files: map[string]string{"app.yaml": good + "functions:\n  f:\n    v1: ../f.js\n", "schema.graphql": bookstoreSDL},
			args: []string{"DIR"}, code: 1, stderr: `functions: f v1: "../f.js" must be a path inside the app directory`},
		{name: "missing function", files: map[string]string{"app.yaml": good + "functions:\n  f:\n    v1: f.js\n", "schema.graphql": bookstoreSDL},
			args: []string{"DIR"}, code: 1, stderr: "functions: f v1: stat f.js"},
		{name: "function refused by the server", files: map[string]string{"app.yaml": good + "functions:\n  f:\n    v1: f.js\n", "schema.graphql": bookstoreSDL, "f.js": "exports.main = ("},
			args: []string{"DIR"}, code: 1, stderr: "function f v1 (f.js): PUT"},
		{name: "domain of another app", files: map[string]string{"app.yaml": good + "instances:\n  - domain: taken.test\n", "schema.graphql": bookstoreSDL},
			args: []string{"DIR"}, code: 1, stderr: "taken.test runs app shop, not bookstore"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			getenv := tc.getenv
			if getenv == nil {
				getenv = admin
			}
			args := []string{"deploy", "--server", srv.URL}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "DIR", dir))
			}
			code, out, errOut := runCmd(t, getenv, args...)
			if code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Errorf("exit %d, stderr %q (stdout %q); want exit %d with %q", code, errOut, out, tc.code, tc.stderr)
			}
		})
	}
}
