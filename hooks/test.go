package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// TestType and TestOp are the type and op of a test event: a post an
// operator asks for (the console's "send test event"), signed with the
// hook's key as every event is, that is about no record (node null).
const (
	TestType = "core.test"
	TestOp   = "TEST"
)

// ErrNoHook is SendTest's answer for an id that is no EventHook of the
// instance.
var ErrNoHook = errors.New("no such event hook")

// SendTest posts a test event to an instance's hook now, whether or not
// it is enabled, with the destination rules of every post, and answers
// how it went. It touches neither the hook's cursor nor its delivery log.
func (s *Service) SendTest(ctx context.Context, inst *tenant.Instance, hookID string) (Attempt, error) {
	r, err := s.st.Get(ctx, inst.ID, Type, hookID)
	if errors.Is(err, store.ErrNotFound) {
		return Attempt{}, ErrNoHook
	}
	if err != nil {
		return Attempt{}, err
	}
	h, err := FromRecord(r, func(sealed string) ([]byte, error) { return OpenSecret(s.seal, inst.ID, sealed) })
	if err != nil {
		return Attempt{}, err
	}
	now := time.Now()
	body, err := json.Marshal(map[string]any{"type": TestType, "op": TestOp, "id": hookID, "node": nil,
		"instance": inst.Domain, "timestamp": stamp(now)})
	if err != nil {
		return Attempt{}, err
	}
	m := &message{url: h.URL, id: fmt.Sprintf("evt_test_%s", store.NewID()), key: h.Key, body: body}
	o := s.send.send(ctx, m)
	a := Attempt{At: o.at, EventID: m.id, Type: TestType, Op: TestOp, Record: hookID, Attempt: 1, Status: o.status,
		Millis: o.millis, Response: o.response}
	if o.err != nil {
		a.Error = o.err.Error()
	}
	return a, nil
}
