package defaults

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type limits struct {
	Count    int
	Big      int64
	Every    time.Duration
	Name     string
	On       bool
	Ratio    float64
	Ptr      *int
	Nested   struct{ N int }
	internal int
}

// TestFill: each integer figure that is 0 or negative takes the default,
// each positive one stays; nothing else is touched, not even an
// unexported figure (its package fills it itself).
func TestFill(t *testing.T) {
	t.Parallel()
	one := 1
	def := limits{Count: 10, Big: 1 << 40, Every: time.Second, Name: "default", On: true, Ratio: 0.5, Ptr: &one, Nested: struct{ N int }{7}, internal: 3}

	got := Fill(limits{Count: -1}, def)
	want := limits{Count: 10, Big: 1 << 40, Every: time.Second}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(limits{})); diff != "" {
		t.Errorf("zero and negative figures (-want +got):\n%s", diff)
	}

	set := limits{Count: 2, Big: 3, Every: time.Millisecond, Name: "mine", internal: -4}
	if diff := cmp.Diff(set, Fill(set, def), cmp.AllowUnexported(limits{})); diff != "" {
		t.Errorf("figures that are set (-want +got):\n%s", diff)
	}
}
