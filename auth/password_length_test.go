package auth

import (
	"strings"
	"testing"
)

// TestPasswordLengthCountsCharacters: the minimum counts characters, the
// maximum bytes.
//
// hostile checklist 11: 7 characters → refused; 64 characters and
// emoji/Unicode → accepted; 1 MB → refused.
func TestPasswordLengthCountsCharacters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, pw string
		ok       bool
	}{
		{"7 ASCII characters", "1234567", false},
		{"7 two-byte letters (14 bytes)", "ééééééé", false},
		{"7 emoji (28 bytes)", strings.Repeat("🐴", 7), false},
		{"8 ASCII characters", "12345678", true},
		{"8 two-byte letters", "éééééééé", true},
		{"8 emoji", strings.Repeat("🐴", 8), true},
		{"8 CJK characters", "正確馬電池正確馬", true},
		{"64 characters", strings.Repeat("abcdefgh", 8), true},
		{"1024 bytes", strings.Repeat("x", 1024), true},
		{"256 emoji (1024 bytes)", strings.Repeat("🐴", 256), true},
		{"1025 bytes", strings.Repeat("x", 1025), false},
		{"257 emoji (1028 bytes)", strings.Repeat("🐴", 257), false},
		{"1 MB", strings.Repeat("x", 1<<20), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPassword(tc.pw)
			if (err == nil) != tc.ok {
				t.Errorf("CheckPassword(%d characters, %d bytes) = %v, want ok %v", len([]rune(tc.pw)), len(tc.pw), err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "password") {
				t.Errorf("the refusal does not name the password: %v", err)
			}
		})
	}
}
