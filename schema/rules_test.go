package schema

import (
	"slices"
	"strings"
	"testing"

	"github.com/corehq/core/store/arcql"
)

const boardSDL = `
type Team { name: String colleagues: [Account] }
type Board { title: String team: Team }
type Task @access(
  read: "board.team.colleagues.core.id = $caller OR board.core.createdBy = $caller"
  create: "board.team.colleagues.core.id = $caller OR board.core.createdBy = $caller"
) { title: String board: Board assignee: Account due: DateTime }
`

func TestAccessRulesCompile(t *testing.T) {
	t.Parallel()
	m, err := Parse(boardSDL, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	task, _ := m.Type("Task")
	if len(task.Rules) != 2 || task.Rules["read"] == nil || task.Rules["create"] == nil {
		t.Fatalf("Task rules = %v", task.Rules)
	}
	if _, ok := task.Rules["read"].Filter.(*arcql.Or); !ok {
		t.Errorf("read rule bound as %s", arcql.Format(task.Rules["read"].Filter))
	}
	if board, _ := m.Type("Board"); board.Rules != nil {
		t.Errorf("Board has rules %v", board.Rules)
	}
	// What a rule reads decides how long its resolution holds (gql's
	// rule cache): the types its hops pass through, and $now.
	read := task.Rules["read"]
	if !slices.Contains(read.Reads, "Board") || !slices.Contains(read.Reads, "Team") || read.Now {
		t.Errorf("the read rule reads %v, $now %v; want Board and Team, no $now", read.Reads, read.Now)
	}
	m, err = Parse(`type Offer @access(read: "ends > $now") { ends: DateTime }`, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	offer, _ := m.Type("Offer")
	if r := offer.Rules["read"]; !r.Now || len(r.Reads) != 0 {
		t.Errorf("a rule of $now: reads %v, $now %v; want none and true", r.Reads, r.Now)
	}
}

func TestAccessRulesRefused(t *testing.T) {
	t.Parallel()
	base := "type Team { name: String colleagues: [Account] }\ntype Board { title: String team: Team board: Board }\n"
	tests := []struct{ rule, want string }{
		{`read: "titel = $caller"`, `3:26: type Task: @access rule read: 1:1: unknown field Task.titel`},
		{`update: "board.titel = 'x'"`, `3:28: type Task: @access rule update: 1:1: unknown field Board.titel`},
		{`delete: "assignee.password = 'x'"`, `3:28: type Task: @access rule delete: 1:1: field Account.password cannot be filtered`},
		{`read: "board.board.board.board.board.title = 'x'"`, `3:26: type Task: @access rule read: 1:1: a path may cross at most 4 references; Board.board crosses more`},
		{`create: "title = = 'x'"`, `3:36: type Task: @access rule create: 1:9: expected a value after '=', found '='`},
		{`read: ""`, `3:26: type Task: @access rule read: a rule must not be empty (write * to allow every record)`},
		{`read: "core.createdBy = $me"`, `3:43: type Task: @access rule read: 1:18: unknown parameter $me: a rule knows $caller and $now`},
	}
	for _, tt := range tests {
		sdl := base + "type Task @access(" + tt.rule + ") { title: String board: Board assignee: Account }\n"
		_, err := Parse(sdl, DefaultLimits())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v\nwant %s", tt.rule, err, tt.want)
		}
	}
	if _, err := Parse("type Note { text: String @access(read: \"*\") }", DefaultLimits()); err == nil || !strings.Contains(err.Error(), "@access is allowed only on record types") {
		t.Errorf("@access on a field: %v", err)
	}
}
