package access

import (
	"strings"
	"time"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/store"
)

// Type is the built-in record type of grants.
const Type = "AccessRight"

// Member ids that name no account.
const (
	Everyone  = "*"         // every account of the instance
	Anonymous = "anonymous" // callers without a token
)

// Permission types.
const (
	RBP = "RBP" // resource-based: on records the grant's owner owns
	SBP = "SBP" // scope-based: on every record of a type
)

// OperationTypes and Operations are the values an AccessRight may hold
// (besides "*").
var (
	OperationTypes = []string{"Query", "Mutation"}
	Operations     = []string{"get", "find", "upsert", "delete", "trash", "untrash", "link", "unlink"}
)

// Grant is one AccessRight record, decoded.
type Grant struct {
	ID            string
	Owner         string // resourceOwnerId: whose records an RBP covers
	Resource      string // a record id or "*"
	ResourceType  string // a type name or "*"
	OperationType string
	Operation     string
	Scope         bool // SBP
	Disabled      bool // approved: false
	Start, End    time.Time
	Members       []string
	// Fields limits the grant to these fields; nil: every field.
	Fields []string
	// Source names the record whose list field of accounts holds more
	// members, read when a request asks (membersSource*); zero: none.
	Source Source
}

// Source is a list field of accounts of one record: a team's members.
type Source struct{ Type, Field, ID string }

// Members returns the account ids a source record's field holds, read
// by the caller of Rights at request time; an error or a missing record
// counts as no members.
type Members func(Source) []string

// FromRecord decodes an AccessRight record.
func FromRecord(r *store.Record) Grant {
	str := func(name string) string { s, _ := r.Fields[name].(string); return s }
	when := func(name string) time.Time {
		t, _ := time.Parse(time.RFC3339Nano, str(name))
		return t
	}
	g := Grant{
		ID: r.ID, Owner: str("resourceOwnerId"), Resource: str("resource"), ResourceType: str("resourceType"),
		OperationType: str("operationType"), Operation: str("operation"), Scope: str("permissionType") == SBP,
		Start: when("startDate"), End: when("endDate"),
	}
	g.Fields = SplitFields(str("fields"))
	g.Source = Source{Type: str("membersSourceType"), Field: str("membersSourceField"), ID: str("membersSourceId")}
	if b, ok := r.Fields["approved"].(bool); ok && !b {
		g.Disabled = true
	}
	if list, ok := r.Fields["members"].([]any); ok {
		for _, m := range list {
			if s, ok := m.(string); ok {
				g.Members = append(g.Members, s)
			}
		}
	}
	return g
}

// Active reports whether the grant counts at now.
func (g *Grant) Active(now time.Time) bool {
	return !g.Disabled && (g.Start.IsZero() || !now.Before(g.Start)) && (g.End.IsZero() || now.Before(g.End))
}

// allows reports whether the grant lets its members run operation: a
// Query grant of get, find or * lets them read (get and find alike); a
// Mutation grant lets them run its operation (or any, for *).
func (g *Grant) allows(operation string) bool {
	if operation == "get" || operation == "find" {
		return (g.OperationType == "Query" || g.OperationType == "*") &&
			(g.Operation == "get" || g.Operation == "find" || g.Operation == "*")
	}
	return (g.OperationType == "Mutation" || g.OperationType == "*") && (g.Operation == operation || g.Operation == "*")
}

// covers reports whether the grant is about records of typ. "*" covers
// every type but AccessRight itself: grants are shown to others only by
// a grant that names their type.
func (g *Grant) covers(typ string) bool {
	return g.ResourceType == typ || g.ResourceType == "*" && typ != Type
}

// names reports whether p is among the grant's members, those of its
// source record included.
func (g *Grant) names(p auth.Principal, source Members) bool {
	if g.Source.ID != "" && p.Kind == auth.User && source != nil {
		for _, m := range source(g.Source) {
			if m == p.AccountID {
				return true
			}
		}
	}
	for _, m := range g.Members {
		switch {
		case p.Kind == auth.User && (m == p.AccountID || m == Everyone):
			return true
		case p.Kind == auth.Anonymous && m == Anonymous:
			return true
		}
	}
	return false
}

// ValidOperation reports whether s is "*" or one of vals.
func ValidOperation(s string, vals []string) bool {
	if s == "*" {
		return true
	}
	for _, v := range vals {
		if v == s {
			return true
		}
	}
	return false
}

// SplitFields splits a grant's comma-separated field list; nil when it
// names none (every field).
func SplitFields(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
