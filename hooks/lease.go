package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/corehq/core/store"
)

// Leases. On a store several processes share, one process at a time
// delivers an instance's hooks: the one whose lease document is the
// instance's newest. A lease is a document keyed by instance and epoch;
// the store's CreateDoc stores the first of concurrent creations of a key
// only, so of the processes that try to take epoch n+1 one wins. The
// holder renews its epoch (only it writes that key) every Config.Scan; a
// lease not renewed for Config.Lease is taken over by creating the next
// epoch once it has run out by skewMargin more (clocks of processes
// differ a little). The holder posts nothing once less than
// Config.Timeout + skewMargin of its lease is left, so a post it started
// ends before another process may start.

// docLease is the kind of the lease documents, keyed
// "<instance id>/<epoch, 20 digits>".
const docLease = "hooklease"

// skewMargin is how far apart the clocks of two processes may be.
const skewMargin = 2 * time.Second

// lease is a lease document.
type lease struct {
	Owner   string    `json:"owner"`
	Expires time.Time `json:"expires"`
}

type heldLease struct {
	epoch uint64
	lease
}

func leaseKey(instanceID string, epoch uint64) string {
	return fmt.Sprintf("%s/%020d", instanceID, epoch)
}

// readLeases returns the newest lease of each instance, and the keys of
// older epochs (to remove).
func readLeases(ctx context.Context, st store.Store) (map[string]heldLease, []string, error) {
	docs, err := st.ListDocs(ctx, docLease)
	if err != nil {
		return nil, nil, err
	}
	newest := map[string]heldLease{}
	var stale []string
	for key, raw := range docs {
		i := strings.LastIndexByte(key, '/')
		if i < 0 {
			continue
		}
		epoch, err := strconv.ParseUint(key[i+1:], 10, 64)
		if err != nil {
			continue
		}
		var l lease
		if json.Unmarshal(raw, &l) != nil {
			continue
		}
		inst := key[:i]
		if cur, ok := newest[inst]; ok {
			if cur.epoch > epoch {
				stale = append(stale, key)
				continue
			}
			stale = append(stale, leaseKey(inst, cur.epoch))
		}
		newest[inst] = heldLease{epoch: epoch, lease: l}
	}
	return newest, stale, nil
}

// claim renews or takes the lease of an instance for owner, given its
// newest lease (cur, ok), and returns until when it holds it; zero when
// another process holds it.
func claim(ctx context.Context, st store.Store, instanceID, owner string, cur heldLease, ok bool, now time.Time, d time.Duration) (time.Time, error) {
	mine := lease{Owner: owner, Expires: now.Add(d)}
	raw, _ := json.Marshal(mine)
	switch {
	case ok && cur.Owner == owner:
		if err := st.PutDoc(ctx, docLease, leaseKey(instanceID, cur.epoch), raw); err != nil {
			return time.Time{}, err
		}
		return mine.Expires, nil
	case ok && now.Before(cur.Expires.Add(skewMargin)):
		return time.Time{}, nil
	}
	epoch := uint64(1)
	if ok {
		epoch = cur.epoch + 1
	}
	got, err := st.CreateDoc(ctx, docLease, leaseKey(instanceID, epoch), raw)
	if err != nil {
		return time.Time{}, err
	}
	var won lease
	if json.Unmarshal(got, &won) != nil || won.Owner != owner || !won.Expires.Equal(mine.Expires) {
		return time.Time{}, nil
	}
	return mine.Expires, nil
}

// release ends owner's lease at once (a clean stop), so that another
// process takes the instance over at its next scan.
func release(ctx context.Context, st store.Store, instanceID, owner string) error {
	leases, _, err := readLeases(ctx, st)
	if err != nil {
		return err
	}
	cur, ok := leases[instanceID]
	if !ok || cur.Owner != owner {
		return nil
	}
	raw, _ := json.Marshal(lease{Owner: owner, Expires: time.Now().Add(-2 * skewMargin)})
	return st.PutDoc(ctx, docLease, leaseKey(instanceID, cur.epoch), raw)
}
