package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corehq/core/internal/poll"
	"github.com/google/go-cmp/cmp"
)

// formsQueries are asked of the server whose data directory is backed up
// and of the server on the restored one: references (best, books) and a
// function reading a sealed env value, which opens only with the key file
// carried beside.
var formsQueries = []string{
	`{ find(type: Book, arcql: "*", first: 100) { edges { cursor node { ... on Book { title price } } } } }`,
	`{ find(type: Author, arcql: "*", first: 100) { edges { cursor node { ... on Author { name best { title } books { title } } } } } }`,
	`{ greet(who: "ann") }`,
}

// TestBackupOfStoppedDataDir takes the documented offline backup, `cored
// backup --data DIR OUT.tar.gz`, of a stopped server's data directory:
// restored into a new directory with the key file copied beside it, the
// store holds the same records, and a server on it answers the same
// queries, logs ann in and honours the session issued before the backup.
// While a server still runs on DIR the command refuses (bbolt's file
// lock, waited for a second), naming --from, and writes no file.
func TestBackupOfStoppedDataDir(t *testing.T) {
	t.Parallel()
	const admin = "backup-forms-admin-token-0123456789"
	data := t.TempDir()
	p := startCoredArgs(t, "--admin-token", admin, "--data", data)
	appDir := t.TempDir()
	writeFiles(t, appDir, backupApp)
	code, out, errOut := runCmd(t, env(map[string]string{"CORE_ADMIN_TOKEN": admin}), "deploy", "--server", "http://"+p.addr, appDir)
	if code != 0 {
		t.Fatalf("deploy: exit %d\n%s%s", code, out, errOut)
	}
	const domain = "a.test"
	token := ""
	for _, line := range strings.Split(out, "\n") {
		if m := createdRE.FindStringSubmatch(line); m != nil && m[2] == domain {
			token = m[3]
		}
	}
	if token == "" {
		t.Fatalf("deploy made no instance %s: %s", domain, out)
	}
	upsert := func(typ string, v map[string]any) string {
		d := p.data(t, domain, token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
			map[string]any{"v": map[string]any{typ: v}})
		return d["upsert"].([]any)[0].(map[string]any)["id"].(string)
	}
	ref := func(id string) map[string]any { return map[string]any{"core": map[string]any{"id": id}} }
	var books []string
	for i := range 3 {
		books = append(books, upsert("Book", map[string]any{"title": fmt.Sprintf("book %d", i), "price": 10.5 + float64(i)}))
	}
	upsert("Author", map[string]any{"name": "Ann", "best": ref(books[0]), "books": []any{ref(books[0]), ref(books[1])}})
	upsert("Author", map[string]any{"name": "Bo", "books": []any{ref(books[2])}})
	p.data(t, domain, token, `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`,
		map[string]any{"v": map[string]any{"username": "ann", "password": map[string]any{"value": "correct horse battery"}}})
	session := backupLogin(t, p, domain)
	answers := map[string]any{}
	for _, q := range formsQueries {
		answers[q] = p.data(t, domain, token, q, nil)
	}
	if got := answers[formsQueries[2]]; !cmp.Equal(map[string]any{"greet": "hello, ann"}, got) {
		t.Fatalf("greet before the backup: %v", got)
	}

	// While the server runs, the data directory is locked: the command
	// refuses, pointing at --from, and leaves no file behind.
	busyDir := t.TempDir()
	busy := filepath.Join(busyDir, "busy.tar.gz")
	code, errOut = backupProcess(t, "--data", data, busy)
	if code != 1 || !strings.Contains(errOut, data+" is in use by a running server") || !strings.Contains(errOut, "--from") {
		t.Errorf("cored backup --data of a running server's directory: exit %d, %q; want exit 1 naming the directory in use and --from", code, errOut)
	}
	if left, _ := os.ReadDir(busyDir); len(left) != 0 {
		t.Errorf("the refused backup left %v in the output folder", left)
	}

	p.terminate(t)
	// A mistyped data directory is refused: no empty store is made and
	// backed up as if it were one.
	typo := filepath.Join(t.TempDir(), "no-such-data")
	code, out, errOut = runCmd(t, env(nil), "backup", "--data", typo, filepath.Join(busyDir, "typo.tar.gz"))
	if code == 0 || !strings.Contains(errOut, "holds no data directory's store") {
		t.Errorf("cored backup --data of a missing directory: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(typo); err == nil {
		t.Errorf("cored backup --data made the missing directory %s", typo)
	}
	archive := filepath.Join(t.TempDir(), "core.tar.gz")
	code, out, errOut = runCmd(t, env(nil), "backup", "--data", data, archive)
	if code != 0 || !strings.Contains(out, "backup written to "+archive) {
		t.Fatalf("cored backup --data: exit %d\n%s%s", code, out, errOut)
	}
	restored := t.TempDir()
	code, out, errOut = runCmd(t, env(nil), "restore", archive, "--data", restored)
	if code != 0 {
		t.Fatalf("cored restore: exit %d\n%s%s", code, out, errOut)
	}
	copyKeyFile(t, data, restored)
	original := storeRecords(t, openBolt(t, data))
	got := storeRecords(t, openBolt(t, restored))
	if len(original) == 0 {
		t.Fatal("the original store holds no record")
	}
	if d := cmp.Diff(original, got); d != "" {
		t.Errorf("the restored records (-original +restored):\n%s", d)
	}

	q := startCoredArgs(t, "--admin-token", admin, "--data", restored)
	for _, query := range formsQueries {
		if d := cmp.Diff(answers[query], q.data(t, domain, token, query, nil)); d != "" {
			t.Errorf("%s (-before the backup +restored):\n%s", query, d)
		}
	}
	backupLogin(t, q, domain)
	q.data(t, domain, session, `{ find(type: Book, arcql: "*") { edges { cursor } } }`, nil)
}

// TestScheduledBackups runs a server with --backup-every 1m --backup-keep
// 2 and watches its --backup-dir: the schedule takes backups on its own
// (none is asked for), at least three are seen over time while no more
// than two stay, the oldest going first; GET /admin/v1/backups lists the
// kept ones newest first; and the newest restores with the records
// written before it, one written after the first backup among them.
// (It takes three intervals of the real clock; nothing asserts a time.)
func TestScheduledBackups(t *testing.T) {
	t.Parallel()
	const keep = 2
	data, backups := t.TempDir(), t.TempDir()
	p := startCoredArgs(t, "--admin-token", crashAdmin, "--data", data,
		"--backup-dir", backups, "--backup-every", "1m", "--backup-keep", fmt.Sprint(keep))
	token := newNotesInstance(t, p, nil)
	h := map[string]string{"core-domain": "crash.test", "authorization": token}
	note := func(text string) {
		t.Helper()
		if st, body := p.call(t, "POST", "/graphql", h, map[string]any{"query": `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
			"variables": map[string]any{"v": map[string]any{"Note": map[string]any{"text": text}}}}); st != 200 || body["errors"] != nil {
			t.Fatalf("upsert of note %q: %d %v", text, st, body)
		}
	}
	note("before the first backup")

	// The folder is read until a third backup has come and the oldest
	// has gone. A new backup is renamed into place before the oldest
	// beyond the kept number is removed (backup.Dir.Take), so a reading
	// may fall between the two and see keep+1, the extra one the oldest;
	// never more.
	var seen []string // every backup seen, in the order first seen
	between := 0      // readings that fell between a rename and the pruning
	var kept []string
	poll.Within(t, 5*time.Minute, "a third scheduled backup, with the oldest removed", func() bool {
		kept = backupNames(t, backups)
		for _, name := range kept {
			if !slices.Contains(seen, name) {
				seen = append(seen, name)
				if len(seen) == 1 {
					note("after the first backup")
				}
			}
		}
		if len(kept) > keep+1 {
			t.Fatalf("%d backups in the folder at once, keeping %d: %v", len(kept), keep, kept)
		}
		if len(kept) == keep+1 {
			between++
		}
		if newest := seen[len(seen)-len(kept):]; !slices.Equal(newest, kept) {
			t.Fatalf("the folder holds %v, not the newest of those seen: %v", kept, seen)
		}
		return len(seen) >= 3 && len(kept) == keep
	}, nil)
	if !slices.IsSorted(seen) {
		t.Errorf("backups seen in the order %v: names do not follow the order they were taken", seen)
	}
	if want := seen[len(seen)-keep:]; !slices.Equal(want, kept) {
		t.Errorf("the folder keeps %v, want the newest %d seen: %v", kept, keep, want)
	}
	t.Logf("backups seen: %v; %d readings fell between a new backup and the pruning", seen, between)

	// The admin API lists the kept ones, newest first.
	st, body := p.call(t, "GET", "/admin/v1/backups", map[string]string{"authorization": crashAdmin}, nil)
	listed, _ := body["backups"].([]any)
	var names []string
	var created []time.Time
	for _, b := range listed {
		b, _ := b.(map[string]any)
		name, _ := b["name"].(string)
		c, err := time.Parse(time.RFC3339Nano, fmt.Sprint(b["created"]))
		fi, serr := os.Stat(filepath.Join(backups, name))
		if err != nil || serr != nil || b["size"] != float64(fi.Size()) {
			t.Errorf("GET /admin/v1/backups lists %v: created %v, file %v", b, err, serr)
		}
		names = append(names, name)
		created = append(created, c)
	}
	newestFirst := slices.Clone(kept)
	slices.Reverse(newestFirst)
	if st != 200 || !slices.Equal(newestFirst, names) {
		t.Fatalf("GET /admin/v1/backups: %d %v, want the kept %v newest first", st, body, newestFirst)
	}
	if !created[0].After(created[1]) {
		t.Errorf("GET /admin/v1/backups: created %v, want newest first", created)
	}
	if strings.Contains(p.log.String(), "scheduled backup failed") {
		t.Errorf("the server logged a failed scheduled backup:\n%s", p.log.String())
	}
	p.stop()

	// The newest restores, with both notes.
	restored := t.TempDir()
	code, out, errOut := runCmd(t, env(nil), "restore", filepath.Join(backups, names[0]), "--data", restored)
	if code != 0 {
		t.Fatalf("cored restore %s: exit %d\n%s%s", names[0], code, out, errOut)
	}
	copyKeyFile(t, data, restored)
	q := startCoredArgs(t, "--admin-token", crashAdmin, "--data", restored)
	st, body = q.call(t, "POST", "/graphql", h, map[string]any{"query": `{ find(type: Note, arcql: "*", first: 10) { edges { node { ... on Note { text } } } } }`})
	var texts []string
	d, _ := body["data"].(map[string]any)
	find, _ := d["find"].(map[string]any)
	edges, _ := find["edges"].([]any)
	for _, e := range edges {
		text, _ := e.(map[string]any)["node"].(map[string]any)["text"].(string)
		texts = append(texts, text)
	}
	slices.Sort(texts)
	if want := []string{"after the first backup", "before the first backup"}; st != 200 || body["errors"] != nil || !cmp.Equal(want, texts) {
		t.Errorf("the notes of the server restored from %s: %d %v, want %v", names[0], st, body, want)
	}
}

// backupNames lists the backups in a --backup-dir (core-<time>.tar.gz),
// oldest first: in-progress ones (.taking-*) are not among them.
func backupNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "core-") && strings.HasSuffix(e.Name(), ".tar.gz") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

// copyKeyFile copies the key file of data directory from into to, as an
// operator carries it beside a restored store.
func copyKeyFile(t *testing.T, from, to string) {
	t.Helper()
	keys, err := os.ReadFile(filepath.Join(from, keyFileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(to, keyFileName), keys, 0o600); err != nil {
		t.Fatal(err)
	}
}

// backupProcess runs `cored backup args…` as a process of its own (a file
// lock held by another process is what it meets) and returns its exit
// status and standard error. A command still running after two minutes
// is killed and fails the test: it hangs.
func backupProcess(t *testing.T, args ...string) (code int, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"backup"}, args...)...)
	cmd.Env = append(os.Environ(), "CORED_TEST_MAIN=1", "CORE_ADMIN_TOKEN=", "CORE_MONGO_URI=")
	var errOut strings.Builder
	cmd.Stderr = &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("cored backup %v did not end (killed after two minutes): it hangs\n%s", args, errOut.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("cored backup %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), errOut.String()
}

// terminate stops the process as an operator does, with SIGTERM, and
// waits for it to exit cleanly; stop then does nothing. A process still
// running after two minutes is killed and fails the test.
func (p *coredProcess) terminate(t *testing.T) {
	t.Helper()
	p.once.Do(func() {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.eof:
		case <-time.After(2 * time.Minute):
			_ = p.cmd.Process.Kill()
			<-p.eof
			_ = p.cmd.Wait()
			t.Fatalf("cored did not stop on SIGTERM within two minutes (killed):\n%s", p.log.String())
		}
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("cored after SIGTERM: %v\n%s", err, p.log.String())
		}
	})
}
