package gql

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// ruleCache keeps the @access rules of each instance with their hops
// resolved, per rule and caller, across requests: a rule such as
// `board.team.colleagues.core.id = $caller` costs two sub-queries to
// resolve (the caller's teams, then their boards), which every find,
// get and event of the type would otherwise run again.
//
// A resolved rule holds while no record of a type its hops read (Team
// and Board there) has changed. Every request that needs a rule first
// reads the instance's change feed from where the cache last looked
// (check): a change of such a type drops the rules that read it, so a
// request sees every change the feed held when it began, written by this
// process or by another on the same MongoDB. What the feed cannot show
// is covered by doubt: a feed that was trimmed, or more changes than
// maxRecheck to look through, drops the instance's rules,
// and no rule serves longer than maxReuse (on MongoDB a process dying
// between writing a record and appending its change leaves a change the
// feed never holds). A rule whose hops' results depend on the request's
// time ($now) is resolved per request.
//
// Bounded: at most maxRuleEntries rules an instance and maxRuleIDs
// resolved ids in all; past either the entries are dropped and resolved
// again as requests need them.
type ruleCache struct {
	st  store.Store
	ids atomic.Int64 // resolved ids held by all the instances' entries
	mu  sync.Mutex
	m   map[string]*instRules
}

const (
	maxRuleEntries = 10_000
	maxRuleIDs     = 1 << 18
)

// instRules are one instance's resolved rules.
type instRules struct {
	mu sync.Mutex
	// seq is the feed's newest change the entries were checked against.
	seq     uint64
	entries map[ruleKey]*resolvedRule
}

// ruleKey names a rule resolved for one caller ("" anonymous): the
// compiled rule of a release, so that a new release's rules are new keys.
type ruleKey struct {
	rule   *schema.Rule
	caller string
}

type resolvedRule struct {
	f   arcql.Expr
	ids int64 // how many ids its resolved hops hold
	at  time.Time
}

func newRuleCache(st store.Store) *ruleCache {
	return &ruleCache{st: st, m: map[string]*instRules{}}
}

// instance returns the instance's entries, made when missing.
func (rc *ruleCache) instance(inst string) *instRules {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	ir := rc.m[inst]
	if ir == nil {
		ir = &instRules{entries: map[ruleKey]*resolvedRule{}}
		rc.m[inst] = ir
	}
	return ir
}

// check brings the instance's entries up to its change feed as it is
// now, dropping those whose types changed, and returns the feed's newest
// change: a rule resolved after check holds as of it (put).
func (rc *ruleCache) check(ctx context.Context, inst string) (uint64, error) {
	last, err := rc.st.LastChange(ctx, inst)
	if err != nil {
		return 0, err
	}
	ir := rc.instance(inst)
	ir.mu.Lock()
	defer ir.mu.Unlock()
	switch {
	case last <= ir.seq:
		// Nothing new; or another request looked further since this one
		// read the feed: the entries hold as of ir.seq, which is more than
		// this request needs. ir.seq never goes back (an instance's feed
		// never restarts: its id is new): were it set back, a rule
		// resolved before changes already looked through could be kept
		// again, and served to a request that began after them.
		return ir.seq, nil
	case last-ir.seq > maxRecheck || len(ir.entries) == 0:
		rc.dropAll(ir)
	default:
		changed := map[string]bool{}
		for after := ir.seq; after < last; {
			page, err := rc.st.Changes(ctx, inst, after, changePage)
			if err != nil || len(page) == 0 {
				rc.dropAll(ir) // the feed was trimmed (or failed): doubt is a change
				changed = nil
				break
			}
			for _, ch := range page {
				changed[ch.Type] = true
			}
			after = page[len(page)-1].Seq
		}
		for k, r := range ir.entries {
			for _, t := range k.rule.Reads {
				if changed[t] {
					rc.drop(ir, k, r)
					break
				}
			}
		}
	}
	ir.seq = last
	return last, nil
}

// The feed is read changePage changes at a time, at most maxRecheck of
// them; an instance that changed more since the last check has its rules
// resolved again. A resolved rule serves at most maxReuse.
const (
	changePage = 256
	maxRecheck = 4 * changePage
	maxReuse   = time.Minute
)

// get returns the rule k resolved, when it holds.
func (rc *ruleCache) get(inst string, k ruleKey, now time.Time) (arcql.Expr, bool) {
	ir := rc.instance(inst)
	ir.mu.Lock()
	defer ir.mu.Unlock()
	r, ok := ir.entries[k]
	if !ok {
		return nil, false
	}
	if now.Sub(r.at) >= maxReuse || r.at.After(now) {
		rc.drop(ir, k, r)
		return nil, false
	}
	return r.f, true
}

// put keeps f, the rule k resolved after a check that answered seq. A
// check since then that looked further may have dropped what f read, so f
// is kept only while the entries are checked up to seq exactly.
func (rc *ruleCache) put(inst string, k ruleKey, f arcql.Expr, seq uint64, now time.Time) {
	n := int64(idsIn(f))
	if n > maxRuleIDs/16 {
		return // a rule of that many ids is resolved per request
	}
	if rc.ids.Add(n) > maxRuleIDs {
		rc.ids.Add(-n)
		rc.clear()
		return
	}
	ir := rc.instance(inst)
	ir.mu.Lock()
	defer ir.mu.Unlock()
	if ir.seq != seq {
		rc.ids.Add(-n)
		return
	}
	if len(ir.entries) >= maxRuleEntries {
		rc.dropAll(ir)
	}
	if old, ok := ir.entries[k]; ok {
		rc.ids.Add(-old.ids)
	}
	ir.entries[k] = &resolvedRule{f: f, ids: n, at: now}
}

// forget drops an instance's entries (it was deleted).
func (rc *ruleCache) forget(inst string) {
	rc.mu.Lock()
	ir := rc.m[inst]
	delete(rc.m, inst)
	rc.mu.Unlock()
	if ir != nil {
		ir.mu.Lock()
		rc.dropAll(ir)
		ir.mu.Unlock()
	}
}

// clear drops every instance's entries.
func (rc *ruleCache) clear() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, ir := range rc.m {
		ir.mu.Lock()
		rc.dropAll(ir)
		ir.mu.Unlock()
	}
}

// drop and dropAll are called with ir.mu held.
func (rc *ruleCache) drop(ir *instRules, k ruleKey, r *resolvedRule) {
	rc.ids.Add(-r.ids)
	delete(ir.entries, k)
}

func (rc *ruleCache) dropAll(ir *instRules) {
	for k, r := range ir.entries {
		rc.drop(ir, k, r)
	}
}

// idsIn counts the ids of e's id lists.
func idsIn(e arcql.Expr) int {
	n := 0
	arcql.Walk(e, func(e arcql.Expr) bool {
		if in, ok := e.(*arcql.InIDs); ok {
			n += len(in.IDs)
		}
		return true
	})
	return n
}
