package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/corehq/core/store"
)

// The documents of the hooks: which instances have hooks (docHooked,
// keyed by instance id: the service looks at those only), and the state
// of each hook (docState, keyed by instance id and hook id).
const (
	docHooked = "hooked"
	docState  = "hookstate"
)

// State is what the store keeps of a hook's delivery: its cursor, its
// failures and its delivery log. The process delivering the hook writes
// it; the admin API reads it.
type State struct {
	// Cursor is the Seq of the last change the hook is done with:
	// delivered, or not one it takes.
	Cursor uint64 `json:"cursor"`
	// Attempt counts the failed posts of the change after Cursor.
	Attempt int `json:"attempt,omitempty"`
	// NextAttempt is when that change is posted again.
	NextAttempt time.Time `json:"nextAttempt,omitzero"`
	// FailingSince is when the first of those failures was.
	FailingSince time.Time `json:"failingSince,omitzero"`
	// LastError is the last failure (kept after a success, for the record).
	LastError string `json:"lastError,omitempty"`
	// Disabled is set when the service disabled the hook for failing
	// longer than Config.RetryFor; a client's enabled: true clears it.
	Disabled bool `json:"disabled,omitempty"`
	// Delivered and Failed count the posts.
	Delivered uint64 `json:"delivered"`
	Failed    uint64 `json:"failed"`
	// Log holds the newest attempts, oldest first (Config.LogSize).
	Log []Attempt `json:"log"`
}

// Attempt is one post of a change, or a gap in the feed, as the delivery
// log shows it.
type Attempt struct {
	At      time.Time `json:"at"`
	EventID string    `json:"eventId,omitempty"`
	Seq     uint64    `json:"seq"`
	Type    string    `json:"type,omitempty"`
	Op      string    `json:"op,omitempty"`
	Record  string    `json:"id,omitempty"`
	// Attempt is 1 for the first post of the change.
	Attempt int `json:"attempt"`
	// Status is the HTTP status of the answer; 0 when none came.
	Status int `json:"status"`
	// Millis is how long the post took.
	Millis int64 `json:"durationMs"`
	// Error says why the attempt failed; empty on success.
	Error string `json:"error,omitempty"`
	// Response is the beginning of the answer's body.
	Response string `json:"response,omitempty"`
}

func stateKey(instanceID, hookID string) string { return instanceID + "/" + hookID }

// Noted records that hooks were created in an instance: the service then
// delivers its hooks, each from the instance's newest change on (so the
// changes written after the hook are delivered, those before are not).
// gql calls it after writing new EventHook records.
func Noted(ctx context.Context, st store.Store, instanceID string, created []string) error {
	if _, err := st.CreateDoc(ctx, docHooked, instanceID, []byte("{}")); err != nil {
		return err
	}
	if len(created) == 0 {
		return nil
	}
	last, err := st.LastChange(ctx, instanceID)
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(State{Cursor: last, Log: []Attempt{}})
	for _, id := range created {
		if _, err := st.CreateDoc(ctx, docState, stateKey(instanceID, id), raw); err != nil {
			return err
		}
	}
	return nil
}

// loadState reads a hook's state; a hook without one starts at the
// instance's newest change.
func loadState(ctx context.Context, st store.Store, instanceID, hookID string) (*State, error) {
	raw, err := st.GetDoc(ctx, docState, stateKey(instanceID, hookID))
	if errors.Is(err, store.ErrNotFound) {
		last, err := st.LastChange(ctx, instanceID)
		if err != nil {
			return nil, err
		}
		fresh, _ := json.Marshal(State{Cursor: last, Log: []Attempt{}})
		if raw, err = st.CreateDoc(ctx, docState, stateKey(instanceID, hookID), fresh); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("hooks: the state of hook %s: %w", hookID, err)
	}
	return &s, nil
}

func saveState(ctx context.Context, st store.Store, instanceID, hookID string, s *State) error {
	raw, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return st.PutDoc(ctx, docState, stateKey(instanceID, hookID), raw)
}

// States returns the states of an instance's hooks by hook id (the admin
// API's delivery log).
func States(ctx context.Context, st store.Store, instanceID string) (map[string]*State, error) {
	docs, err := st.ListDocs(ctx, docState)
	if err != nil {
		return nil, err
	}
	out := map[string]*State{}
	for key, raw := range docs {
		id, ok := strings.CutPrefix(key, instanceID+"/")
		if !ok {
			continue
		}
		var s State
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("hooks: the state of hook %s: %w", id, err)
		}
		out[id] = &s
	}
	return out, nil
}

// Restarted puts every hook's cursor at its instance's newest change,
// for a store whose change feeds began again: a restore (a backup holds
// records, not their changes, so a restored instance's feed starts over
// at 1, under the cursors the hooks had reached in the old one, which
// would pass over that many new changes). A retry of a change gone with
// the old feed ends there; the delivery log, the counts and a hook
// disabled for failing stay as they were. cored restore calls it.
func Restarted(ctx context.Context, st store.Store) error {
	docs, err := st.ListDocs(ctx, docState)
	if err != nil {
		return err
	}
	newest := map[string]uint64{} // by instance
	for key, raw := range docs {
		inst, hookID, _ := strings.Cut(key, "/")
		var s State
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("hooks: the state of hook %s: %w", hookID, err)
		}
		last, ok := newest[inst]
		if !ok {
			if last, err = st.LastChange(ctx, inst); err != nil {
				return err
			}
			newest[inst] = last
		}
		s.Cursor, s.Attempt, s.NextAttempt, s.FailingSince = last, 0, time.Time{}, time.Time{}
		if err := saveState(ctx, st, inst, hookID, &s); err != nil {
			return err
		}
	}
	return nil
}

// Forget removes what the store keeps of an instance's hooks: their
// states, its leases and its mark (tenant.Directory.OnDelete calls it
// when the instance is deleted).
func Forget(ctx context.Context, st store.Store, instanceID string) error {
	if err := st.DeleteDoc(ctx, docHooked, instanceID); err != nil {
		return err
	}
	for _, kind := range []string{docState, docLease} {
		docs, err := st.ListDocs(ctx, kind)
		if err != nil {
			return err
		}
		for key := range docs {
			if strings.HasPrefix(key, instanceID+"/") {
				if err := st.DeleteDoc(ctx, kind, key); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// log appends an attempt, keeping the newest n.
func (s *State) log(a Attempt, n int) {
	s.Log = append(s.Log, a)
	if over := len(s.Log) - n; over > 0 {
		s.Log = append(s.Log[:0:0], s.Log[over:]...)
	}
}
