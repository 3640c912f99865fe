package node

import (
	"bytes"
	"testing"
)

// TestRangeCacheBound (the range cache): the cache holds at most its bound, drops
// the least recently used range first, and keeps no range larger than
// the bound.
func TestRangeCacheBound(t *testing.T) {
	c := newRangeCache(300)
	key := func(i int) rangeKey { return rangeKey{object: "o", pos: int64(i * 100), len: 100} }
	data := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 100) }
	for i := range 3 {
		c.put(key(i), data(i))
	}
	if _, ok := c.get(key(0)); !ok { // 0 is now the most recent
		t.Fatal("range 0 missing from a cache that holds 3")
	}
	c.put(key(3), data(3)) // past the bound: 1 goes
	if _, ok := c.get(key(1)); ok {
		t.Fatal("the least recently used range was kept past the bound")
	}
	for _, i := range []int{0, 2, 3} {
		if got, ok := c.get(key(i)); !ok || !bytes.Equal(got, data(i)) {
			t.Fatalf("range %d: %v", i, ok)
		}
	}
	if c.size != 300 {
		t.Fatalf("size %d, want 300", c.size)
	}
	c.put(rangeKey{object: "big"}, make([]byte, 301))
	if _, ok := c.get(rangeKey{object: "big"}); ok || c.size != 300 {
		t.Fatalf("a range larger than the cache was kept (size %d)", c.size)
	}
}
