package hooks

import "testing"

// The example of the Standard Webhooks specification's libraries.
func TestSignStandardWebhooksExample(t *testing.T) {
	t.Parallel()
	key, err := ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := Sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

func TestParseSecret(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_", "whsec_!!!!", "whsec_c2hvcnQ=", "whsec_" + string(make([]byte, 200))} {
		if _, err := ParseSecret(bad); err == nil {
			t.Errorf("ParseSecret(%q) took it", bad)
		}
	}
}
