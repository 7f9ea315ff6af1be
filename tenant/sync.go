package tenant

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/corehq/core/internal/periodic"
	"github.com/corehq/core/store"
)

// Several cored processes may share one store (MongoDB). Each change a
// directory persists is followed by a version mark: a document of kind
// docVersion under the process's own key, holding a fresh id. Every
// process polls the marks (Watch) and, when any differs from what it last
// saw, reloads the releases and instances from the store, keeping what did
// not change: an unchanged release is not parsed again, an instance whose
// release changed swaps it like UpdateInstance does (requests in flight
// finish on the one they loaded). Each process writes only its own mark,
// so no change can hide another; polling costs one small ListDocs.
const (
	docVersion = "registry-version" // key: the process's id
	// staleMark is the age past which another process's mark is removed
	// at Load (that process is long gone, or will write a new one).
	staleMark = 7 * 24 * time.Hour
)

// versionMark is the document of a mark.
type versionMark struct {
	Version string    `json:"version"`
	At      time.Time `json:"at"`
}

// marks reads every process's mark, keyed by process, as raw values.
func (r *Directory) marks(ctx context.Context) (map[string]string, error) {
	docs, err := r.st.ListDocs(ctx, docVersion)
	if err != nil {
		return nil, fmt.Errorf("tenant: reading the directory version: %w", err)
	}
	out := make(map[string]string, len(docs))
	for k, v := range docs {
		out[k] = string(v)
	}
	return out, nil
}

// bump writes this process's mark after a change it persisted; r.mu is
// held. A failure is kept and retried by the next Refresh: the change is
// stored, only the other processes' notice is late.
func (r *Directory) bump(ctx context.Context) {
	raw, err := json.Marshal(versionMark{Version: store.NewID(), At: time.Now().UTC()})
	if err == nil {
		err = r.st.PutDoc(context.WithoutCancel(ctx), docVersion, r.process, raw)
	}
	if err != nil {
		r.bumpFailed = true
		return
	}
	r.bumpFailed = false
	if r.seen != nil {
		r.seen[r.process] = string(raw)
	}
}

// Refresh brings the directory in step with the store when another process
// changed it since the last look, and reports whether it reloaded. A
// release that no longer parses or an instance whose release is missing
// is an error, and the directory keeps serving what it had.
func (r *Directory) Refresh(ctx context.Context) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bumpFailed {
		r.bump(ctx)
	}
	marks, err := r.marks(ctx)
	if err != nil {
		return false, err
	}
	if r.seen != nil && maps.Equal(marks, r.seen) {
		return false, nil
	}
	if err := r.reload(ctx); err != nil {
		return false, err
	}
	r.seen = marks
	return true, nil
}

// Watch calls Refresh every interval until ctx ends. onError, when not
// nil, receives each failure; the loop goes on (the database may be back
// at the next tick).
func (r *Directory) Watch(ctx context.Context, interval time.Duration, onError func(error)) {
	periodic.Run(ctx, interval, func(ctx context.Context) error { _, err := r.Refresh(ctx); return err }, onError)
}

// startMarks records the marks Load saw and removes stale ones of other
// processes; r.mu is held.
func (r *Directory) startMarks(ctx context.Context, marks map[string]string) {
	r.seen = marks
	for k, v := range marks {
		var m versionMark
		if k != r.process && json.Unmarshal([]byte(v), &m) == nil && time.Since(m.At) > staleMark {
			_ = r.st.DeleteDoc(ctx, docVersion, k) // best effort; harmless to keep
		}
	}
}

// reload replaces the state with what the store holds, reusing the
// releases and instances that did not change; r.mu is held.
func (r *Directory) reload(ctx context.Context) (err error) {
	relDocs, err := r.st.ListDocs(ctx, docRelease)
	if err != nil {
		return fmt.Errorf("tenant: loading releases: %w", err)
	}
	instDocs, err := r.st.ListDocs(ctx, docInstance)
	if err != nil {
		return fmt.Errorf("tenant: loading instances: %w", err)
	}
	old := r.state.Load()
	s := newState(len(relDocs), len(instDocs))
	for _, key := range slices.Sorted(maps.Keys(relDocs)) {
		var d releaseDoc
		if err := json.Unmarshal(relDocs[key], &d); err != nil {
			return fmt.Errorf("tenant: release %s: decoding: %w", key, err)
		}
		if rel := old.releases[key]; rel != nil && rel.SDL == d.Schema && rel.Realm == d.Realm {
			s.releases[key] = rel
			continue
		}
		rel, err := r.build(d.App, d.Release, d.Realm, d.Schema)
		if err != nil {
			return fmt.Errorf("tenant: release %s no longer parses: %w", key, err)
		}
		s.releases[key] = rel
	}
	var swaps []func()
	for _, key := range slices.Sorted(maps.Keys(instDocs)) {
		d, _, err := r.decodeInstance(key, instDocs[key])
		if err != nil {
			return err
		}
		rel := s.releases[releaseKey(d.App, d.Release)]
		if rel == nil {
			return fmt.Errorf("tenant: instance %s runs release %s/%s, which is not stored", key, d.App, d.Release)
		}
		var hash [32]byte
		h, err := hex.DecodeString(d.TokenHash)
		if err != nil || len(h) != len(hash) {
			return fmt.Errorf("tenant: instance %s: malformed token hash", key)
		}
		copy(hash[:], h)
		cur := old.instances[d.Domain]
		if cur == nil || cur.ID != d.ID {
			cur = &Instance{ID: d.ID, Domain: d.Domain, App: d.App, AdminAccountID: d.AdminAccountID, Created: d.Created}
		} else if cur.TokenHash != hash || cur.AdminAccountID != d.AdminAccountID || !cur.Settings.equal(d.Settings) {
			cur = cur.clone()
			cur.AdminAccountID = d.AdminAccountID
		}
		if cur.Release() != rel {
			if err := r.st.Declare(ctx, cur.ID, Specs(rel.Model)); err != nil {
				return fmt.Errorf("tenant: instance %s: declaring release %s: %w", key, rel.Name, err)
			}
		}
		if cur != old.instances[d.Domain] {
			cur.Settings, cur.TokenHash = d.Settings.clone(), hash
			cur.SetRelease(rel)
		} else if cur.Release() != rel {
			// The instance value stays; its release swaps once the whole
			// state is ready.
			swaps = append(swaps, func() { cur.SetRelease(rel) })
		}
		s.put(d.Domain, cur)
	}
	for _, swap := range swaps {
		swap()
	}
	r.state.Store(s)
	return nil
}
