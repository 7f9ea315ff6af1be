package schema

import (
	"strings"
	"testing"

	"github.com/corehq/core/internal/names"
)

// TestFnNamesFollowTheNameRule: @fn's name and version accept exactly the
// names fn publishes versions under (names.Valid): the longest is bound,
// one byte more is refused (TestParseErrors holds the message).
func TestFnNamesFollowTheNameRule(t *testing.T) {
	t.Parallel()
	longest := strings.Repeat("f", names.MaxLen)
	m, err := Parse(`type Query { f: Int @fn(name: "`+longest+`", version: "`+longest+`") }`, DefaultLimits())
	if err != nil {
		t.Fatalf("a name of %d bytes: %v", names.MaxLen, err)
	}
	if fn := m.Queries[0].Fn; fn == nil || fn.Name != longest || fn.Version != longest {
		t.Errorf("binding = %+v, want name and version %q", fn, longest)
	}
	for _, arg := range []string{"name", "version"} {
		sdl := `type Query { f: Int @fn(name: "f", version: "v1") }`
		sdl = strings.Replace(sdl, arg+`: "`, arg+`: "`+longest, 1)
		if _, err := Parse(sdl, DefaultLimits()); err == nil || !strings.Contains(err.Error(), "@fn "+arg) {
			t.Errorf("%s of %d bytes: %v, want it refused", arg, names.MaxLen+1, err)
		}
	}
}
