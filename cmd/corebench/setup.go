package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// The bench app: the Author/Book schema of ../shared/bench, a Mutation
// field bound to a small function for the webhook scenario, and one
// password account.
const (
	benchApp      = "bench"
	benchUser     = "bench"
	benchEmail    = "bench@example.com"
	benchPassword = "Bench-User-Pass-1"
	hookFunction  = "bench-hook"
	hookVersion   = "v1"
	hookField     = "benchHook"
	hookName      = "bench" // the Webhook record
)

// hookSource is the webhook's function: it reads the payload and answers
// a small JSON body.
const hookSource = `// bench-hook answers a webhook call of corebench.
exports.main = function (input, callback) {
  const payload = JSON.parse(input.args.payload);
  callback({ status: 200, body: { ok: true, method: payload.method, bytes: payload.body.length } }, null);
};
`

// benchSDL is the release's schema; with priceIndex Book has an index on
// price, which the sorted list uses.
func benchSDL(priceIndex bool) string {
	book := "type Book"
	if priceIndex {
		book += ` @indices(sets: [["price"]])`
	}
	return "type Author { name: String age: Int bestbook: Book booklist: [Book!] }\n" +
		book + " { title: String authorid: Int price: Float }\n" +
		"type Mutation { " + hookField + "(payload: WebhookPayload): WebhookResponse @fn(name: \"" + hookFunction + "\", version: \"" + hookVersion + "\") }\n"
}

// releaseName names a release after its SDL, so a second run against the
// same server reuses an identical release and never collides with a
// different one (releases are immutable once an instance runs them).
func releaseName(sdl string) string {
	sum := sha256.Sum256([]byte(sdl))
	return "r" + hex.EncodeToString(sum[:6])
}

// admin returns the headers of an admin API request.
func adminHeaders(token string) map[string]string { return map[string]string{"authorization": token} }

// crudHeaders are those of a data request with the instance token.
func (in instance) crudHeaders() map[string]string {
	return map[string]string{"core-domain": in.domain, "authorization": in.token}
}

// deploy publishes the webhook's function and the release, creates the
// instance (anonymous requests on: webhooks need them) and saves the
// Webhook record. It returns the instance with its token.
func deploy(ctx context.Context, c *client, adminToken, domain string, priceIndex bool, data dataset) (instance, error) {
	ah := adminHeaders(adminToken)
	if _, err := c.call(ctx, "publish function", "PUT", "/admin/v1/apps/"+benchApp+"/functions/"+hookFunction+"/"+hookVersion,
		ah, []byte(hookSource)); err != nil {
		return instance{}, err
	}
	sdl := benchSDL(priceIndex)
	rel := releaseName(sdl)
	if _, err := c.call(ctx, "deploy release", "PUT", "/admin/v1/apps/"+benchApp+"/releases/"+rel, ah,
		map[string]any{"schema": sdl}); err != nil {
		return instance{}, err
	}
	v, err := c.call(ctx, "create instance", "POST", "/admin/v1/instances", ah,
		map[string]any{"domain": domain, "app": benchApp, "release": rel, "anonymousRequests": true}, 201)
	if err != nil {
		return instance{}, err
	}
	token, _ := dig(v, "token").(string)
	if token == "" {
		return instance{}, errors.New("create instance: POST /admin/v1/instances answered without a token")
	}
	in := instance{domain: domain, token: token, webhook: hookName, data: data}
	if _, err := c.call(ctx, "save the Webhook record", "POST", "/rest/v1", in.crudHeaders(),
		map[string]any{"values": map[string]any{"Webhook": []any{map[string]any{
			"name": hookName, "query": map[string]any{"type": "Mutation", "field": hookField},
		}}}}); err != nil {
		return instance{}, err
	}
	return in, nil
}

// seedSpec says how to seed.
type seedSpec struct {
	batch int // records per POST /rest/v1
	conc  int // requests in flight
}

// seedRecords upserts records first..last of a type through POST /rest/v1
// in batches; every batch must answer exactly its ids. record(i) builds
// record i.
func seedRecords[T any](ctx context.Context, c *client, in instance, typ string, first, last int, spec seedSpec,
	record func(i int) T, id func(i int) string, p *progress) error {
	type batch struct{ from, to int }
	batches := make(chan batch)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		done     int
	)
	total := last - first + 1
	start := time.Now()
	for range max(spec.conc, 1) {
		wg.Go(func() {
			for b := range batches {
				recs := make([]T, 0, b.to-b.from+1)
				want := make([]string, 0, b.to-b.from+1)
				for i := b.from; i <= b.to; i++ {
					recs = append(recs, record(i))
					want = append(want, id(i))
				}
				err := seedBatch(ctx, c, in, typ, recs, want)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("seeding %s %d..%d: %w", typ, b.from, b.to, err)
					cancel()
				}
				before := done
				done += b.to - b.from + 1
				if total >= 100000 && done*10/total != before*10/total {
					p.printf("  %s: %d of %d (%.0f records/s)", typ, done, total, float64(done)/time.Since(start).Seconds())
				}
				mu.Unlock()
			}
		})
	}
feed:
	for from := first; from <= last; from += spec.batch {
		select {
		case batches <- batch{from, min(from+spec.batch-1, last)}:
		case <-ctx.Done():
			break feed
		}
	}
	close(batches)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// seedBatch upserts one batch and checks the ids of the answer.
func seedBatch[T any](ctx context.Context, c *client, in instance, typ string, recs []T, want []string) error {
	v, err := c.call(ctx, "seed", "POST", "/rest/v1", in.crudHeaders(), map[string]any{"values": map[string]any{typ: recs}})
	if err != nil {
		return err
	}
	ups, _ := dig(v, "data", "upsert").([]any)
	got := make([]string, 0, len(ups))
	for i := range ups {
		id, _ := dig(ups, i, "id").(string)
		got = append(got, id)
	}
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("the answer names %d ids, want the %d sent (%s…)", len(got), len(want), strings.Join(want[:min(3, len(want))], ", "))
	}
	return nil
}

// seed writes the data set: the books, then the authors that reference
// them.
func seed(ctx context.Context, c *client, in instance, spec seedSpec, p *progress) error {
	d := in.data
	if err := seedRecords(ctx, c, in, "Book", 1, d.books, spec, d.book, bookID, p); err != nil {
		return err
	}
	return seedRecords(ctx, c, in, "Author", 1, d.authors, spec, d.author, authorID, p)
}

// createUser creates the account the login scenario logs in with
// (createAccount, with the instance token), logs it in and makes it the
// grantee of the access-rights scenario: a wildcard grant on every book
// the instance token made (the seeded ones) and a grant on each of the
// first 1,000 books, so that its finds run with grants in the filter.
// It returns the account's session token. Without grants it makes none.
func createUser(ctx context.Context, c *client, in instance, grants bool) (string, error) {
	id, err := createAccount(ctx, c, in)
	if err != nil {
		return "", err
	}
	v, err := c.call(ctx, "log the bench account in", "POST", "/rest/v1/login", map[string]string{"core-domain": in.domain},
		map[string]any{"username": benchUser, "password": benchPassword})
	if err != nil {
		return "", err
	}
	session, _ := dig(v, "data", "login", "sessionToken").(string)
	if session == "" {
		return "", errors.New("log the bench account in: no data.login.sessionToken")
	}
	if !grants {
		return session, nil
	}
	a, err := c.do(ctx, "GET", "/rest/v1/Book/"+bookID(1), in.crudHeaders(), nil)
	if err != nil {
		return "", err
	}
	b, err := ok2xx(a)
	if err != nil {
		return "", fmt.Errorf("reading the owner of the seeded books: %w", err)
	}
	owner, _ := dig(b, "data", "find", "edges", 0, "node", "core", "createdBy").(string)
	if owner == "" {
		return "", errors.New("reading the owner of the seeded books: no core.createdBy")
	}
	grant := func(resource string) map[string]any {
		return map[string]any{"resource": resource, "resourceType": "Book", "operationType": "Query", "operation": "find",
			"permissionType": "RBP", "resourceOwnerId": owner, "members": []any{map[string]any{"core": map[string]any{"id": id}}}}
	}
	rights := []any{grant("*")}
	for j := 1; j <= min(1000, in.data.books); j++ {
		rights = append(rights, grant(bookID(j)))
	}
	if _, err := c.call(ctx, "grant the bench account the books", "POST", "/rest/v1", in.crudHeaders(),
		map[string]any{"values": map[string]any{"AccessRight": rights}}); err != nil {
		return "", err
	}
	return session, nil
}

// createAccount creates the bench account and returns its id.
func createAccount(ctx context.Context, c *client, in instance) (string, error) {
	v, err := c.call(ctx, "create the bench account", "POST", "/graphql", in.crudHeaders(), map[string]any{
		"query": "mutation($v: AccountInput!) { createAccount(value: $v) { id } }",
		"variables": map[string]any{"v": map[string]any{
			"username": benchUser, "emails": []string{benchEmail}, "password": map[string]any{"value": benchPassword},
		}},
	})
	if err != nil {
		return "", err
	}
	id, _ := dig(v, "data", "createAccount", "id").(string)
	if id == "" {
		return "", errors.New("create the bench account: no data.createAccount.id")
	}
	return id, nil
}

// verifySeed reads a few records back and compares them with the data
// set.
func verifySeed(ctx context.Context, c *client, in instance) error {
	get := func(path string) (answer, error) { return c.do(ctx, "GET", path, in.crudHeaders(), nil) }
	d := in.data
	for _, j := range slices.Compact([]int{1, min(17, d.books), (d.books + 1) / 2, d.books}) {
		a, err := get("/rest/v1/Book/" + bookID(j))
		if err == nil {
			err = in.checkBook(checkCtx{a: a, id: bookID(j), get: get})
		}
		if err != nil {
			return fmt.Errorf("reading back book %s: %w", bookID(j), err)
		}
	}
	for _, k := range slices.Compact([]int{1, d.authors}) {
		a, err := get("/rest/v1/Author/" + authorID(k))
		if err == nil {
			err = in.checkAuthor(checkCtx{a: a, id: authorID(k), get: get})
		}
		if err != nil {
			return fmt.Errorf("reading back author %s: %w", authorID(k), err)
		}
	}
	return nil
}
