package cleaner

import (
	"fmt"
	"testing"
)

// The dedupe budget: the map holds at most 90% of budget/24 keys, never allocates past
// its budget, keeps the latest offset of each key, and refuses a new key
// when full while still updating the keys it holds.
func TestOffsetMapBudget(t *testing.T) {
	const budget = 24 * 100
	m := newOffsetMap(budget)
	m.reset(1 << 40) // a pass that could need far more than the budget
	if len(m.slots) > budget || m.capacity() != 90 {
		t.Fatalf("%d bytes, %d keys for a budget of %d", len(m.slots), m.capacity(), budget)
	}
	for i := range 90 {
		if !m.put([]byte(fmt.Sprint("k", i)), Offset(i)) {
			t.Fatalf("key %d refused below capacity", i)
		}
	}
	if m.put([]byte("one too many"), 100) {
		t.Fatal("a key past capacity was taken")
	}
	if !m.put([]byte("k7"), 200) {
		t.Fatal("a held key was refused an update when full")
	}
	if off, ok := m.get([]byte("k7")); !ok || off != 200 {
		t.Fatalf("k7 -> %d %v, want 200", off, ok)
	}
	if _, ok := m.get([]byte("one too many")); ok {
		t.Fatal("a refused key is mapped")
	}
	m.reset(10) // a small pass uses, and clears, only what it needs
	if _, ok := m.get([]byte("k7")); ok || m.capacity() != 10 {
		t.Fatalf("after reset: k7 still mapped or capacity %d", m.capacity())
	}
}
