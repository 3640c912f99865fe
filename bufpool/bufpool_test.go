package bufpool

import "testing"

// Every size within the classes gets a buffer of its class, at least as
// large and at most a quarter larger (64 KiB for the smallest), which Put
// takes back; sizes beyond the classes are allocated as asked.
func TestClasses(t *testing.T) {
	for _, n := range []int{1, 4096, MinPooled, MinPooled + 1, 80 << 10, 80<<10 + 1, 1000012, 1 << 20, 1<<20 + 1, MaxPooled - 1, MaxPooled} {
		c := Cap(n)
		if c < n || (n > MinPooled && 4*c > 5*n) || (n <= MinPooled && c != MinPooled) {
			t.Fatalf("Cap(%d) = %d", n, c)
		}
		b := Get(n)
		if len(b) != n || cap(b) != c {
			t.Fatalf("Get(%d): len %d cap %d, want cap %d", n, len(b), cap(b), c)
		}
		Put(b)
	}
	if c := Cap(MaxPooled + 1); c != MaxPooled+1 {
		t.Fatalf("Cap beyond the classes = %d", c)
	}
}

// The last holder returns it: a Shared buffer is held until every
// reference is released; a kept one never reaches zero; taking a
// reference to a returned buffer, or releasing it again, panics.
func TestSharedHolders(t *testing.T) {
	s := New(Get(MinPooled))
	s.Acquire()
	s.Release()
	if n := s.Holders(); n != 1 {
		t.Fatalf("%d holders, want 1", n)
	}
	s.Release()
	if n := s.Holders(); n != 0 {
		t.Fatalf("%d holders after the last release, want 0", n)
	}
	mustPanic(t, "Acquire after the last release", s.Acquire)
	k := New(Get(MinPooled))
	k.Keep()
	k.Release()
	if n := k.Holders(); n != 1 {
		t.Fatalf("a kept buffer has %d holders after its creator's release, want 1", n)
	}
	r := New(Get(MinPooled))
	r.Release()
	mustPanic(t, "a second release", r.Release)
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Fatalf("%s did not panic", what)
		}
	}()
	f()
}
