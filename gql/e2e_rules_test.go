package gql_test

import (
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corehq/core/internal/poll"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/internal/nodetest"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// boardSDL is the task board of the collaboration issue: a Board belongs
// to its creator and may name a Team; a Task on a board is readable by the
// board's creator and the team's colleagues, and may be created only on
// such a board; the board's creator may change and delete the tasks on it.
const boardSDL = `
type Team { name: String colleagues: [Account] }
type Board @access(read: "public = true OR team.colleagues.core.id = $caller") {
  title: String
  public: Boolean
  team: Team
}
type Task @access(
  read: "board.team.colleagues.core.id = $caller OR board.core.createdBy = $caller"
  create: "board.team.colleagues.core.id = $caller OR board.core.createdBy = $caller"
  update: "board.core.createdBy = $caller"
  delete: "board.core.createdBy = $caller"
) {
  title: String
  board: Board
  assignee: Account
}
type Comment { text: String task: Task }
`

const (
	taskTitles = `query($q: String!, $n: Int, $after: String) { find(type: Task, arcql: $q, first: $n, after: $after) {
		edges { cursor node { ... on Task { title board { title } } } } pageInfo { hasNextPage } } }`
	getTask    = `query($id: String!) { get(type: Task, id: $id) { ... on Task { title board { title } assignee { username } } } }`
	taskCount  = `query($w: String) { aggregate { task(where: $w) { core { count } title { count(distinct: true) } } } }`
	taskEvents = `subscription { subscribe(type: Task) { op id node { ... on Task { title } } } }`
	password   = "correct horse battery"
)

// taskBoard is the board of the issue on one instance: alice's board alpha
// (team: bob and dan), carol's public board gamma and private board delta.
type taskBoard struct {
	admin, alice, bob, carol, dan *client
	aliceID, bobID, carolID       string
	alpha, gamma, delta, team     string
}

func newTaskBoard(t *testing.T) *taskBoard {
	t.Helper()
	return newTaskBoardOn(t, servertest.Start(t))
}

// newTaskBoardOn builds the task board on the server env.
func newTaskBoardOn(t *testing.T, env *servertest.Env) *taskBoard {
	t.Helper()
	env.PutRelease("board", "v1", boardSDL)
	// Every account reads the others' usernames (assignee { username }).
	token := env.CreateInstance("board.test", "board", "v1", tenant.Settings{AccountFields: []string{"username"}})
	tb := &taskBoard{admin: &client{t: t, env: env, domain: "board.test", token: token}}
	tb.aliceID = tb.admin.newAccount("alice", "", password)
	tb.bobID = tb.admin.newAccount("bob", "", password)
	tb.carolID = tb.admin.newAccount("carol", "", password)
	danID := tb.admin.newAccount("dan", "", password)
	tb.alice, tb.bob = tb.admin.login("alice", password), tb.admin.login("bob", password)
	tb.carol, tb.dan = tb.admin.login("carol", password), tb.admin.login("dan", password)
	tb.alpha = tb.alice.upsertOne("Board", map[string]any{"title": "alpha"})
	tb.gamma = tb.carol.upsertOne("Board", map[string]any{"title": "gamma", "public": true})
	tb.delta = tb.carol.upsertOne("Board", map[string]any{"title": "delta"})
	// alice builds her team herself: bob in it from the start, dan linked
	// after (accounts she cannot read), and puts it on her board.
	tb.team = tb.alice.upsertOne("Team", map[string]any{"name": "alpha team", "colleagues": members(tb.bobID)})
	tb.alice.data(`mutation($t: String!, $a: String!) { link(from: Team, via: "colleagues", to: Account, whereFromID: $t, andToID: $a) }`,
		map[string]any{"t": tb.team, "a": danID})
	tb.alice.upsertOne("Board", map[string]any{"core": map[string]any{"id": tb.alpha}, "team": ref(tb.team)})
	return tb
}

// taskTitles returns the titles of every Task c finds with q, reading
// pages of n (each page before the last must be full).
func (c *client) taskTitles(q string, n int) []string { return c.pagedTitles(taskTitles, q, n) }

// TestAccessRulesTaskBoard: bob creates tasks on alice's board (the create
// rule holds through the board's team) and not on carol's; alice and the
// team read them through get, find, REST, an aggregation and a
// subscription; carol sees nothing of them through any door, and her
// answers to filters and sorts that would probe them are the same whether
// they exist or not.
func TestAccessRulesTaskBoard(t *testing.T) {
	t.Parallel()
	tb := newTaskBoard(t)
	aliceEvents := tb.alice.sse(taskEvents, nil, nil)
	carolEvents := tb.carol.sse(taskEvents, nil, nil)

	// carol's answers before bob's tasks exist, to compare with after.
	probes := []string{
		"*",
		"title = 'bob one'",
		"title ^ 'bob'",
		"board.title = 'alpha'",
		"board.team.colleagues.core.id = '" + tb.bobID + "'",
		"core.createdBy = '" + tb.bobID + "'",
		"NOT title = 'bob one'",
		"* SORT title DESC",
		"* SORT core.created",
	}
	carolSees := func() []string {
		var out []string
		for _, q := range probes {
			_, body := tb.carol.do(taskTitles, map[string]any{"q": q, "n": 5})
			out = append(out, q+" → "+dump(body))
			_, body = tb.carol.do(taskCount, map[string]any{"w": strings.SplitN(q, " SORT", 2)[0]})
			out = append(out, q+" (aggregate) → "+dump(body))
			status, raw := tb.carol.restRaw(http.MethodGet, "/Task?arcql="+url.QueryEscape(q), nil)
			out = append(out, q+" (REST) → "+http.StatusText(status)+" "+raw)
		}
		return out
	}
	before := carolSees()

	// bob creates on alice's board; the team's colleagues may.
	bobOne := tb.bob.upsertOne("Task", map[string]any{"title": "bob one", "board": ref(tb.alpha), "assignee": ref(tb.bobID)})
	bobTwo := tb.bob.upsertOne("Task", map[string]any{"title": "bob two", "board": ref(tb.alpha)})
	// ...not on carol's public board, which he may read but whose team he
	// is not in: the create rule refuses, and nothing is written.
	_, msg, code := tb.bob.fail(grantDoc, map[string]any{"v": map[string]any{"Task": map[string]any{"title": "bob on gamma", "board": ref(tb.gamma)}}})
	if code != "FORBIDDEN" || !strings.Contains(msg, "the create rule of Task does not allow this record") {
		t.Errorf("bob's task on carol's board: %s %s, want FORBIDDEN by the create rule", code, msg)
	}
	// ...nor on her private board, which he cannot see (he may name it,
	// as any existing record, but the rule does not hold through it).
	if _, msg, code := tb.bob.fail(grantDoc, map[string]any{"v": map[string]any{"Task": map[string]any{"title": "bob on delta", "board": ref(tb.delta)}}}); code != "FORBIDDEN" || !strings.Contains(msg, "the create rule of Task does not allow this record") {
		t.Errorf("bob's task on carol's private board: %s %s, want FORBIDDEN by the create rule", code, msg)
	}
	// carol's own task on her own board: the rule holds for the creator.
	carolOne := tb.carol.upsertOne("Task", map[string]any{"title": "carol one", "board": ref(tb.gamma)})

	// The subscriptions, per event: alice sees bob's two tasks and not
	// carol's; carol sees only her own, after bob's two went by unseen.
	for _, want := range []string{bobOne, bobTwo} {
		if c, _ := aliceEvents.change(); c.Op != "CREATED" || c.ID != want {
			t.Fatalf("alice's event %+v, want CREATED %s", c, want)
		}
	}
	if c, _ := carolEvents.change(); c.ID != carolOne || path(c.Node, "title") != "carol one" {
		t.Fatalf("carol's first event %+v, want her own task %s (bob's are not hers to see)", c, carolOne)
	}

	want := []string{"bob one", "bob two"}
	for name, c := range map[string]*client{"alice": tb.alice, "bob": tb.bob, "dan": tb.dan} {
		if got := c.taskTitles("*", 1); !cmp.Equal(got, want) {
			t.Errorf("%s finds %v, want %v", name, got, want)
		}
		if got := c.data(getTask, map[string]any{"id": bobOne}); path(got, "get", "title") != "bob one" || path(got, "get", "assignee", "username") != "bob" {
			t.Errorf("%s gets %s, want bob one assigned to bob", name, dump(got))
		}
		if got := path(c.data(taskCount, nil), "aggregate", "task", "core", "count"); got != 2.0 {
			t.Errorf("%s counts %v tasks, want 2", name, got)
		}
		if got := c.rest(http.MethodGet, "/rest/v1/Task/"+bobOne, nil); !strings.Contains(dump(got), "bob one") {
			t.Errorf("%s's REST GET: %s", name, dump(got))
		}
		// A client filter's hop reaches the board through its own read rule.
		if got := c.taskTitles("board.title = 'alpha'", 10); !cmp.Equal(got, want) {
			t.Errorf("%s finds by board.title %v, want %v", name, got, want)
		}
	}
	if got := tb.admin.taskTitles("*", 2); !cmp.Equal(got, []string{"bob one", "bob two", "carol one"}) {
		t.Errorf("the instance token finds %v", got)
	}

	// carol: nothing of bob's tasks, through any door, and every probe
	// answers as before they existed (her own task aside, which is the
	// only one she sees).
	if got := tb.carol.taskTitles("*", 1); !cmp.Equal(got, []string{"carol one"}) {
		t.Errorf("carol finds %v", got)
	}
	missingStatus, missing := tb.carol.restRaw(http.MethodGet, "/Task/nosuchtask", nil)
	status, bobs := tb.carol.restRaw(http.MethodGet, "/Task/"+bobOne, nil)
	if status != http.StatusNotFound || status != missingStatus || strings.ReplaceAll(bobs, bobOne, "<id>") != strings.ReplaceAll(missing, "nosuchtask", "<id>") {
		t.Errorf("carol's REST GET of bob's task: %d %s; of a missing one: %d %s", status, bobs, missingStatus, missing)
	}
	_, body := tb.carol.do(getTask, map[string]any{"id": bobOne})
	_, none := tb.carol.do(getTask, map[string]any{"id": "nosuchtask"})
	if strings.ReplaceAll(dump(body), bobOne, "<id>") != strings.ReplaceAll(dump(none), "nosuchtask", "<id>") {
		t.Errorf("carol's get of bob's task %s, of a missing id %s", dump(body), dump(none))
	}
	tb.carol.data(`mutation { trash(type: Task, arcql: "*") }`, nil)
	if diff := cmp.Diff(before, carolSees()); diff != "" {
		t.Errorf("carol's probes answer differently once bob's tasks exist (-before +after):\n%s", diff)
	}
	// carol may name bob's task in a reference (it exists), but reads
	// nothing through it.
	comment := tb.carol.upsertOne("Comment", map[string]any{"text": "x", "task": ref(bobOne)})
	if got := tb.carol.data(`query($id: String!) { get(type: Comment, id: $id) { ... on Comment { text task { title } } } }`, map[string]any{"id": comment}); path(got, "get", "text") != "x" || path(got, "get", "task") != nil {
		t.Errorf("carol's comment on bob's task reads %s, want the task null", dump(got))
	}
	// carol's bulk delete by filter touches none of them.
	tb.carol.data(`mutation { delete(type: Task, arcql: "*") }`, nil)
	if got := tb.alice.taskTitles("*", 10); !cmp.Equal(got, want) {
		t.Errorf("after carol's delete alice finds %v, want %v", got, want)
	}

	// update: alice, the board's creator, changes bob's task on her board;
	// moving it to a board she does not own leaves a record her update rule
	// does not allow, and is refused.
	tb.alice.upsertOne("Task", map[string]any{"core": map[string]any{"id": bobOne}, "title": "bob one, edited"})
	_, msg, code = tb.alice.fail(grantDoc, map[string]any{"v": map[string]any{"Task": map[string]any{"core": map[string]any{"id": bobTwo}, "board": ref(tb.gamma)}}})
	if code != "FORBIDDEN" || !strings.Contains(msg, "the update rule of Task does not allow the record as changed") {
		t.Errorf("alice moving bob's task away: %s %s, want FORBIDDEN by the update rule", code, msg)
	}
	// dan, a colleague, may read but not change it.
	if _, msg, code := tb.dan.fail(grantDoc, map[string]any{"v": map[string]any{"Task": map[string]any{"core": map[string]any{"id": bobOne}, "title": "dan's"}}}); code != "FORBIDDEN" {
		t.Errorf("dan changing bob's task: %s %s, want FORBIDDEN", code, msg)
	}
	// delete: alice deletes the tasks of her board by filter.
	if n := path(tb.alice.data(`mutation { delete(type: Task, arcql: "*") }`, nil), "delete"); n != 2.0 {
		t.Errorf("alice deleted %v tasks, want 2", n)
	}
	if got := tb.bob.taskTitles("*", 10); len(got) != 0 {
		t.Errorf("bob still finds %v", got)
	}
}

// TestAccessRulesWithRealClients runs e2e-clients/taskboard.mjs against the
// task board: through graphql-ws's and graphql-sse's own clients alice and
// dan receive bob's tasks on alice's board and an update of one, and not
// carol's task; carol receives only her own.
func TestAccessRulesWithRealClients(t *testing.T) {
	t.Parallel()
	// Skips without node or the packages (npm ci in e2e-clients), and
	// fails instead under nodetest.EnvRequire, as .ci/run sets it.
	node, script := nodetest.Script(t, "access rules clients test", filepath.Join("e2e-clients", "taskboard.mjs"),
		"graphql-ws", "graphql-sse", "ws")
	tb := newTaskBoard(t)

	// A bound on the whole run, not a timing assertion: the script waits
	// on events, each at most hangGuard.
	out := nodetest.RunOK(t, node, script,
		"CORE_URL="+tb.admin.env.URL,
		"CORE_DOMAIN="+tb.admin.domain,
		"CORE_ALICE_TOKEN="+tb.alice.token,
		"CORE_BOB_TOKEN="+tb.bob.token,
		"CORE_CAROL_TOKEN="+tb.carol.token,
		"CORE_DAN_TOKEN="+tb.dan.token,
		"CORE_ALPHA="+tb.alpha,
		"CORE_GAMMA="+tb.gamma,
		fmt.Sprintf("HANG_GUARD_MS=%d", hangGuard.Milliseconds()),
	)
	t.Logf("node %s:\n%s", filepath.Base(script), out)
}

// TestAccessRulesFollowChanges: a rule's hops are resolved once and kept
// across requests (gql's ruleCache), and a change to a record they read
// counts at the next request through either of two servers on one store
// (two processes on MongoDB), whichever server wrote it: taking bob out of
// alice's team, trashing her board, putting him back, and another
// caller's answers never come from bob's.
func TestAccessRulesFollowChanges(t *testing.T) {
	t.Parallel()
	a, b := twoServers(t)
	tb := newTaskBoardOn(t, a)
	task := tb.alice.upsertOne("Task", map[string]any{"title": "alice one", "board": ref(tb.alpha)})
	poll.Until(t, "the second server to serve the instance", func() bool { _, ok := b.Directory.Lookup("board.test"); return ok })
	on := func(c *client, env *servertest.Env) *client { cp := *c; cp.env = env; return &cp }
	servers := map[string]*servertest.Env{"a": a, "b": b}
	sees := func(c *client, want bool, when string) {
		t.Helper()
		for name, env := range servers {
			got := on(c, env).taskTitles("*", 10)
			if has := len(got) == 1 && got[0] == "alice one"; has != want {
				t.Errorf("%s: server %s finds %v for the caller, want the task: %v", when, name, got, want)
			}
			got2 := on(c, env).data(getTask, map[string]any{"id": task})
			if has := path(got2, "get", "title") == "alice one"; has != want {
				t.Errorf("%s: server %s gets %s for the caller, want the task: %v", when, name, dump(got2), want)
			}
		}
	}
	unlink := `mutation($t: String!, $a: String!) { unlink(from: Team, via: "colleagues", to: Account, whereFromID: $t, andToID: $a) }`
	link := `mutation($t: String!, $a: String!) { link(from: Team, via: "colleagues", to: Account, whereFromID: $t, andToID: $a) }`
	bobInTeam := map[string]any{"t": tb.team, "a": tb.bobID}

	sees(tb.bob, true, "bob in the team")
	sees(tb.carol, false, "carol, never in it")
	on(tb.alice, b).data(unlink, bobInTeam)
	sees(tb.bob, false, "bob taken out of the team through server b")
	sees(tb.dan, true, "dan, still in it")
	on(tb.alice, a).data(link, bobInTeam)
	sees(tb.bob, true, "bob put back through server a")
	on(tb.alice, b).data(`mutation($id: String!) { trash(type: Board, arcql: $id) }`, map[string]any{"id": "core.id = '" + tb.alpha + "'"})
	sees(tb.bob, false, "alice's board trashed")
	on(tb.alice, a).data(`mutation($id: String!) { untrash(type: Board, arcql: $id) }`, map[string]any{"id": "core.id = '" + tb.alpha + "'"})
	sees(tb.bob, true, "alice's board back")
	sees(tb.carol, false, "carol, after all that")
}

// TestAccessRulesRefusedAtPublish: a release whose rule names an unknown
// field, a hidden field, too many references or bad syntax is refused,
// the message naming the type, the rule and the position in it.
func TestAccessRulesRefusedAtPublish(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	for _, tt := range []struct{ rule, want string }{
		{`read: "board.titel = $caller"`, "type Task: @access rule read: 1:1: unknown field Board.titel"},
		{`update: "assignee.password = 'x'"`, "type Task: @access rule update: 1:1: field Account.password cannot be filtered"},
		{`delete: "board.team.colleagues.core.id = $caller OR board.board.board.board.board.title = 'x'"`, "type Task: @access rule delete: 1:44: a path may cross at most 4 references"},
		{`create: "board.title = "`, "type Task: @access rule create: 1:15: expected a value after '=', found end of input"},
	} {
		sdl := strings.Replace(boardSDL, "type Task @access(", "type Task @access("+tt.rule+"\n", 1)
		sdl = strings.Replace(sdl, "  team: Team\n}", "  team: Team\n  board: Board\n}", 1)
		for _, op := range []string{"read", "create", "update", "delete"} {
			if strings.HasPrefix(tt.rule, op+":") {
				sdl = removeRule(sdl, op)
			}
		}
		status, body := env.Admin(http.MethodPut, "/apps/board/releases/bad", map[string]any{"schema": sdl})
		if status != http.StatusBadRequest || !strings.Contains(dump(body), tt.want) {
			t.Errorf("%s: %d %s\nwant 400 with %q", tt.rule, status, dump(body), tt.want)
		}
	}
}

// removeRule drops the Task's own rule op from boardSDL's text.
func removeRule(sdl, op string) string {
	lines := strings.Split(sdl, "\n")
	out := lines[:0]
	for _, l := range lines {
		if strings.HasPrefix(l, "  "+op+": ") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
