package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/internal/poll"

	"go.etcd.io/bbolt"
	driver "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/keyring"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt"
	"github.com/corehq/core/store/mongo"
	"github.com/corehq/core/store/mongo/mongotest"
)

// keysAdminToken is the admin token of the servers these tests start.
const keysAdminToken = "keys-test-admin-token-0123456789"

// envValue is an instance env value distinctive enough to find in a file.
const envValue = "whsec_keys_test_4f1c9a2e7b6d"

// shop is the instance deployed by deployShop.
type shop struct {
	id, adminAccount string
	token            string // the instance token
}

// deployShop publishes app shop (type Book) and creates instance
// shop.test on p with env STRIPE_SECRET=envValue.
func deployShop(t *testing.T, p *coredProcess) shop {
	t.Helper()
	admin := map[string]string{"authorization": keysAdminToken}
	if st, body := p.call(t, "PUT", "/admin/v1/apps/shop/releases/v1", admin, map[string]any{"schema": `type Book { title: String }`}); st != 201 && st != 200 {
		t.Fatalf("release: %d %v", st, body)
	}
	st, body := p.call(t, "POST", "/admin/v1/instances", admin, map[string]any{"domain": "shop.test", "app": "shop", "release": "v1",
		"env": map[string]string{"STRIPE_SECRET": envValue}})
	if st != 201 {
		t.Fatalf("instance: %d %v", st, body)
	}
	s := shop{token: body["token"].(string), id: body["instanceId"].(string), adminAccount: body["adminAccountId"].(string)}
	if st, body := p.call(t, "POST", "/graphql", map[string]string{"core-domain": "shop.test", "authorization": s.token},
		map[string]any{"query": `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`,
			"variables": map[string]any{"v": map[string]any{"username": "ada", "password": map[string]any{"value": "correct horse battery"}}}}); st != 200 || body["errors"] != nil {
		t.Fatalf("createAccount: %d %v", st, body)
	}
	return s
}

// login returns a session token of ada on p.
func login(t *testing.T, p *coredProcess) string {
	t.Helper()
	_, body := p.call(t, "POST", "/graphql", map[string]string{"core-domain": "shop.test"},
		map[string]any{"query": `{ login(username: "ada", password: "correct horse battery") { sessionToken } }`})
	data, _ := body["data"].(map[string]any)
	l, _ := data["login"].(map[string]any)
	token, _ := l["sessionToken"].(string)
	if token == "" {
		t.Fatalf("login: %v", body)
	}
	return token
}

// status is the HTTP status of a query that needs a caller, sent with
// token.
func status(t *testing.T, p *coredProcess, token string) int {
	t.Helper()
	st, _ := p.call(t, "POST", "/graphql", map[string]string{"core-domain": "shop.test", "authorization": token},
		map[string]any{"query": `{ find(type: Book, arcql: "*") { edges { cursor } } }`})
	return st
}

// keyID is the key id a session token names.
func keyID(token string) string {
	rest, _ := strings.CutPrefix(token, "cs2.")
	id, _, _ := strings.Cut(rest, ".")
	return id
}

// keyForms returns every key of the ring and every sub-key derived from
// it, raw and in the encodings a file might hold them in.
func keyForms(r *keyring.Ring) map[string][]byte {
	out := map[string][]byte{}
	add := func(name string, b []byte) {
		out[name+" raw"] = b
		out[name+" hex"] = []byte(hex.EncodeToString(b))
		for enc, e := range map[string]*base64.Encoding{"base64": base64.StdEncoding, "base64url": base64.URLEncoding} {
			out[name+" "+enc] = []byte(e.WithPadding(base64.NoPadding).EncodeToString(b))
		}
	}
	for _, k := range r.Keys() {
		add("master key "+k.ID, k.Secret)
	}
	for _, label := range []string{keyring.LabelSessions, keyring.LabelSecrets} {
		for id, sub := range r.Derive(label) {
			add(label+" key "+id, sub)
		}
	}
	return out
}

// plantSessionSecret stores a random session secret in st as versions
// before the key ring kept it, and returns it.
func plantSessionSecret(t *testing.T, st store.Store) []byte {
	t.Helper()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	if err := st.PutDoc(t.Context(), "service", "session-secret", secret); err != nil {
		t.Fatal(err)
	}
	return secret
}

// legacyForge makes a session token as versions before the key ring
// signed them, with secret as the store's session secret.
func legacyForge(secret []byte, inst, account string) string {
	k := hmac.New(sha256.New, secret)
	k.Write([]byte("core session key\x00" + inst))
	payload, _ := json.Marshal(map[string]any{"i": inst, "a": account, "s": "forged", "t": time.Now().UnixMicro(), "e": time.Now().Add(time.Hour).UnixMicro()})
	body := "cs1." + base64.RawURLEncoding.EncodeToString(payload)
	m := hmac.New(sha256.New, k.Sum(nil))
	m.Write([]byte(body))
	return body + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// forge makes a session token with the current form, naming key id and
// signed with master as that key.
func forge(t *testing.T, id string, master []byte, inst, account string) string {
	t.Helper()
	file, _ := json.Marshal(map[string]any{"format": "core-keyring-1", "active": id, "keys": []map[string]any{{"id": id, "secret": master}}})
	r, err := keyring.Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	token, _ := auth.NewSessions(keyring.Hold(r)).Issue(inst, account, time.Now(), time.Hour)
	return token
}

// boltValues returns every key and value of every bucket of a bolt file
// at least 32 bytes long, without duplicates: the material a forger who
// holds the file has.
func boltValues(t *testing.T, path string) [][]byte {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	seen := map[string]bool{}
	var out [][]byte
	keep := func(b []byte) {
		if len(b) >= 32 && !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, bytes.Clone(b))
		}
	}
	var walk func(b *bbolt.Bucket)
	walk = func(b *bbolt.Bucket) {
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			keep(k)
			if v == nil {
				if nested := b.Bucket(k); nested != nil {
					walk(nested)
				}
				continue
			}
			keep(v)
		}
	}
	if err := db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error { walk(b); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStoreCopyForgesNoSession copies the embedded store's file while the
// server runs and tries what its holder could: the copy holds no key (the
// key file is beside it, not in it), no env value in clear, and not the
// session secret an older version kept in the store (removed at start);
// sessions forged from every value in it, as an older version signed them
// and as this one does, answer 401, while one forged with the real key
// (the control: the forgery itself works) answers 200. Hostile checklist
// 13: a DB dump cannot be replayed as a token.
func TestStoreCopyForgesNoSession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The store of an older version: its session secret kept inside.
	old, err := bolt.Open(filepath.Join(dir, "core.db"), bolt.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	oldSecret := plantSessionSecret(t, old)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	p := startServe(t, "--data", dir, "--admin-token", keysAdminToken)
	s := deployShop(t, p)
	session := login(t, p)
	if st := status(t, p, session); st != 200 {
		t.Fatalf("a real session: %d", st)
	}
	info, err := os.Stat(filepath.Join(dir, "core.keys"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the generated key file beside core.db: %v, %v; want mode 0600", info, err)
	}

	// The copy, taken while the server runs.
	raw, err := os.ReadFile(filepath.Join(dir, "core.db"))
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(copyPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	ring, err := keyring.ReadFile(filepath.Join(dir, "core.keys"))
	if err != nil {
		t.Fatal(err)
	}
	for name, form := range keyForms(ring) {
		if bytes.Contains(raw, form) {
			t.Errorf("the copy of core.db holds the %s", name)
		}
	}
	if bytes.Contains(raw, []byte(envValue)) {
		t.Error("the copy of core.db holds the instance's env value in clear")
	}
	values := boltValues(t, copyPath)
	cp, err := bolt.Open(copyPath, bolt.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cp.GetDoc(t.Context(), "service", "session-secret"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the copy still holds the session secret document of the older version: %v", err)
	}
	if up, err := cp.GetDoc(t.Context(), "registry", "upload-secret"); err != nil || !keyring.IsSealed(string(up)) {
		t.Errorf("the registry's upload secret in the copy: %.20q, %v; want it sealed", up, err)
	}
	_ = cp.Close()

	// Forge from everything in the copy, for ada and the instance's admin
	// account; the old secret too, as the older version signed.
	var ada struct {
		A string `json:"a"`
	}
	payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(session, ".")[2])
	_ = json.Unmarshal(payload, &ada)
	accounts := []string{ada.A, s.adminAccount}
	candidates := append(values, oldSecret)
	tried := 0
	for _, c := range candidates {
		masters := [][]byte{}
		if len(c) == 32 {
			masters = append(masters, c)
		}
		if h, err := hex.DecodeString(string(c)); err == nil && len(h) == 32 {
			masters = append(masters, h)
		}
		for _, acct := range accounts {
			forged := []string{legacyForge(c, s.id, acct)}
			for _, m := range masters {
				forged = append(forged, forge(t, ring.Active(), m, s.id, acct))
			}
			for _, tok := range forged {
				tried++
				if st := status(t, p, tok); st != 401 {
					t.Fatalf("a session forged from the copy answers %d, want 401", st)
				}
			}
		}
	}
	t.Logf("%d values of the copy, %d forged sessions: all 401", len(candidates), tried)
	for _, k := range ring.Keys() {
		if st := status(t, p, forge(t, k.ID, k.Secret, s.id, s.adminAccount)); st != 200 {
			t.Errorf("the control, a session forged with the key file's key: %d, want 200", st)
		}
	}
}

// TestKeyRotation: `cored keys rotate` while the server runs keeps the
// sessions issued before valid, and new ones name the new key; `cored
// keys retire` of the old key ends the old sessions (401) while the new
// ones go on; a key added (not active) verifies but signs nothing until
// activated; the instance's env, sealed again with the new key, opens
// after a restart with the old key gone.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startServe(t, "--data", dir, "--admin-token", keysAdminToken)
	s := deployShop(t, p)
	before := login(t, p)
	oldKey := keyID(before)
	keys := func(args ...string) string {
		t.Helper()
		var out, errs lockedBuffer
		if code := run(t.Context(), append(append([]string{"keys"}, args...), "--data", dir), env(nil), &out, &errs); code != 0 {
			t.Fatalf("cored keys %v: exit %d: %s", args, code, errs.String())
		}
		return out.String()
	}
	if out := keys("rotate"); !strings.Contains(out, oldKey+" still verify") {
		t.Errorf("cored keys rotate says %q", out)
	}
	var after string
	poll.Until(t, "a session naming the new key", func() bool { after = login(t, p); return keyID(after) != oldKey })
	for name, tok := range map[string]string{"before": before, "after": after} {
		if st := status(t, p, tok); st != 200 {
			t.Errorf("after the rotation, the session issued %s it: %d, want 200", name, st)
		}
	}
	if out := keys("list"); !strings.Contains(out, keyID(after)) || !strings.Contains(out, "active") || !strings.Contains(out, oldKey) {
		t.Errorf("cored keys list says %q", out)
	}
	keys("retire", oldKey)
	poll.Until(t, "the retired key's session refused", func() bool { return status(t, p, before) == 401 })
	if st := status(t, p, after); st != 200 {
		t.Errorf("after the retirement, the session of the active key: %d, want 200", st)
	}

	// In two steps: a key added verifies (a session signed with it is
	// accepted once the server has read the file) but signs nothing until
	// activated.
	out := keys("add")
	added := strings.Fields(strings.TrimPrefix(out, "key "))[0]
	ring, err := keyring.ReadFile(filepath.Join(dir, "core.keys"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ring.Keys() {
		if k.ID == added {
			poll.Until(t, "a session signed with the added key accepted", func() bool {
				return status(t, p, forge(t, k.ID, k.Secret, s.id, s.adminAccount)) == 200
			})
		}
	}
	if got := keyID(login(t, p)); got != keyID(after) {
		t.Errorf("after cored keys add, a session names key %s, want the active %s", got, keyID(after))
	}
	keys("activate", added)
	poll.Until(t, "a session naming the activated key", func() bool { return keyID(login(t, p)) == added })

	p.stop()
	p = startServe(t, "--data", dir, "--admin-token", keysAdminToken)
	st, body := p.call(t, "GET", "/admin/v1/instances/shop.test", map[string]string{"authorization": keysAdminToken}, nil)
	if env, _ := body["env"].(map[string]any); st != 200 || env["STRIPE_SECRET"] != envValue {
		t.Errorf("the instance after a restart without the old key: %d %v", st, body)
	}
	if st := status(t, p, after); st != 200 {
		t.Errorf("after a restart, the session of the active key: %d", st)
	}
	if st := status(t, p, before); st != 401 {
		t.Errorf("after a restart, the session of the retired key: %d", st)
	}
}

// TestServeRefusesBadKeyFiles: a key file that others may read, a
// malformed one, a named one that is missing, and MongoDB without one
// stop the start with a message naming the problem.
func TestServeRefusesBadKeyFiles(t *testing.T) {
	t.Parallel()
	good := keyring.Generate().Marshal()
	for _, tc := range []struct {
		name   string
		file   []byte      // written to core.keys in the data directory, when not nil
		mode   os.FileMode // its mode
		args   []string
		stderr []string
	}{
		{"readable by the group", good, 0o640, nil, []string{"core.keys has permissions 0640", "readable by its owner only", "chmod 600"}},
		{"readable by all", good, 0o644, nil, []string{"core.keys has permissions 0644", "chmod 600"}},
		{"writable by others", good, 0o602, nil, []string{"permissions 0602"}},
		{"not JSON", []byte("not a key file"), 0o600, nil, []string{"core.keys", "not a JSON key ring"}},
		{"short key", []byte(`{"format":"core-keyring-1","active":"a","keys":[{"id":"a","secret":"AAAA"}]}`), 0o600, nil, []string{"key a has 3 bytes, want 32"}},
		{"named and missing", nil, 0, []string{"--key-file", "{dir}/none.keys"}, []string{"none.keys does not exist", "cored keys init"}},
		{"MongoDB without one", nil, 0, []string{"--mongo-uri", "mongodb://127.0.0.1:1"}, []string{"on MongoDB a key file is required", "cored keys init"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tc.file != nil {
				if err := os.WriteFile(filepath.Join(dir, "core.keys"), tc.file, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(filepath.Join(dir, "core.keys"), tc.mode); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--admin-token", keysAdminToken}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "{dir}", dir))
			}
			var out, errs lockedBuffer
			code := run(t.Context(), args, env(nil), &out, &errs)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			for _, want := range tc.stderr {
				if !strings.Contains(errs.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, errs.String())
				}
			}
			if strings.Contains(errs.String(), `"msg":"listening"`) {
				t.Error("it started serving")
			}
		})
	}
}

// TestMongoDumpHoldsNoKeys: two processes on one MongoDB database share a
// key file and accept each other's sessions and env; a process with
// another key file refuses to start (it cannot open the env); and every
// document of every collection, read through the driver as mongodump
// would, holds neither a key nor the env value, nor the session secret
// an older version kept. Hostile checklist 13: a DB dump cannot be
// replayed as a token.
func TestMongoDumpHoldsNoKeys(t *testing.T) {
	t.Parallel()
	uri, db := mongotest.Database(t)
	old, err := mongo.Open(t.Context(), mongotest.Config(uri, db))
	if err != nil {
		t.Fatal(err)
	}
	oldSecret := plantSessionSecret(t, old)
	defer old.Close()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	keyFile := newKeyFile(t)
	a := startServe(t, "--mongo-uri", u.String(), "--key-file", keyFile, "--admin-token", keysAdminToken)
	b := startServe(t, "--mongo-uri", u.String(), "--key-file", keyFile, "--admin-token", keysAdminToken)
	deployShop(t, a)
	poll.Until(t, "b serving the instance a made", func() bool {
		st, _ := b.call(t, "POST", "/graphql", map[string]string{"core-domain": "shop.test"}, map[string]any{"query": `{ __typename }`})
		return st != 404
	})
	session := login(t, a)
	if st := status(t, b, session); st != 200 {
		t.Errorf("a's session on b: %d, want 200", st)
	}
	if st := status(t, a, login(t, b)); st != 200 {
		t.Errorf("b's session on a: %d, want 200", st)
	}
	st, body := b.call(t, "GET", "/admin/v1/instances/shop.test", map[string]string{"authorization": keysAdminToken}, nil)
	if env, _ := body["env"].(map[string]any); st != 200 || env["STRIPE_SECRET"] != envValue {
		t.Errorf("the env a set, through b: %d %v", st, body)
	}
	var errs lockedBuffer
	other := newKeyFile(t)
	if code := run(t.Context(), []string{"serve", "--addr", "127.0.0.1:0", "--mongo-uri", u.String(), "--key-file", other, "--admin-token", keysAdminToken},
		env(nil), &lockedBuffer{}, &errs); code != 1 || !strings.Contains(errs.String(), "restore the key file") {
		t.Errorf("a process with another key file: exit %d, stderr %s; want 1 and a message about the key file", code, errs.String())
	}

	// The dump: every document of every collection.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	client, err := driver.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background()) //nolint:errcheck // the test is over
	names, err := client.Database(db).ListCollectionNames(ctx, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var dump bytes.Buffer
	docs := 0
	for _, name := range names {
		cur, err := client.Database(db).Collection(name).Find(ctx, map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		for cur.Next(ctx) {
			dump.Write(cur.Current)
			docs++
		}
		if err := cur.Err(); err != nil {
			t.Fatal(err)
		}
		_ = cur.Close(ctx)
	}
	t.Logf("dumped %d documents of %d collections (%d bytes)", docs, len(names), dump.Len())
	if docs == 0 || !bytes.Contains(dump.Bytes(), []byte("shop.test")) {
		t.Fatalf("the dump holds %d documents, and not the instance: it does not read the database", docs)
	}
	ring, err := keyring.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	for name, form := range keyForms(ring) {
		if bytes.Contains(dump.Bytes(), form) {
			t.Errorf("the dump holds the %s", name)
		}
	}
	if up, err := old.GetDoc(ctx, "registry", "upload-secret"); err != nil || !keyring.IsSealed(string(up)) {
		t.Errorf("the registry's upload secret in the database: %.20q, %v; want it sealed", up, err)
	}
	for what, v := range map[string][]byte{"the env value": []byte(envValue), "the old session secret": oldSecret, "the old session secret's document": []byte("session-secret")} {
		if bytes.Contains(dump.Bytes(), v) {
			t.Errorf("the dump holds %s", what)
		}
	}
}
