package bufpool

import (
	"runtime"
	"testing"
)

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

// A large buffer put back is kept across garbage collections (a
// sync.Pool would have let it go) and reused by a GetWithin whose range
// takes its capacity, and by no other; the list holds at most KeptBytes.
func TestLargeKept(t *testing.T) {
	DropKept()
	b := Get(12 << 20)
	Put(b)
	runtime.GC()
	runtime.GC()
	if KeptNow() != cap(b) {
		t.Fatalf("kept %d bytes after two collections, want %d", KeptNow(), cap(b))
	}
	if c := GetWithin(10<<20, 11<<20); cap(c) == cap(b) {
		t.Fatalf("a %d-byte buffer reused outside the range asked", cap(c))
	}
	c := GetWithin(10<<20, 15<<20)
	if &c[:1][0] != &b[:1][0] || len(c) != 10<<20 {
		t.Fatalf("kept buffer not reused (len %d, cap %d)", len(c), cap(c))
	}
	if KeptNow() != 0 {
		t.Fatalf("%d bytes still kept", KeptNow())
	}
	for i := 0; i < 2*KeptBytes/MaxPooled; i++ {
		Put(make([]byte, MaxPooled))
	}
	if KeptNow() > KeptBytes {
		t.Fatalf("kept %d bytes, at most %d", KeptNow(), KeptBytes)
	}
	DropKept()
}

// A size just below LargeMin whose class is LargeMin goes through the
// kept list both ways, as Put puts its buffer there.
func TestLargeClassBoundary(t *testing.T) {
	DropKept()
	n := LargeMin - 1000
	if Cap(n) != LargeMin {
		t.Fatalf("Cap(%d) = %d", n, Cap(n))
	}
	b := Get(n)
	Put(b)
	if c := Get(n); &c[:1][0] != &b[:1][0] {
		t.Fatal("buffer of the LargeMin class not reused")
	}
	DropKept()
}
