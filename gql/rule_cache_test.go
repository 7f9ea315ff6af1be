package gql

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
	"github.com/corehq/core/store/bolt/bolttest"
)

// ruleCacheStore is an embedded store with an instance of Team and Task
// records, and a rule whose hop reads Teams.
func ruleCacheStore(t *testing.T) (store.Store, *schema.Rule, func(typ, id string)) {
	t.Helper()
	st := bolttest.Open(t)
	ctx := context.Background()
	if err := st.Declare(ctx, "i1", []store.TypeSpec{{Name: "Team"}, {Name: "Task", Refs: []string{"team"}}}); err != nil {
		t.Fatal(err)
	}
	rule := schema.NewRule("team.name = 'x'", &arcql.Hop{Field: "team", Target: "Team", Sub: &arcql.All{}})
	write := func(typ, id string) {
		t.Helper()
		if _, err := st.Write(ctx, "i1", []store.Op{{Kind: store.OpUpsert, Type: typ, ID: id, Set: map[string]any{"name": "x"}}}, store.Quota{}); err != nil {
			t.Error(err)
		}
	}
	return st, rule, write
}

// TestRuleCacheFollowsTheFeed: a resolved rule serves until the feed
// shows a change of a type its hops read (a Task changing leaves it, a
// Team drops it), one resolved before a check that looked further is not
// kept, and none serves past maxReuse.
func TestRuleCacheFollowsTheFeed(t *testing.T) {
	st, rule, write := ruleCacheStore(t)
	ctx := context.Background()
	rc := newRuleCache(st)
	k := ruleKey{rule: rule, caller: "bob"}
	f := arcql.NewInIDs("team", []string{"t1"})
	now := time.Now()
	check := func() uint64 {
		t.Helper()
		seq, err := rc.check(ctx, "i1")
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	holds := func(want bool, when string) {
		t.Helper()
		if _, hit := rc.get("i1", k, now); hit != want {
			t.Errorf("%s: the rule is kept: %v, want %v", when, hit, want)
		}
	}

	write("Team", "t1")
	rc.put("i1", k, f, check(), now)
	holds(true, "resolved")
	write("Task", "a1")
	check()
	holds(true, "after a Task changed")
	write("Team", "t2")
	check()
	holds(false, "after a Team changed")

	seq := check()
	write("Team", "t3")
	check()
	rc.put("i1", k, f, seq, now)
	holds(false, "resolved before a check that saw a Team change")

	rc.put("i1", k, f, check(), now.Add(-maxReuse))
	holds(false, "resolved maxReuse ago")

	rc.put("i1", k, f, check(), now)
	holds(true, "resolved again")
	if n := rc.ids.Load(); n != 1 {
		t.Errorf("%d ids held, want 1", n)
	}
	rc.forget("i1")
	if n := rc.ids.Load(); n != 0 {
		t.Errorf("%d ids held once the instance is forgotten, want 0", n)
	}
}

// TestRuleCacheConcurrent: requests resolving and reading a rule while
// Teams are written never get an answer that misses a Team written
// before their check began.
func TestRuleCacheConcurrent(t *testing.T) {
	st, rule, write := ruleCacheStore(t)
	ctx := context.Background()
	rc := newRuleCache(st)
	k := ruleKey{rule: rule, caller: "bob"}
	var written atomic.Int64 // Teams acknowledged
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					if n > 0 {
						return
					}
				default:
				}
				before := written.Load()
				seq, err := rc.check(ctx, "i1")
				if err != nil {
					t.Error(err)
					return
				}
				now := time.Now()
				f, hit := rc.get("i1", k, now)
				if !hit {
					recs, err := st.Find(ctx, "i1", &store.Query{Type: "Team", IDsOnly: true})
					if err != nil {
						t.Error(err)
						return
					}
					ids := make([]string, len(recs))
					for i, r := range recs {
						ids[i] = r.ID
					}
					f = arcql.NewInIDs("team", ids)
					rc.put("i1", k, f, seq, now)
				}
				if got := int64(len(f.(*arcql.InIDs).IDs)); got < before {
					t.Errorf("the rule names %d Teams, %d were written before the request", got, before)
					return
				}
			}
		}()
	}
	for i := range 200 {
		write("Team", fmt.Sprintf("t%03d", i))
		written.Add(1)
		if i%10 == 0 {
			write("Task", fmt.Sprintf("a%03d", i))
		}
	}
	close(stop)
	wg.Wait()
}
