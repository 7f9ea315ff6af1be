package tenant_test

import (
	"context"
	"strings"
	"testing"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/tenant"
)

// TestFunctionMemoryMaximum: an instance's functionMemory is bounded by
// the server's maximum (the function runtime's, LimitFunctionMemory):
// above it, creating or updating the instance is refused with a 400
// naming the setting, the value and the maximum, and nothing changes;
// at it, the value is kept and shown back as it will be enforced. A
// value stored before the maximum was lowered does not block changes to
// the instance's other settings.
// hostile checklist 50: an instance cannot ask for more memory per call
// than the operator allows.
func TestFunctionMemoryMaximum(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t)
	h.reg.LimitFunctionMemory(256 << 20)
	h.putRelease("v1", bookstoreSDL)

	refused := func(what string, err error) {
		t.Helper()
		if code(err) != errcode.BadRequest {
			t.Fatalf("%s: err = %v, want BAD_REQUEST", what, err)
		}
		for _, want := range []string{"functionMemory", "1073741824 (1 GiB)", "268435456 (256 MiB)", "--function-memory-max"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", what, err, want)
			}
		}
	}
	_, _, err := h.reg.CreateInstance(ctx, tenant.InstanceSpec{Domain: "big.test", App: "bookstore", Release: "v1",
		Settings: tenant.Settings{FunctionMemory: 1 << 30}})
	refused("creating with 1 GiB", err)
	if _, ok := h.reg.Lookup("big.test"); ok {
		t.Error("the refused instance exists")
	}

	inst, _, err := h.reg.CreateInstance(ctx, tenant.InstanceSpec{Domain: "max.test", App: "bookstore", Release: "v1",
		Settings: tenant.Settings{FunctionMemory: 256 << 20}})
	if err != nil {
		t.Fatalf("creating with the maximum: %v", err)
	}
	if inst.Settings.FunctionMemory != 256<<20 {
		t.Errorf("created with functionMemory %d, want %d", inst.Settings.FunctionMemory, 256<<20)
	}
	_, err = h.reg.UpdateInstance(ctx, "max.test", tenant.Change{Settings: []byte(`{"functionMemory": 1073741824}`)})
	refused("updating to 1 GiB", err)
	if l, _ := h.reg.Lookup("max.test"); l.Settings.FunctionMemory != 256<<20 {
		t.Errorf("after the refused update functionMemory is %d, want %d", l.Settings.FunctionMemory, 256<<20)
	}

	// The operator lowers the maximum: the stored 256 MiB stays (the
	// runtime enforces 128 MiB), other settings still change, and a new
	// value above the maximum is refused.
	h.reg.LimitFunctionMemory(128 << 20)
	got, err := h.reg.UpdateInstance(ctx, "max.test", tenant.Change{Settings: []byte(`{"anonymousRequests": true}`)})
	if err != nil || !got.Settings.AnonymousRequests || got.Settings.FunctionMemory != 256<<20 {
		t.Errorf("another setting after the maximum was lowered: %v, %+v", err, got)
	}
	if _, err := h.reg.UpdateInstance(ctx, "max.test", tenant.Change{Settings: []byte(`{"functionMemory": 192000000}`)}); code(err) != errcode.BadRequest ||
		!strings.Contains(err.Error(), "134217728 (128 MiB)") {
		t.Errorf("192000000 above a 128 MiB maximum: %v, want BAD_REQUEST naming 134217728 (128 MiB)", err)
	}
	if got, err := h.reg.UpdateInstance(ctx, "max.test", tenant.Change{Settings: []byte(`{"functionMemory": 0}`)}); err != nil || got.Settings.FunctionMemory != 0 {
		t.Errorf("back to the server's default: %v, %+v", err, got)
	}
}
