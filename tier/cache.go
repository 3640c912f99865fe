package tier

import (
	"container/list"
	"sync"
)

// chunkCache keeps fetched chunks of objects under one byte budget, least
// recently used first out, and the last chunk each object was read at
// (to spot sequential readers, whose next chunk is prefetched).
type chunkCache struct {
	limit int64
	mu    sync.Mutex
	used  int64
	lru   *list.List // of *chunk, most recent at the front
	byKey map[chunkID]*list.Element
	last  map[string]int64 // object key -> chunk read last
	fly   map[chunkID]*flight
	// drops counts dropObject calls per object: a fetch that began
	// before a drop must not put its (maybe bad) bytes back after it.
	drops map[string]uint64
}

type chunkID struct {
	key string
	n   int64
}

type chunk struct {
	id   chunkID
	data []byte
}

// flight is one fetch of a chunk in progress; others wanting the same
// chunk wait for it.
type flight struct {
	drops uint64 // the object's drop count when the fetch began
	done  chan struct{}
	data  []byte
	err   error
}

func newChunkCache(limit int64) *chunkCache {
	return &chunkCache{limit: limit, lru: list.New(), byKey: make(map[chunkID]*list.Element),
		last: make(map[string]int64), fly: make(map[chunkID]*flight), drops: make(map[string]uint64)}
}

func (c *chunkCache) get(id chunkID) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[id]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*chunk).data, true
}

func (c *chunkCache) has(id chunkID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.byKey[id]
	_, flying := c.fly[id]
	return ok || flying
}

func (c *chunkCache) put(id chunkID, f *flight) {
	data := f.data
	if c.limit <= 0 || int64(len(data)) > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[id]; ok || c.drops[id.key] != f.drops {
		return
	}
	c.byKey[id] = c.lru.PushFront(&chunk{id: id, data: data})
	c.used += int64(len(data))
	for c.used > c.limit {
		e := c.lru.Back()
		ch := e.Value.(*chunk)
		c.lru.Remove(e)
		delete(c.byKey, ch.id)
		c.used -= int64(len(ch.data))
	}
}

// dropObject forgets every chunk of key (a corrupt object, B7).
func (c *chunkCache) dropObject(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.lru.Front(); e != nil; {
		next := e.Next()
		if ch := e.Value.(*chunk); ch.id.key == key {
			c.lru.Remove(e)
			delete(c.byKey, ch.id)
			c.used -= int64(len(ch.data))
		}
		e = next
	}
	delete(c.last, key)
	c.drops[key]++
	if len(c.drops) > 4096 {
		clear(c.drops) // bounded; a stale fetch may then be kept, and is checked when read
	}
}

// touched records that key was read at chunk n and reports whether the
// read follows the previous one (the same or the next chunk).
func (c *chunkCache) touched(key string, n int64) (sequential bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev, ok := c.last[key]
	c.last[key] = n
	if len(c.last) > 4096 {
		clear(c.last) // bounded: forgetting only costs a prefetch
	}
	return ok && (prev == n || prev == n-1)
}

// epoch is key's drop count now: a read takes it when it begins, and
// what it fetches is cached only if no drop came after (put).
func (c *chunkCache) epoch(key string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drops[key]
}

// join returns the flight fetching id, starting one (leader true) if
// none, for a read that began at epoch.
func (c *chunkCache) join(id chunkID, epoch uint64) (f *flight, leader bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.fly[id]; ok {
		return f, false
	}
	f = &flight{done: make(chan struct{}), drops: epoch}
	c.fly[id] = f
	return f, true
}

func (c *chunkCache) land(id chunkID, f *flight) {
	c.mu.Lock()
	delete(c.fly, id)
	c.mu.Unlock()
	close(f.done)
}
