package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/corehq/core/internal/poll"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/corehq/core/internal/hooktest"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt"
	"github.com/corehq/core/store/mongo"
	"github.com/corehq/core/store/mongo/mongotest"
)

// backupApp is the app the backup test deploys: references, a list of
// references, a function reading a sealed env value, and a function
// delivered as an image (echo v1, pushed to the registry after the
// deploy: testdata/images/echo).
var backupApp = map[string]string{
	"schema.graphql": `type Author { name: String  best: Book  books: [Book!] }
type Book @indices(sets: [["title"]]) { title: String  price: Float }
type Note { text: String }
type Query {
  greet(who: String): String @fn(name: "greet", version: "v1", env: ["GREETING"])
  echo(payload: String): Json @fn(name: "echo", version: "v1")
}
`,
	"functions/greet.js": `exports.main = (i, cb) => cb(i.env.GREETING + ", " + i.args.who, null);`,
	"app.yaml": `app: shop
release: v1
schema: schema.graphql
functions:
  greet:
    v1: functions/greet.js
instances:
  - domain: a.test
    env: {GREETING: hello}
  - domain: b.test
    env: {GREETING: hi}
`,
}

// backupInstance is what the test made in one instance before the backup.
type backupInstance struct {
	domain, token, session string
	answers                map[string]any // query → data, before the backup
	image                  string         // the download path of an uploaded image
}

// backupImage is the PNG each instance of the backup test uploads.
func backupImage(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 120, 80))
	for x := range 120 {
		img.Set(x, x%80, color.RGBA{G: 180, A: 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// upload uploads one file (multipart, as curl -F does) and returns its
// download path.
func (p *coredProcess) upload(t *testing.T, domain, token, name string, content []byte) string {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	fw, _ := w.CreateFormFile("0", name)
	fw.Write(content)
	w.Close()
	req, _ := http.NewRequest("POST", "http://"+p.addr+"/upload/", &b)
	req.Header.Set("content-type", w.FormDataContentType())
	req.Header.Set("core-domain", domain)
	req.Header.Set("authorization", token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var recs []map[string]any
	if err := json.NewDecoder(res.Body).Decode(&recs); err != nil || res.StatusCode != http.StatusCreated || len(recs) != 1 {
		t.Fatalf("upload of %s: %d %v", name, res.StatusCode, err)
	}
	return recs[0]["url"].(map[string]any)["path"].(string)
}

// download gets a file's path as token.
func (p *coredProcess) download(t *testing.T, path, token string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+p.addr+path, nil)
	req.Header.Set("authorization", token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, body
}

// backupQueries are asked before the backup and of every restored server.
var backupQueries = []string{
	`{ find(type: Book, arcql: "*", first: 100) { edges { cursor node { ... on Book { title price } } } } }`,
	`{ find(type: Author, arcql: "*", first: 100) { edges { cursor node { ... on Author { name best { title } books { title } } } } } }`,
	`{ greet(who: "ann") }`,
	echoQuery,
}

// echoQuery calls the function of the image shop/echo:v1 as the webhook
// it is written for would.
const echoQuery = `{ echo(payload: "{\"body\": \"ann\", \"url\": {\"path\": \"/backup\"}}") }`

// TestBackupWhileWriting backs up a server with two instances (records
// with references, a trashed record, accounts, a grant, a function with a
// sealed env value) through `cored backup --from` while 20 writers write,
// restores the archive into a new data directory and onto the
// MongoDB-wire test server, and checks that every record acknowledged
// before the backup began reads the same there, that every restored
// record is as the original held it, and that the restored servers answer
// the same queries, logins, sessions (the key file carried beside) and
// function calls, a function pushed as an image to the server's registry
// among them: its image pulls whole from every restored server, with the
// publishing token issued before the backup.
func TestBackupWhileWriting(t *testing.T) {
	t.Parallel()
	const admin = "backup-test-admin-token-0123456789"
	data := t.TempDir()
	p := startCoredArgs(t, "--admin-token", admin, "--data", data, "--hook-allow-private")
	appDir := t.TempDir()
	writeFiles(t, appDir, backupApp)
	getenv := env(map[string]string{"CORE_ADMIN_TOKEN": admin})
	code, out, errOut := runCmd(t, getenv, "deploy", "--server", "http://"+p.addr, appDir)
	if code != 0 {
		t.Fatalf("deploy: exit %d\n%s%s", code, out, errOut)
	}
	var insts []*backupInstance
	for _, line := range strings.Split(out, "\n") {
		if m := createdRE.FindStringSubmatch(line); m != nil {
			insts = append(insts, &backupInstance{domain: m[2], token: m[3]})
		}
	}
	if len(insts) != 2 {
		t.Fatalf("deploy made %d instances: %s", len(insts), out)
	}
	// Version v1 of function echo, which the release binds, as an image
	// pushed with a publishing token of the app.
	publish := p.publishToken(t, admin, "shop")
	echo := echoImage(t)
	if err := remote.Write(p.imageRef(t, "shop/echo:v1"), echo, registryLogin(publish)); err != nil {
		t.Fatalf("pushing shop/echo:v1: %v", err)
	}
	pushed, err := echo.Digest()
	if err != nil {
		t.Fatal(err)
	}

	upsertOne := func(inst *backupInstance, typ string, v map[string]any) string {
		d := p.data(t, inst.domain, inst.token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
			map[string]any{"v": map[string]any{typ: v}})
		return d["upsert"].([]any)[0].(map[string]any)["id"].(string)
	}
	ref := func(id string) map[string]any { return map[string]any{"core": map[string]any{"id": id}} }
	// An event hook of the first instance's books, which has passed over
	// hundreds of notes' changes by the time of the backup.
	rcv := hooktest.Start(t)
	upsertOne(insts[0], "EventHook", map[string]any{"url": rcv.URL, "secret": rcv.Secret, "types": []any{"Book"}})
	var acked sync.Map // instance domain + "/" + id → true: acknowledged before the backup began
	for _, inst := range insts {
		var books []string
		for i := range 4 {
			id := upsertOne(inst, "Book", map[string]any{"title": fmt.Sprintf("%s book %d", inst.domain, i), "price": 10.5 + float64(i)})
			books = append(books, id)
		}
		upsertOne(inst, "Author", map[string]any{"name": "Ann", "best": ref(books[0]), "books": []any{ref(books[0]), ref(books[1])}})
		upsertOne(inst, "Author", map[string]any{"name": "Bo", "books": []any{ref(books[2])}})
		p.data(t, inst.domain, inst.token, `mutation($a: String!) { trash(type: Book, arcql: $a) }`,
			map[string]any{"a": fmt.Sprintf("core.id = '%s'", books[3])})
		acct := p.data(t, inst.domain, inst.token, `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`,
			map[string]any{"v": map[string]any{"username": "ann", "password": map[string]any{"value": "correct horse battery"}}})
		acctID := acct["createAccount"].(map[string]any)["id"].(string)
		upsertOne(inst, "AccessRight", map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Query",
			"operation": "find", "permissionType": "SBP", "members": []any{ref(acctID)}})
		inst.image = p.upload(t, inst.domain, inst.token, "logo.png", backupImage(t))
		inst.session = backupLogin(t, p, inst.domain)
		inst.answers = map[string]any{}
		for _, q := range backupQueries {
			inst.answers[q] = p.data(t, inst.domain, inst.token, q, nil)
		}
		// The image's function answers, not an error.
		answer, _ := inst.answers[echoQuery].(map[string]any)
		echoed, _ := answer["echo"].(map[string]any)
		body, _ := echoed["body"].(map[string]any)
		if want := map[string]any{"from": "image", "greeting": "hello ann", "path": "/backup"}; !cmp.Equal(want, body) {
			t.Fatalf("%s: the image's function before the backup: %v, want %v", inst.domain, inst.answers[echoQuery], want)
		}
	}

	// Twenty writers write notes into both instances until the backup has
	// been taken.
	var began atomic.Bool
	var ackedCount, during atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inst := insts[w%2]
			h := map[string]string{"core-domain": inst.domain, "authorization": inst.token}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				code, out, ok := tryCall(p, h, map[string]any{"query": `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
					"variables": map[string]any{"v": map[string]any{"Note": map[string]any{"text": fmt.Sprintf("writer %d note %d", w, i)}}}})
				up, _ := out["data"].(map[string]any)["upsert"].([]any)
				if !ok || code != 200 || out["errors"] != nil || len(up) != 1 {
					continue
				}
				if !began.Load() { // acknowledged before the backup began
					acked.Store(inst.domain+"/"+up[0].(map[string]any)["id"].(string), true)
				} else {
					during.Add(1)
				}
				ackedCount.Add(1)
			}
		}()
	}
	poll.Until(t, "200 acknowledged notes", func() bool { return ackedCount.Load() >= 200 })
	archive := filepath.Join(t.TempDir(), "core.tar.gz")
	began.Store(true)
	code, out, errOut = runCmd(t, getenv, "backup", "--from", "http://"+p.addr, archive)
	if code != 0 {
		t.Fatalf("backup: exit %d\n%s%s", code, out, errOut)
	}
	poll.Until(t, "notes written after the backup", func() bool { return during.Load() >= 20 })
	rcv.WaitFor(t, "the books' events", func(r *hooktest.Receiver) bool { return len(r.Events()) >= 4 })
	close(stop)
	wg.Wait()
	p.stop()
	original := storeRecords(t, openBolt(t, data))

	// A data directory of its own, with the key file carried beside.
	restored := t.TempDir()
	keys, err := os.ReadFile(filepath.Join(data, keyFileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(restored, keyFileName), keys, 0o600); err != nil {
		t.Fatal(err)
	}
	uri, db := mongotest.Database(t)
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	targets := []struct {
		name    string
		restore []string
		serve   []string
		open    func() store.Store
	}{
		{"bolt", []string{"--data", restored}, []string{"--data", restored, "--hook-allow-private"}, func() store.Store { return openBolt(t, restored) }},
		{"mongo", []string{"--mongo-uri", u.String()}, []string{"--mongo-uri", u.String(), "--key-file", filepath.Join(data, keyFileName), "--hook-allow-private"},
			func() store.Store {
				st, err := mongo.Open(t.Context(), mongotest.Config(uri, db))
				if err != nil {
					t.Fatal(err)
				}
				return st
			}},
	}
	for _, target := range targets {
		t.Run(target.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, env(nil), append([]string{"restore", archive}, target.restore...)...)
			if code != 0 {
				t.Fatalf("restore: exit %d\n%s%s", code, out, errOut)
			}
			// A second restore into the same store is refused.
			if code, _, errOut := runCmd(t, env(nil), append([]string{"restore", archive}, target.restore...)...); code == 0 || !strings.Contains(errOut, "not empty") {
				t.Errorf("a restore into a store holding data: exit %d, %s", code, errOut)
			}
			q := startCoredArgs(t, append([]string{"--admin-token", admin}, target.serve...)...)
			for _, inst := range insts {
				for _, query := range backupQueries {
					got := q.data(t, inst.domain, inst.token, query, nil)
					if d := cmp.Diff(inst.answers[query], got); d != "" {
						t.Errorf("%s: %s (-before the backup +restored):\n%s", inst.domain, query, d)
					}
				}
				// The image's content came along: it downloads whole, and
				// a thumbnail is made of it.
				for _, path := range []string{inst.image, inst.image + "?thumb=100x100"} {
					status, got := q.download(t, path, inst.token)
					if status != 200 || (path == inst.image && !bytes.Equal(got, backupImage(t))) {
						t.Errorf("%s: GET %s on the restored server: %d, %d bytes", inst.domain, path, status, len(got))
					}
				}
				// The password hash came along, and so did the session (the keys did).
				backupLogin(t, q, inst.domain)
				q.data(t, inst.domain, inst.session, `{ find(type: Book, arcql: "*") { edges { cursor } } }`, nil)
			}
			// The image came along: its tag is listed, and it pulls whole
			// (manifest, config and layer, each checked against its
			// digest), with the publishing token issued before the backup.
			st, tags := q.registryGet(t, "/v2/shop/echo/tags/list", publish)
			if want := map[string]any{"name": "shop/echo", "tags": []any{"v1"}}; st != http.StatusOK || !cmp.Equal(want, tags) {
				t.Errorf("GET /v2/shop/echo/tags/list on the restored server: %d %v, want 200 %v", st, tags, want)
			}
			if img, err := remote.Image(q.imageRef(t, "shop/echo:v1"), registryLogin(publish)); err != nil {
				t.Errorf("pulling shop/echo:v1 from the restored server: %v", err)
			} else if err := validate.Image(img); err != nil {
				t.Errorf("shop/echo:v1 pulled from the restored server: %v", err)
			} else if got, _ := img.Digest(); got != pushed {
				t.Errorf("shop/echo:v1 on the restored server is %s, pushed as %s", got, pushed)
			}
			// The hook delivers the restored server's changes: the
			// restored feed starts over, and so does the hook.
			book := func() string {
				d := q.data(t, insts[0].domain, insts[0].token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
					map[string]any{"v": map[string]any{"Book": map[string]any{"title": "after the restore, on " + target.name}}})
				return d["upsert"].([]any)[0].(map[string]any)["id"].(string)
			}()
			rcv.WaitFor(t, "the event of a book written on the restored server", func(r *hooktest.Receiver) bool {
				for _, e := range r.Events() {
					if e.Op == "CREATED" && e.Record == book {
						return true
					}
				}
				return false
			})
			q.stop()

			got := storeRecords(t, target.open())
			for key := range got {
				if strings.HasSuffix(key, "/Book/"+book) {
					delete(got, key) // written after the restore
				}
			}
			missing := 0
			acked.Range(func(k, _ any) bool {
				domain, id, _ := strings.Cut(k.(string), "/")
				found := false
				for key := range got {
					if strings.HasSuffix(key, "/Note/"+id) {
						found = true
					}
				}
				if !found {
					missing++
					t.Errorf("note %s of %s, acknowledged before the backup began, is not restored", id, domain)
				}
				return missing < 5
			})
			for key, r := range got {
				if d := cmp.Diff(original[key], r); d != "" {
					t.Errorf("restored %s differs from the original (-original +restored):\n%s", key, d)
				}
			}
			if len(got) < len(original)-int(during.Load()) {
				t.Errorf("%d records restored of %d, of which %d were written after the backup began", len(got), len(original), during.Load())
			}
			t.Logf("%d records restored; %d notes were written while the backup ran", len(got), during.Load())
		})
	}
}

// backupLogin logs ann in on domain and returns the session token.
func backupLogin(t *testing.T, p *coredProcess, domain string) string {
	t.Helper()
	st, body := p.call(t, "POST", "/graphql", map[string]string{"core-domain": domain}, map[string]any{
		"query":     `query($u: String!, $p: String!) { login(username: $u, password: $p) { sessionToken } }`,
		"variables": map[string]any{"u": "ann", "p": "correct horse battery"}})
	d, _ := body["data"].(map[string]any)
	login, _ := d["login"].(map[string]any)
	token, _ := login["sessionToken"].(string)
	if st != 200 || token == "" {
		t.Fatalf("login on %s: %d %v", domain, st, body)
	}
	return token
}

// openBolt opens the store of a stopped data directory; the caller
// closes it.
func openBolt(t *testing.T, dir string) store.Store {
	t.Helper()
	st, err := bolt.Open(filepath.Join(dir, "core.db"), bolt.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// storeRecords reads every record of a store through a snapshot, keyed
// "<instance>/<type>/<id>", and closes the store.
func storeRecords(t *testing.T, st store.Store) map[string]*store.Record {
	t.Helper()
	defer st.Close()
	ctx := context.Background()
	sn, err := st.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Close()
	insts, err := sn.Instances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*store.Record{}
	for _, inst := range insts {
		if err := sn.Records(ctx, inst, func(r *store.Record) error {
			out[inst+"/"+r.Type+"/"+r.ID] = r
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
