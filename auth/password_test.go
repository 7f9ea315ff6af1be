package auth

import (
	"strings"
	"testing"
)

func TestPasswordHash(t *testing.T) {
	t.Parallel()
	a := Argon2{MemoryKiB: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32} // small: the format, not the cost, is tested
	phc := a.Hash("correct horse")
	if !strings.HasPrefix(phc, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("PHC string %q", phc)
	}
	if ok, rehash := a.Verify("correct horse", phc); !ok || rehash {
		t.Errorf("Verify(right) = %v, %v; want true, false", ok, rehash)
	}
	if ok, _ := a.Verify("correct horsf", phc); ok {
		t.Error("Verify(wrong) = true")
	}
	if a.Hash("correct horse") == phc {
		t.Error("two hashes of one password are equal: no salt")
	}
	stronger := a
	stronger.Time = 2
	if ok, rehash := stronger.Verify("correct horse", phc); !ok || !rehash {
		t.Errorf("Verify with raised parameters = %v, %v; want true, true", ok, rehash)
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=64,t=1,p=1$c2FsdA$a2V5", "$argon2id$v=19$m=x$c2FsdA$a2V5", "$argon2id$v=19$m=64,t=1,p=1$!!$a2V5"} {
		if ok, _ := a.Verify("x", bad); ok {
			t.Errorf("Verify accepted malformed hash %q", bad)
		}
	}
	if d := DefaultArgon2(); d.MemoryKiB != 19456 || d.Time != 2 || d.Threads != 1 {
		t.Errorf("default parameters %+v are not OWASP's", d)
	}
}

func TestCheckPassword(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pw string
		ok bool
	}{{"1234567", false}, {"12345678", true}, {strings.Repeat("x", 1024), true}, {strings.Repeat("x", 1025), false}} {
		if err := CheckPassword(tc.pw); (err == nil) != tc.ok {
			t.Errorf("CheckPassword(%d bytes) = %v", len(tc.pw), err)
		}
	}
}

func BenchmarkArgon2idOWASP(b *testing.B) {
	a := DefaultArgon2()
	phc := a.Hash("Bench-User-Pass-1")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		a.Verify("Bench-User-Pass-1", phc)
	}
}
