package schema

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorsFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"one", Errors{{3, 7, "field Book.a: unknown type X"}}, "3:7: field Book.a: unknown type X"},
		{"several", Errors{{0, 0, "the schema is 2 bytes; the limit is 1"}, {1, 2, "a"}, {10, 1, "b"}},
			"the schema is 2 bytes; the limit is 1\n1:2: a\n10:1: b"},
		{"wrapped", fmt.Errorf("release v1: %w", Errors{{1, 1, "x"}}), "release v1: 1:1: x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			var es Errors
			if !errors.As(tt.err, &es) {
				t.Error("errors.As(Errors) = false")
			}
		})
	}
}
