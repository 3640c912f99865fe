package node

import (
	"container/list"
	"sync"
)

// rangeCache keeps the bytes of recently read published ranges, checked
// when read (checked range reads), up to a byte bound, least recently used out
// first (the range cache). A range's bytes never change (objects are immutable, and
// the bytes an offset reads never change, merges keep the bytes), so a hit needs
// no object read and so no pin: a consumer catching up through a large
// merged range reads it from the object store once, not once per fetch.
type rangeCache struct {
	mu    sync.Mutex
	max   int64
	size  int64
	order *list.List // of *rangeEntry, most recent first
	byKey map[rangeKey]*list.Element
}

// rangeKey names a range's bytes: an object's byte range and their
// SHA-256.
type rangeKey struct {
	object   string
	pos, len int64
	sha256   [32]byte
}

type rangeEntry struct {
	key  rangeKey
	data []byte
}

func newRangeCache(max int64) *rangeCache {
	return &rangeCache{max: max, order: list.New(), byKey: map[rangeKey]*list.Element{}}
}

func (c *rangeCache) get(k rangeKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*rangeEntry).data, true
}

// put adds checked bytes; a range larger than the whole cache is not
// kept.
func (c *rangeCache) put(k rangeKey, data []byte) {
	n := int64(len(data))
	if n > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[k]; ok {
		return
	}
	c.byKey[k] = c.order.PushFront(&rangeEntry{key: k, data: data})
	c.size += n
	for c.size > c.max {
		e := c.order.Back()
		re := e.Value.(*rangeEntry)
		c.order.Remove(e)
		delete(c.byKey, re.key)
		c.size -= int64(len(re.data))
	}
}
