package auth

import (
	"context"
	"errors"
	"testing"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/keyring"
)

// TestHashingIsBounded checks that a password hash waits for a free slot:
// with every slot taken, a caller whose context ends gets TIMEOUT and
// nothing is hashed; once a slot frees, hashing proceeds.
func TestHashingIsBounded(t *testing.T) {
	a := NewAccounts(keyring.Hold(keyring.Generate()))
	a.Argon2 = Argon2{MemoryKiB: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}
	phc := a.Argon2.Hash("correct horse")
	if a.HashingSlots() < 1 {
		t.Fatalf("HashingSlots() = %d, want at least 1", a.HashingSlots())
	}
	for range a.HashingSlots() {
		if err := a.acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.HashPassword(ctx, "correct horse"); !isTimeout(err) {
		t.Errorf("HashPassword with every slot taken = %v, want TIMEOUT", err)
	}
	if _, _, err := a.VerifyPassword(ctx, "correct horse", phc); !isTimeout(err) {
		t.Errorf("VerifyPassword with every slot taken = %v, want TIMEOUT", err)
	}
	if err := a.VerifyUnknown(ctx, "correct horse"); !isTimeout(err) {
		t.Errorf("VerifyUnknown with every slot taken = %v, want TIMEOUT", err)
	}

	done := make(chan bool)
	go func() {
		ok, _, err := a.VerifyPassword(context.Background(), "correct horse", phc)
		done <- ok && err == nil
	}()
	a.release() // one slot frees: the waiting verification runs
	if !<-done {
		t.Error("VerifyPassword after a slot freed: want ok")
	}
	for range a.HashingSlots() - 1 {
		a.release()
	}
	if len(a.hashing) != 0 {
		t.Errorf("%d slots still held after every hash finished", len(a.hashing))
	}
}

func isTimeout(err error) bool {
	var e *errcode.Error
	return errors.As(err, &e) && e.Code == errcode.Timeout
}
