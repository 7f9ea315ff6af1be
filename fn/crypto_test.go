package fn

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCrypto(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	// Vectors: RFC 4231 test case 2 (HMAC-SHA256), RFC 2202 test case 2
	// (HMAC-SHA1), FIPS 180-2 "abc" (SHA-256, SHA-1).
	e.publish("vectors", "v1", `const c = require('crypto');
	const data = 'what do ya want for nothing?';
	exports.main = (input, cb) => {
		let lengthError;
		try { c.timingSafeEqual(Buffer.from('ab'), Buffer.from('abc')); } catch (e) { lengthError = e.name + ': ' + e.message; }
		cb({
			hmac256: c.createHmac('sha256', 'Jefe').update(data).digest('hex'),
			hmac256Split: c.createHmac('SHA256', 'Jefe').update('what do ya ').update(Buffer.from('want for nothing?')).digest('hex'),
			hmac256Helper: c.hmacSHA256('Jefe', data),
			hmac256Base64: c.hmacSHA256('Jefe', data, 'base64'),
			hmac1: c.createHmac('sha1', 'Jefe').update(data).digest('hex'),
			hmac1Helper: c.hmacSHA1('Jefe', data),
			sha256: c.createHash('sha256').update('abc').digest('hex'),
			sha256Helper: c.sha256('abc'),
			sha256Buffer: c.createHash('sha256').update('abc').digest().toString('hex'),
			sha1: c.sha1('abc'),
			sha256OfHexInput: c.createHash('sha256').update('616263', 'hex').digest('hex'),
			equal: [c.equal('abc', 'abc'), c.equal('abc', 'abd'), c.equal('abc', 'ab')],
			timingSafeEqual: [c.timingSafeEqual(Buffer.from('abc'), Buffer.from('abc')), c.timingSafeEqual(Buffer.from('abc'), Buffer.from('abd'))],
			lengthError: lengthError,
			base64: [c.base64Encode('hello?'), c.base64UrlEncode('hello?'), c.base64Decode('aGVsbG8/'), c.base64Decode('aGVsbG8_')],
			hex: [c.hexEncode('hello'), c.hexDecode('68656c6c6f')],
			nodePrefix: require('node:crypto').sha256('abc') === c.sha256('abc'),
		}, null);
	};`)
	res, err := e.invoke(Invocation{Name: "vectors", Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	const (
		hmac256 = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
		hmac1   = "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"
		sha256s = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	)
	want := map[string]any{
		"hmac256": hmac256, "hmac256Split": hmac256, "hmac256Helper": hmac256,
		"hmac256Base64": "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM=",
		"hmac1":         hmac1, "hmac1Helper": hmac1,
		"sha256": sha256s, "sha256Helper": sha256s, "sha256Buffer": sha256s, "sha256OfHexInput": sha256s,
		"sha1":            "a9993e364706816aba3e25717850c26c9cd0d89d",
		"equal":           []any{true, false, false},
		"timingSafeEqual": []any{true, false},
		"lengthError":     "RangeError: Input buffers must have the same byte length",
		"base64":          []any{"aGVsbG8/", "aGVsbG8_", "hello?", "hello?"},
		"hex":             []any{"68656c6c6f", "hello"},
		"nodePrefix":      true,
	}
	if d := cmp.Diff(want, res.Value); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// stripeSignature signs body the way Stripe does, with Go's HMAC.
func stripeSignature(secret, timestamp, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "%s.%s", timestamp, body)
	return fmt.Sprintf("t=%s,v1=%s", timestamp, hex.EncodeToString(m.Sum(nil)))
}

// TestStripeVerifier runs testdata/functions/verify-stripe (a package
// with package.json main and a second module) on good, tampered and
// unsigned payloads.
func TestStripeVerifier(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.publishBytes("verify-stripe", "v1", zipOf(t, testdataFiles(t, "verify-stripe"), nil))
	const secret = "whsec_test_secret"
	body := `{"id":"evt_1","type":"invoice.payment_failed","data":{"amount":1200}}`
	sig := stripeSignature(secret, "1700000000", body)

	payload := func(headers map[string]any, body string) string {
		return mustJSON(t, map[string]any{"url": map[string]any{"path": "/webhook/shop.test/stripe"}, "headers": headers, "body": body})
	}
	tests := []struct {
		name    string
		payload string
		env     map[string]string
		want    any
		wantErr error
	}{
		{"signed", payload(map[string]any{"Stripe-Signature": sig}, body), map[string]string{"STRIPE_SECRET": secret},
			map[string]any{"status": float64(200), "body": map[string]any{"received": true, "id": "evt_1"}}, nil},
		{"header as a list", payload(map[string]any{"stripe-signature": []any{sig}}, body), map[string]string{"STRIPE_SECRET": secret},
			map[string]any{"status": float64(200), "body": map[string]any{"received": true, "id": "evt_1"}}, nil},
		{"tampered body", payload(map[string]any{"Stripe-Signature": sig}, body[:len(body)-2]+"9}"), map[string]string{"STRIPE_SECRET": secret},
			map[string]any{"status": float64(400), "headers": map[string]any{"content-type": "application/json"}, "body": map[string]any{"error": "bad signature"}}, nil},
		{"wrong secret", payload(map[string]any{"Stripe-Signature": sig}, body), map[string]string{"STRIPE_SECRET": "whsec_other"},
			map[string]any{"status": float64(400), "headers": map[string]any{"content-type": "application/json"}, "body": map[string]any{"error": "bad signature"}}, nil},
		{"unsigned", payload(map[string]any{}, body), map[string]string{"STRIPE_SECRET": secret},
			map[string]any{"status": float64(400), "headers": map[string]any{"content-type": "application/json"}, "body": map[string]any{"error": "bad signature"}}, nil},
		{"no secret", payload(map[string]any{"Stripe-Signature": sig}, body), nil, nil,
			&FuncError{Code: "NOT_CONFIGURED", Message: "STRIPE_SECRET is not set"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := e.invoke(Invocation{Name: "verify-stripe", Version: "v1",
				Args: map[string]any{"payload": tc.payload}, Env: tc.env, EnvNames: []string{"STRIPE_SECRET"}})
			if d := cmp.Diff(tc.wantErr, err); d != "" {
				t.Fatalf("error (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.want, res.Value); d != "" {
				t.Errorf("answer (-want +got):\n%s", d)
			}
		})
	}
}

func TestGitHubVerifier(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.publishFiles("verify-github", "v1", testdataFiles(t, "verify-github"))
	const secret = "gh-secret"
	body := `{"action":"opened"}`
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	good := "sha256=" + hex.EncodeToString(m.Sum(nil))
	for _, tc := range []struct {
		sig  string
		want any
	}{
		{good, map[string]any{"status": float64(200), "body": map[string]any{"event": "issues"}}},
		{good[:len(good)-1] + "0", map[string]any{"status": float64(401), "body": "bad signature"}},
		{"sha256=short", map[string]any{"status": float64(401), "body": "bad signature"}},
	} {
		p := mustJSON(t, map[string]any{"headers": map[string]any{"x-hub-signature-256": tc.sig, "x-github-event": "issues"}, "body": body})
		res, err := e.invoke(Invocation{Name: "verify-github", Version: "v1", Args: map[string]any{"payload": p},
			Env: map[string]string{"GITHUB_SECRET": secret}, EnvNames: []string{"GITHUB_SECRET"}})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, res.Value); d != "" {
			t.Errorf("signature %s (-want +got):\n%s", tc.sig, d)
		}
	}
}
