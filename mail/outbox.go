package mail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// The kinds of the outbox's service documents.
const (
	docMessage = "mail-outbox" // key: instance id/message id
	docClaim   = "mail-claim"  // key: instance id/message id/attempt/takeover
)

// The statuses of a message.
const (
	StatusQueued = "queued" // waiting for its next attempt
	StatusSent   = "sent"   // the server accepted it
	StatusFailed = "failed" // refused for good, or out of attempts
)

// Message is a message of the outbox as the admin API shows it; its
// recipient and contents are kept sealed.
type Message struct {
	ID       string `json:"id"`
	Instance string `json:"-"`
	// Kind is the template it was made from (tenant.MailMessages).
	Kind        string    `json:"kind"`
	Status      string    `json:"status"`
	Attempts    int       `json:"attempts"`
	NextAttempt time.Time `json:"nextAttempt"`
	LastError   string    `json:"lastError,omitempty"`
	Created     time.Time `json:"created"`
	Sent        time.Time `json:"sent,omitzero"`

	// Sealed is To and Content sealed (sealedParts), bound to the
	// message's key.
	Sealed string `json:"-"`
}

// storedMessage is a message as stored.
type storedMessage struct {
	Message
	Instance string `json:"instance"`
	Sealed   string `json:"sealed"`
}

// sealedParts is what a message keeps sealed.
type sealedParts struct {
	To      string  `json:"to"`
	Content Content `json:"content"`
}

// Outbox keeps the messages waiting to be sent.
type Outbox struct {
	st     store.Store
	sealer tenant.Sealer
	now    func() time.Time
	wake   chan struct{} // the worker's, when one runs
}

// NewOutbox returns the outbox kept in st, sealing with sealer (nil:
// contents kept in clear, for tests of a directory without keys).
func NewOutbox(st store.Store, sealer tenant.Sealer) *Outbox {
	return &Outbox{st: st, sealer: sealer, now: time.Now}
}

// SetClock makes the outbox read the time from now (tests).
func (o *Outbox) SetClock(now func() time.Time) { o.now = now }

func messageKey(inst, id string) string { return inst + "/" + id }

func aad(key string) string { return "core mail message\x00" + key }

// Enqueue adds a message for to, due at once, and returns its id.
func (o *Outbox) Enqueue(ctx context.Context, inst, kind, to string, c Content) (string, error) {
	now := o.now().UTC()
	m := Message{ID: store.NewID(), Instance: inst, Kind: kind, Status: StatusQueued, NextAttempt: now, Created: now}
	plain, err := json.Marshal(sealedParts{To: to, Content: c})
	if err != nil {
		return "", err
	}
	key := messageKey(inst, m.ID)
	if o.sealer != nil {
		m.Sealed = o.sealer.Seal(plain, aad(key))
	} else {
		m.Sealed = string(plain)
	}
	if err := o.put(ctx, &m); err != nil {
		return "", err
	}
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return m.ID, nil
}

func (o *Outbox) put(ctx context.Context, m *Message) error {
	raw, err := json.Marshal(storedMessage{*m, m.Instance, m.Sealed})
	if err != nil {
		return err
	}
	if err := o.st.PutDoc(ctx, docMessage, messageKey(m.Instance, m.ID), raw); err != nil {
		return fmt.Errorf("mail: storing message %s: %w", m.ID, err)
	}
	return nil
}

func decodeMessage(raw []byte) (*Message, error) {
	var m storedMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("mail: decoding a message: %w", err)
	}
	m.Message.Instance, m.Message.Sealed = m.Instance, m.Sealed
	return &m.Message, nil
}

// get reads one message afresh.
func (o *Outbox) get(ctx context.Context, inst, id string) (*Message, error) {
	raw, err := o.st.GetDoc(ctx, docMessage, messageKey(inst, id))
	if err != nil {
		return nil, err
	}
	return decodeMessage(raw)
}

// open returns the recipient and contents of a message.
func (o *Outbox) open(m *Message) (sealedParts, error) {
	var p sealedParts
	plain := []byte(m.Sealed)
	if o.sealer != nil {
		var err error
		if plain, _, err = o.sealer.Open(m.Sealed, aad(messageKey(m.Instance, m.ID))); err != nil {
			return p, fmt.Errorf("mail: opening message %s: %w", m.ID, err)
		}
	}
	if err := json.Unmarshal(plain, &p); err != nil {
		return p, fmt.Errorf("mail: decoding message %s: %w", m.ID, err)
	}
	return p, nil
}

// all returns every message of every instance (inst "") or of one.
func (o *Outbox) all(ctx context.Context, inst string) ([]*Message, error) {
	docs, err := o.st.ListDocs(ctx, docMessage)
	if err != nil {
		return nil, fmt.Errorf("mail: reading the outbox: %w", err)
	}
	out := make([]*Message, 0, len(docs))
	for key, raw := range docs {
		if inst != "" && !strings.HasPrefix(key, inst+"/") {
			continue
		}
		m, err := decodeMessage(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// List returns an instance's messages, oldest first (the admin API's
// view: no recipient, no contents).
func (o *Outbox) List(ctx context.Context, inst string) ([]*Message, error) {
	return o.all(ctx, inst)
}

// Drop removes every message of an instance (the instance was deleted).
func (o *Outbox) Drop(ctx context.Context, inst string) error {
	ms, err := o.all(ctx, inst)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := o.remove(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes a message and its claims.
func (o *Outbox) remove(ctx context.Context, m *Message) error {
	for a := 0; a <= m.Attempts; a++ {
		for t := 0; t < maxTakeovers; t++ {
			if err := o.st.DeleteDoc(ctx, docClaim, claimKey(m, a, t)); err != nil {
				return err
			}
		}
	}
	return o.st.DeleteDoc(ctx, docMessage, messageKey(m.Instance, m.ID))
}

// maxTakeovers bounds how often one attempt's claim is taken over.
const maxTakeovers = 3

func claimKey(m *Message, attempt, takeover int) string {
	return fmt.Sprintf("%s/%d/%d", messageKey(m.Instance, m.ID), attempt, takeover)
}

// claim is a claim's document.
type claim struct {
	Owner string    `json:"owner"`
	At    time.Time `json:"at"`
}

// claim takes the message's next attempt for owner: true when this
// process is to send it. The attempt's claim is created once (CreateDoc:
// the first process wins); a claim older than lease (its process died
// mid-attempt) may be taken over, a bounded number of times. Won, the
// message is read again: an attempt already recorded by another process
// is not made twice.
func (o *Outbox) claim(ctx context.Context, m *Message, owner string, lease time.Duration) (*Message, bool, error) {
	now := o.now().UTC()
	mine, _ := json.Marshal(claim{Owner: owner, At: now})
	for t := 0; t < maxTakeovers; t++ {
		got, err := o.st.CreateDoc(ctx, docClaim, claimKey(m, m.Attempts, t), mine)
		if err != nil {
			return nil, false, fmt.Errorf("mail: claiming message %s: %w", m.ID, err)
		}
		if string(got) != string(mine) {
			var c claim
			if json.Unmarshal(got, &c) == nil && now.Sub(c.At) < lease {
				return nil, false, nil // another process is sending it
			}
			continue
		}
		fresh, err := o.get(ctx, m.Instance, m.ID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if fresh.Status != StatusQueued || fresh.Attempts != m.Attempts {
			return nil, false, nil
		}
		return fresh, true, nil
	}
	return nil, false, nil
}
