package auth

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/corehq/core/keyring"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt"
)

// TestAdminSession: an admin session acts as the instance token on its own
// instance, and is refused on another instance, for another account, with
// an ordinary session's place taken (an ordinary session of the admin
// account stays a User), after its 15 minutes, once its key is retired,
// and once the instance token is rotated.
func TestAdminSession(t *testing.T) {
	t.Parallel()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "b.db"), bolt.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for _, w := range []struct{ inst, acct string }{{"inst1", "admin1"}, {"inst2", "admin2"}, {"inst1", "user1"}} {
		if _, err := st.Write(ctx, w.inst, []store.Op{{Kind: store.OpUpsert, Type: "Account", ID: w.acct, Set: map[string]any{"enabled": true}, Now: time.Now()}}, store.Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	r1 := keyring.Generate()
	file := filepath.Join(t.TempDir(), "core.keys")
	if err := keyring.CreateFile(file, r1); err != nil {
		t.Fatal(err)
	}
	keys, err := keyring.OpenFile(file)
	if err != nil {
		t.Fatal(err)
	}
	a := NewAccounts(keys)
	inst1 := Instance{ID: "inst1", AdminAccountID: "admin1", TokenHash: HashToken("instance token of inst1")}
	inst2 := Instance{ID: "inst2", AdminAccountID: "admin2"}

	token, c := a.Sessions.IssueAdmin(inst1, a.Now())
	if !c.Admin || time.Duration(c.ExpiresMicros-c.IssuedMicros)*time.Microsecond != AdminSessionLifetime || AdminSessionLifetime != 15*time.Minute {
		t.Fatalf("claims %+v: want an admin session of 15 minutes", c)
	}
	p, err := a.Authenticate(ctx, st, inst1, "Bearer "+token)
	if err != nil || p.Kind != InstanceAdmin || p.AccountID != "admin1" {
		t.Fatalf("on its instance: %+v %v, want the instance's admin", p, err)
	}
	if p, err := a.Authenticate(ctx, st, inst2, token); err == nil {
		t.Errorf("on another instance: accepted as %+v", p)
	}
	// Signed for inst1 but naming an account that is not its admin.
	forged, _ := a.Sessions.IssueAdmin(Instance{ID: "inst1", AdminAccountID: "user1", TokenHash: inst1.TokenHash}, a.Now())
	if p, err := a.Authenticate(ctx, st, inst1, forged); err == nil {
		t.Errorf("an admin session of an account that is not the instance's admin: accepted as %+v", p)
	}
	// An ordinary session of the admin account is not an admin session.
	plain, _ := a.Sessions.Issue("inst1", "admin1", a.Now(), time.Hour)
	if p, err := a.Authenticate(ctx, st, inst1, plain); err != nil || p.Kind != User {
		t.Errorf("an ordinary session of the admin account: %+v %v, want a User", p, err)
	}

	// Near its end it still works; at its end it does not.
	a.Shift(AdminSessionLifetime - time.Second)
	if _, err := a.Authenticate(ctx, st, inst1, token); err != nil {
		t.Errorf("a second before it ends: %v", err)
	}
	a.Shift(time.Second)
	if p, err := a.Authenticate(ctx, st, inst1, token); err == nil {
		t.Errorf("after 15 minutes: accepted as %+v", p)
	}

	// A fresh one ends when its key is retired.
	fresh, _ := a.Sessions.IssueAdmin(inst1, a.Now())
	r2, _, _ := r1.Rotate()
	if err := keyring.WriteFile(file, r2); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(ctx, st, inst1, fresh); err != nil {
		t.Errorf("after a rotation of the ring: %v", err)
	}
	r3, _ := r2.Retire(r1.Active())
	if err := keyring.WriteFile(file, r3); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Reload(); err != nil {
		t.Fatal(err)
	}
	if p, err := a.Authenticate(ctx, st, inst1, fresh); err == nil {
		t.Errorf("after its key is retired: accepted as %+v", p)
	}

	// One ends when the instance token is rotated (a session issued under
	// the new token works).
	before, _ := a.Sessions.IssueAdmin(inst1, a.Now())
	rotated := inst1
	rotated.TokenHash = HashToken("the rotated token of inst1")
	if p, err := a.Authenticate(ctx, st, rotated, before); err == nil {
		t.Errorf("after the instance token was rotated: accepted as %+v", p)
	}
	after, _ := a.Sessions.IssueAdmin(rotated, a.Now())
	if p, err := a.Authenticate(ctx, st, rotated, after); err != nil || p.Kind != InstanceAdmin {
		t.Errorf("issued under the rotated token: %+v %v", p, err)
	}
}
