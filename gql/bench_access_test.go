package gql_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/corehq/core/server"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/mongo"
	"github.com/corehq/core/store/mongo/mongotest"
	"github.com/corehq/core/tenant"
)

// The access-rights benchmark: 10,000 books owned by 100 accounts; the
// grantee holds a wildcard grant from each of 20 owners and 1,000 grants
// on single books of the others. A find as the grantee is measured
// against the same find by the instance token, and the grantee's get of
// a granted book against an owner's get of its own.

type grantsBench struct {
	env                      *servertest.Env
	token, owner, grantee    string
	ownBook, grantedBook     string
	ownerID, granteeID, inst string
}

func newGrantsBench(b *testing.B) *grantsBench {
	env := servertest.Start(b)
	env.PutRelease("bookstore", "v1", bookstoreSDL(b))
	g := &grantsBench{env: env, token: env.CreateInstance("bench.test", "bookstore", "v1", tenant.Settings{})}
	c := &client{t: b, env: env, domain: "bench.test", token: g.token}
	g.ownerID = c.newAccount("owner", "", "correct horse battery")
	g.granteeID = c.newAccount("grantee", "", "correct horse battery")
	g.owner, g.grantee = c.login("owner", "correct horse battery").token, c.login("grantee", "correct horse battery").token
	inst, _ := env.Directory.Lookup("bench.test")
	g.inst = inst.ID
	owner := func(i int) string {
		if i == 0 {
			return g.ownerID
		}
		return fmt.Sprintf("owner%02d", i)
	}
	now := time.Now().UTC()
	write := func(ops []store.Op) {
		if _, err := env.Store.Write(context.Background(), g.inst, ops, store.Quota{}); err != nil {
			b.Fatal(err)
		}
	}
	var ops []store.Op
	for i := range 10_000 {
		op := store.Op{Kind: store.OpUpsert, Type: "Book", ID: fmt.Sprintf("b%05d", i), Now: now, CreatedBy: owner(i % 100),
			Set: map[string]any{"title": fmt.Sprintf("Book %d", i), "authorid": int64(i % 1000), "price": float64((i*7919)%10000) / 100}}
		ops = append(ops, op)
		if len(ops) == 1000 {
			write(ops)
			ops = nil
		}
	}
	grant := func(id, owner, resource string) store.Op {
		return store.Op{Kind: store.OpUpsert, Type: "AccessRight", ID: id, Now: now, CreatedBy: owner, Set: map[string]any{
			"resource": resource, "resourceType": "Book", "operationType": "Query", "operation": "find", "permissionType": "RBP",
			"resourceOwnerId": owner, "members": []any{g.granteeID}}}
	}
	for i := range 20 {
		ops = append(ops, grant(fmt.Sprintf("w%02d", i), owner(i), "*"))
	}
	// Every eighth book of owners 20 to 99: 1,000 single-record grants.
	for i, n := 0, 0; n < 1000; i++ {
		if o := i % 100; o >= 20 && (i/100)%8 == 0 {
			ops = append(ops, grant(fmt.Sprintf("r%04d", n), owner(o), fmt.Sprintf("b%05d", i)))
			n++
		}
	}
	write(ops)
	g.ownBook, g.grantedBook = "b00500", "b00020"
	return g
}

// run measures one /graphql request through the server's handler.
func (g *grantsBench) run(b *testing.B, token, query string, vars map[string]any, want string) {
	benchGraphQL(b, g.env.Server.Handler(), "bench.test", token, query, vars, want)
}

func BenchmarkGrantsFind25(b *testing.B) {
	g := newGrantsBench(b)
	vars := map[string]any{"q": "price > 50"}
	b.Run("instance-token", func(b *testing.B) { g.run(b, g.token, httpFind25, vars, `"hasNextPage":true`) })
	b.Run("grantee", func(b *testing.B) { g.run(b, g.grantee, httpFind25, vars, `"hasNextPage":true`) })
}

func BenchmarkGrantsGet(b *testing.B) {
	g := newGrantsBench(b)
	get := `query($id: String!) { get(type: Book, id: $id) { ... on Book { title authorid price core { id created updated } } } }`
	b.Run("owner-own", func(b *testing.B) { g.run(b, g.owner, get, map[string]any{"id": g.ownBook}, `"title":"Book 500"`) })
	b.Run("grantee-granted", func(b *testing.B) { g.run(b, g.grantee, get, map[string]any{"id": g.grantedBook}, `"title":"Book 20"`) })
}

// The access-rule benchmark: 100,000 tasks on 1,000 boards of 100 teams
// (board b belongs to team b mod 100, task t is on board t mod 1,000, all
// created by other accounts); the caller is a colleague of team 0, so the
// Task read rule `board.team.colleagues.core.id = $caller OR
// board.core.createdBy = $caller` lets it read the tasks of 10 boards:
// one task in a hundred, spread evenly. Its find of 25 tasks is measured
// against the same find by the instance token.

const rulesBenchSDL = `
type Team { name: String colleagues: [Account] }
type Board @indices(sets: [["team"]]) { title: String team: Team }
type Task @indices(sets: [["board"]]) @access(read: "board.team.colleagues.core.id = $caller OR board.core.createdBy = $caller") {
  title: String
  board: Board
  done: Boolean
}
`

const httpTasks25 = `query { find(type: Task, arcql: "*", first: 25) { edges { cursor node { ... on Task { title core { id created updated } } } }
	pageInfo { hasNextPage endCursor } } }`

func BenchmarkRulesFind25(b *testing.B) {
	var opts []servertest.Option
	if servertest.Kind() == servertest.KindMongo {
		// The FerretDB test server reads a whole collection for a query
		// (docs/benchmarks.md): a find among 100,000 tasks outlasts the
		// store's 10 s operation time-out, and the rule's three queries
		// the request's 30 s, on a busy machine.
		opts = append(opts, servertest.WithStore(mongotest.Open(b, func(c *mongo.Config) { c.OpTimeout = 10 * time.Minute })),
			servertest.WithConfig(func(c *server.Config) { c.RequestTimeout = 10 * time.Minute }))
	}
	env := servertest.Start(b, opts...)
	env.PutRelease("tasks", "v1", rulesBenchSDL)
	token := env.CreateInstance("rules.test", "tasks", "v1", tenant.Settings{})
	c := &client{t: b, env: env, domain: "rules.test", token: token}
	memberID := c.newAccount("member", "", "correct horse battery")
	member := c.login("member", "correct horse battery").token
	inst, _ := env.Directory.Lookup("rules.test")
	// Seeded with Load, a thousand records a call (one insertMany on
	// MongoDB: the FerretDB test server takes a write per op at tens a
	// second, so 100,000 upserts through Write would take an hour).
	now := time.Now().UTC()
	var recs []*store.Record
	flush := func(min int) {
		if len(recs) < min || len(recs) == 0 {
			return
		}
		if err := env.Store.Load(context.Background(), inst.ID, recs); err != nil {
			b.Fatal(err)
		}
		recs = nil
	}
	add := func(r *store.Record) {
		r.Created, r.Updated = now, now
		recs = append(recs, r)
		flush(1000)
	}
	for t := range 100 {
		colleagues := []any{fmt.Sprintf("acct%03d", t), fmt.Sprintf("acct%03d", t+100)}
		if t == 0 {
			colleagues = append(colleagues, memberID)
		}
		add(&store.Record{Type: "Team", ID: fmt.Sprintf("team%03d", t), CreatedBy: "admin", Fields: map[string]any{"name": fmt.Sprintf("Team %d", t), "colleagues": colleagues}})
	}
	for bd := range 1000 {
		add(&store.Record{Type: "Board", ID: fmt.Sprintf("board%04d", bd), CreatedBy: fmt.Sprintf("acct%03d", bd%100),
			Fields: map[string]any{"title": fmt.Sprintf("Board %d", bd), "team": fmt.Sprintf("team%03d", bd%100)}})
	}
	for t := range 100_000 {
		add(&store.Record{Type: "Task", ID: fmt.Sprintf("task%06d", t), CreatedBy: fmt.Sprintf("acct%03d", t%200),
			Fields: map[string]any{"title": fmt.Sprintf("Task %d", t), "board": fmt.Sprintf("board%04d", t%1000), "done": t%3 == 0}})
	}
	flush(1)
	h := env.Server.Handler()
	b.Run("instance-token", func(b *testing.B) { benchGraphQL(b, h, "rules.test", token, httpTasks25, nil, `"title":"Task 24"`) })
	b.Run("rule", func(b *testing.B) { benchGraphQL(b, h, "rules.test", member, httpTasks25, nil, `"title":"Task 2400"`) })
}
