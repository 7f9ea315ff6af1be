package whole

import "testing"

func TestBeyondFloat(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{
		"9007199254740993": true, "-9007199254740993": true, "9223372036854775807": true,
		"9007199254740992": false, "-9223372036854775808": false, "9223372036854775808": false,
		"1": false, "+9007199254740993": false, "9007199254740993.0": false, "9e18": false, "": false,
	} {
		if _, got := BeyondFloat(text); got != want {
			t.Errorf("BeyondFloat(%q) = %v, want %v", text, got, want)
		}
	}
	if n, _ := BeyondFloat("9007199254740993"); n != 9007199254740993 {
		t.Errorf("BeyondFloat(2^53+1) = %d", n)
	}
}
