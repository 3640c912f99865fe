package fetchsession

import "testing"

// nextEpoch wraps past MaxInt32 to 1, never to 0 (a full fetch) or -1.
func TestNextEpochWraps(t *testing.T) {
	if got := nextEpoch(1<<31 - 1); got != 1 {
		t.Fatalf("nextEpoch(max) = %d", got)
	}
	if got := nextEpoch(5); got != 6 {
		t.Fatalf("nextEpoch(5) = %d", got)
	}
}

// The fetch session cache bound with tenants: a principal holds at most its share of the slots; when
// the cache is full a principal holding fewer takes the place of the
// heaviest holder's least recently used session, never of a session of
// a principal holding as few as it does.
func TestFetchSessionsPerPrincipal(t *testing.T) {
	var c Cache
	slots := Slots{Total: 4, PerPrincipal: 3}
	parts := func() []*Part { return []*Part{{Key: Key{Topic: "t"}}} }
	for i := range 4 {
		fs := c.Create(slots, "User:mallory", false, parts())
		if (fs != nil) != (i < 3) {
			t.Fatalf("mallory's session %d: %v", i, fs)
		}
	}
	if fs := c.Create(slots, "User:alice", false, parts()); fs == nil {
		t.Fatal("alice got no session in the free slot")
	}
	// Full: alice (1) takes the place of one of mallory's (3), then
	// holds as many as mallory minus one and takes no more.
	if fs := c.Create(slots, "User:alice", false, parts()); fs == nil {
		t.Fatal("alice, holding fewer, got no session in a full cache")
	}
	if got := c.mu.byOwner; got["User:mallory"] != 2 || got["User:alice"] != 2 {
		t.Fatalf("sessions by principal %v, want 2 each", got)
	}
	if fs := c.Create(slots, "User:alice", false, parts()); fs != nil {
		t.Fatal("alice took the place of a session of a principal holding as many")
	}
	if fs := c.Create(slots, "User:mallory", false, parts()); fs != nil {
		t.Fatal("mallory took the place of a session of a principal holding as many")
	}
	if n := c.Count(); n != 4 {
		t.Fatalf("%d sessions, want 4", n)
	}
}
