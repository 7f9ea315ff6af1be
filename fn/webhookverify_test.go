package fn

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// swSign signs per Standard Webhooks: base64(HMAC-SHA256(key,
// "id.timestamp.body")), the key being the base64 after whsec_.
func swSign(t *testing.T, secret, id string, ts int64, body string) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(secret[len("whsec_"):])
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s.%d.%s", id, ts, body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// TestVerifyWebhook: core.verifyWebhook accepts a request signed per
// Standard Webhooks and refuses a replayed webhook-id, a timestamp six
// minutes old (or ahead), a reformatted body, a wrong secret and missing
// headers, each with its code; replays are per instance and remembered by
// the service also for calls run in worker processes.
//
// hostile checklist 43: a request signed per Standard Webhooks, replayed
// with the same webhook-id, and one whose timestamp is 6 minutes old →
// the built-in verifier reports a replay or a stale timestamp; the
// signature is over the raw bytes, so reformatted JSON fails.
func TestVerifyWebhook(t *testing.T) {
	t.Parallel()
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("a secret of the sender, 32 bytes"))
	for name, change := range map[string]func(*Config){"in process": inline, "worker processes": nil} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, change)
			e.publish("verify", "v1", `exports.main = (input) => {
				const opts = input.args.tolerance ? {tolerance: input.args.tolerance} : undefined;
				try { return {ok: core.verifyWebhook(input.args.secret, input.args.payload, opts)}; }
				catch (err) { return {code: err.code || err.name, message: err.message}; }
			};`)
			body := `{"type":"invoice.paid","data":{"amount":4200}}`
			payload := func(id string, ts int64, sig, body string) string {
				h := map[string]any{"content-type": "application/json"}
				if id != "" {
					h["webhook-id"] = id
				}
				if ts != 0 {
					h["webhook-timestamp"] = strconv.FormatInt(ts, 10)
				}
				if sig != "" {
					h["webhook-signature"] = sig
				}
				b, _ := json.Marshal(map[string]any{"headers": h, "body": body, "method": "POST"})
				return string(b)
			}
			verify := func(inst, p string, tolerance float64) map[string]any {
				t.Helper()
				args := map[string]any{"secret": secret, "payload": p}
				if tolerance > 0 {
					args["tolerance"] = tolerance
				}
				res, err := e.invoke(Invocation{Name: "verify", Version: "v1", Args: args, Caller: Caller{InstanceID: inst}})
				if err != nil {
					t.Fatal(err)
				}
				out, _ := res.Value.(map[string]any)
				return out
			}
			code := func(out map[string]any) any { return out["code"] }
			now := time.Now().Unix()

			good := payload("msg_1", now, swSign(t, secret, "msg_1", now, body), body)
			if diff := cmp.Diff(map[string]any{"ok": map[string]any{"type": "invoice.paid", "data": map[string]any{"amount": 4200.0}}}, verify("inst1", good, 0)); diff != "" {
				t.Errorf("a good request (-want +got):\n%s", diff)
			}
			if out := verify("inst1", good, 0); code(out) != "replay" {
				t.Errorf("the same request again: %v, want replay", out)
			}
			if out := verify("inst2", good, 0); out["ok"] == nil {
				t.Errorf("the same id at another instance: %v, want accepted (replays are per instance)", out)
			}
			old := now - 6*60
			if out := verify("inst1", payload("msg_2", old, swSign(t, secret, "msg_2", old, body), body), 0); code(out) != "stale_timestamp" {
				t.Errorf("6 minutes old: %v, want stale_timestamp", out)
			}
			ahead := now + 6*60
			if out := verify("inst1", payload("msg_3", ahead, swSign(t, secret, "msg_3", ahead, body), body), 0); code(out) != "future_timestamp" {
				t.Errorf("6 minutes ahead: %v, want future_timestamp", out)
			}
			minute := now - 60
			if out := verify("inst1", payload("msg_4", minute, swSign(t, secret, "msg_4", minute, body), body), 10); code(out) != "stale_timestamp" {
				t.Errorf("a minute old with a 10 s tolerance: %v, want stale_timestamp", out)
			}
			reformatted := "{\n  \"type\": \"invoice.paid\",\n  \"data\": {\"amount\": 4200}\n}"
			if out := verify("inst1", payload("msg_5", now, swSign(t, secret, "msg_5", now, body), reformatted), 0); code(out) != "bad_signature" {
				t.Errorf("reformatted JSON: %v, want bad_signature", out)
			}
			other := "whsec_" + base64.StdEncoding.EncodeToString([]byte("another secret"))
			if out := verify("inst1", payload("msg_6", now, swSign(t, other, "msg_6", now, body), body), 0); code(out) != "bad_signature" {
				t.Errorf("a wrong secret: %v, want bad_signature", out)
			}
			if out := verify("inst1", payload("msg_7", now, swSign(t, secret, "msg_7", now+1, body), body), 0); code(out) != "bad_signature" {
				t.Errorf("a signature of another timestamp: %v, want bad_signature", out)
			}
			if out := verify("inst1", payload("", now, swSign(t, secret, "", now, body), body), 0); code(out) != "missing_headers" {
				t.Errorf("no webhook-id: %v, want missing_headers", out)
			}
			// The ids are the service's, whichever process ran the call.
			e.js.replays.mu.Lock()
			_, kept := e.js.replays.seen["inst1"]["msg_1"]
			e.js.replays.mu.Unlock()
			if !kept {
				t.Error("the service process does not remember msg_1")
			}
			// A refused request did not burn its id: signed well, it passes.
			if out := verify("inst1", payload("msg_6", now, swSign(t, secret, "msg_6", now, body), body), 0); out["ok"] == nil {
				t.Errorf("an id first refused for its signature, then signed well: %v, want accepted", out)
			}
			// Several signatures (a key rotation): one matching is enough.
			multi := swSign(t, other, "msg_8", now, body) + " v1a,xyz " + swSign(t, secret, "msg_8", now, body)
			if out := verify("inst1", payload("msg_8", now, multi, body), 0); out["ok"] == nil {
				t.Errorf("several signatures, one good: %v, want accepted", out)
			}
		})
	}
}

// TestReplayMemoryBound: an instance's remembered ids are bounded; past
// the bound, expired ids are swept, and when none has expired the check
// fails instead of forgetting an id early. Other instances are not
// affected.
func TestReplayMemoryBound(t *testing.T) {
	t.Parallel()
	var r replays
	now := time.Unix(1_800_000_000, 0)
	for i := range replayPerInstance {
		if fresh, err := r.remember("a", strconv.Itoa(i), now.Add(time.Minute), now); !fresh || err != nil {
			t.Fatalf("id %d: %v %v", i, fresh, err)
		}
	}
	if _, err := r.remember("a", "one more", now.Add(time.Minute), now); err != errReplayFull {
		t.Errorf("past the bound: %v, want errReplayFull", err)
	}
	if fresh, err := r.remember("b", "0", now.Add(time.Minute), now); !fresh || err != nil {
		t.Errorf("another instance: %v %v, want fresh", fresh, err)
	}
	later := now.Add(2 * time.Minute)
	if fresh, err := r.remember("a", "one more", later.Add(time.Minute), later); !fresh || err != nil {
		t.Errorf("once the others expired: %v %v, want fresh", fresh, err)
	}
	if fresh, _ := r.remember("a", "0", later.Add(time.Minute), later); !fresh {
		t.Error("an expired id counts as a replay")
	}
}
