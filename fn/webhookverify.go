package fn

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// core.verifyWebhook(secret, payload[, {tolerance}]) checks a request
// signed per Standard Webhooks (standardwebhooks.com): the headers
// webhook-id, webhook-timestamp (Unix seconds) and webhook-signature (a
// space-separated list of "v1,<base64 HMAC-SHA256>"), the HMAC taken
// with the secret's key ("whsec_" then base64; the prefix is optional)
// over "<id>.<timestamp>.<raw body>". payload is the WebhookPayload (the
// object, or its JSON text as input.args.payload carries it); its body is
// the raw text the webhook received, byte for byte, so reformatted JSON
// fails. It refuses, in this order: missing headers, a timestamp more
// than tolerance seconds (default 300, at most 3600) in the past
// (stale) or the future, no matching signature, and a webhook-id this
// instance verified within the tolerance window (replay). It returns the
// body, parsed when it is JSON; a refusal throws an Error whose code says
// which: missing_headers, stale_timestamp, future_timestamp,
// bad_signature, replay (and bad_secret, unavailable).
//
// Replays are remembered by the service process (also for calls run in
// worker processes, which ask it), per instance, for the tolerance window
// of each id, at most replayPerInstance ids per instance: past that the
// verification fails (unavailable) rather than forget an id early. The
// memory is the process's: behind a load balancer spreading one sender
// over several cored processes, a replay to another process is not seen,
// and a restart forgets; a function that must never act twice keeps the
// ids it handled in its own records (a @unique field).

const (
	defaultTolerance  = 5 * time.Minute
	maxTolerance      = time.Hour
	replayPerInstance = 10_000
)

// replays remembers verified webhook ids per instance until they expire.
// Safe for concurrent use.
type replays struct {
	mu   sync.Mutex
	seen map[string]map[string]time.Time // instance → id → until
}

// errReplayFull: an instance verified more ids within their windows than
// are remembered.
var errReplayFull = errors.New("too many webhook ids to remember; try again later")

// remember records id of inst until until and reports whether it was
// new (false: a replay).
func (r *replays) remember(inst, id string, until, now time.Time) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]map[string]time.Time{}
	}
	ids := r.seen[inst]
	if ids == nil {
		ids = map[string]time.Time{}
		r.seen[inst] = ids
	}
	if exp, ok := ids[id]; ok && exp.After(now) {
		return false, nil
	}
	if len(ids) >= replayPerInstance {
		for k, exp := range ids {
			if !exp.After(now) {
				delete(ids, k)
			}
		}
		if len(ids) >= replayPerInstance {
			return false, errReplayFull
		}
	}
	ids[id] = until
	return true, nil
}

// replayCheck asks the service, from a worker process, whether a
// webhook id is new (graphqlRequest.Replay); the reply's Response is
// true or false.
type replayCheck struct {
	ID    string    `json:"id"`
	Until time.Time `json:"until"`
}

// rememberWebhook records a verified webhook id of the call's instance:
// in this process, or through the service when the call runs in a
// worker.
func (c *call) rememberWebhook(ctx context.Context, id string, until time.Time) (bool, error) {
	if c.inv.remember != nil {
		return c.inv.remember(ctx, id, until)
	}
	return c.j.replays.remember(c.inv.Caller.InstanceID, id, until, time.Now())
}

// verifyError is the Error core.verifyWebhook throws.
func (c *call) verifyError(code, format string, args ...any) *goja.Object {
	e := c.vm.NewGoError(fmt.Errorf("webhook verification failed: "+format, args...))
	must(e.Set("code", code))
	return e
}

func (c *call) verifyWebhook(ctx context.Context, fc goja.FunctionCall) goja.Value {
	vm := c.vm
	secret := strings.TrimPrefix(fc.Argument(0).String(), "whsec_")
	key, err := base64.StdEncoding.DecodeString(secret)
	if err != nil || len(key) == 0 || isNullish(fc.Argument(0)) {
		panic(c.verifyError("bad_secret", "the secret is not whsec_ followed by base64"))
	}
	var payload struct {
		Headers map[string]any `json:"headers"`
		Body    string         `json:"body"`
	}
	p := fc.Argument(1)
	text := ""
	if s, ok := p.Export().(string); ok {
		text = s
	} else if !isNullish(p) {
		if text, err = c.stringify(p); err != nil {
			panic(vm.NewTypeError("verifyWebhook: the payload cannot be read: %v", err))
		}
	}
	if json.Unmarshal([]byte(text), &payload) != nil {
		panic(vm.NewTypeError("verifyWebhook(secret, payload): payload must be the WebhookPayload (an object with headers and body)"))
	}
	tolerance := defaultTolerance
	if o := fc.Argument(2); !isNullish(o) {
		if t := o.ToObject(vm).Get("tolerance"); t != nil && !isNullish(t) {
			s := t.ToFloat()
			if math.IsNaN(s) || s <= 0 || s > maxTolerance.Seconds() {
				panic(newRangeError(vm, fmt.Sprintf("verifyWebhook: tolerance must be from 1 to %d seconds", int(maxTolerance.Seconds()))))
			}
			tolerance = time.Duration(s * float64(time.Second))
		}
	}
	header := func(name string) string {
		for k, v := range payload.Headers {
			if strings.EqualFold(k, name) {
				s, _ := v.(string)
				return s
			}
		}
		return ""
	}
	id, ts, sigs := header("webhook-id"), header("webhook-timestamp"), header("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		panic(c.verifyError("missing_headers", "webhook-id, webhook-timestamp and webhook-signature are required"))
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		panic(c.verifyError("stale_timestamp", "webhook-timestamp %q is not a Unix time in seconds", cut(ts, 32)))
	}
	now := time.Now()
	at := time.Unix(sec, 0)
	switch {
	case now.Sub(at) > tolerance:
		panic(c.verifyError("stale_timestamp", "the timestamp is %s old, more than the tolerance of %s", now.Sub(at).Round(time.Second), tolerance))
	case at.Sub(now) > tolerance:
		panic(c.verifyError("future_timestamp", "the timestamp is %s ahead, more than the tolerance of %s", at.Sub(now).Round(time.Second), tolerance))
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write([]byte(payload.Body))
	want := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	matched := false
	for _, s := range strings.Fields(sigs) {
		if v, sig, ok := strings.Cut(s, ","); ok && v == "v1" && subtle.ConstantTimeCompare([]byte(sig), want) == 1 {
			matched = true
		}
	}
	if !matched {
		panic(c.verifyError("bad_signature", "no v1 signature matches the body"))
	}
	fresh, err := c.rememberWebhook(ctx, id, at.Add(tolerance))
	switch {
	case err != nil:
		panic(c.verifyError("unavailable", "%v", err))
	case !fresh:
		panic(c.verifyError("replay", "webhook-id %q was verified already", cut(id, 64)))
	}
	if v, err := c.parseJSON(payload.Body); err == nil {
		return v
	}
	return vm.ToValue(payload.Body)
}
