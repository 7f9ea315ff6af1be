package hooks

import (
	"errors"
	"fmt"
	"net/url"
	"slices"

	"github.com/corehq/core/store"
)

// Type is the built-in record type of event hooks.
const Type = "EventHook"

// MaxHooks is how many EventHook records an instance may have (trashed
// ones count): a write creating one more is refused (gql), and the
// service delivers the first MaxHooks by id only.
const MaxHooks = 100

// Operations are the values of EventHook.operations: the change ops of
// the feed.
var Operations = []string{
	string(store.ChangeCreated), string(store.ChangeUpdated), string(store.ChangeTrashed),
	string(store.ChangeUntrashed), string(store.ChangeDeleted),
}

// MaxURL is the longest url a hook may have.
const MaxURL = 2048

// Hook is an EventHook record as the service delivers it.
type Hook struct {
	ID    string
	URL   string
	Types []string // empty: every type but EventHook
	Ops   []string // empty: every op
	ArcQL string
	// Enabled is false when a client or the service disabled the hook.
	Enabled bool
	// Key is the opened signing key (the bytes of the base64 after whsec_).
	Key []byte
}

// CheckURL refuses a url that is not an absolute http or https URL of at
// most MaxURL bytes. Whether its host may be reached is decided when it
// is posted to (internal/netguard).
func CheckURL(raw string) error {
	if len(raw) > MaxURL {
		return fmt.Errorf("the url is longer than %d bytes", MaxURL)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return errors.New("the url must be an absolute http or https URL without user information")
	}
	return nil
}

// CheckOperation refuses a name that is not one of Operations.
func CheckOperation(op string) error {
	if !slices.Contains(Operations, op) {
		return fmt.Errorf("%q is not an operation: one of %v", op, Operations)
	}
	return nil
}

// FromRecord reads an EventHook record; open opens its sealed secret.
func FromRecord(r *store.Record, open func(sealed string) ([]byte, error)) (*Hook, error) {
	h := &Hook{ID: r.ID, Types: store.Strings(r.Fields["types"]), Ops: store.Strings(r.Fields["operations"]), Enabled: true}
	h.URL, _ = r.Fields["url"].(string)
	h.ArcQL, _ = r.Fields["arcql"].(string)
	if b, ok := r.Fields["enabled"].(bool); ok {
		h.Enabled = b
	}
	if r.Trashed != nil {
		h.Enabled = false
	}
	sealed, _ := r.Fields["secret"].(string)
	key, err := open(sealed)
	if err != nil {
		return nil, fmt.Errorf("hooks: EventHook %s: opening its secret: %w", r.ID, err)
	}
	h.Key = key
	return h, nil
}

// wants reports whether the hook takes changes of this type and op (its
// filter aside). Changes of EventHook records are never delivered.
func (h *Hook) wants(c *store.Change) bool {
	if c.Type == Type {
		return false
	}
	if len(h.Types) > 0 && !slices.Contains(h.Types, c.Type) {
		return false
	}
	return len(h.Ops) == 0 || slices.Contains(h.Ops, string(c.Op))
}
