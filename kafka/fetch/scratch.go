package fetch

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// scratch is one fetch's per-partition memory: its items, their answers
// and what each read left. A fetch drops all of it once it has answered
// (the response carries copies of the answers it keeps), so it is kept
// for the next fetch instead of collected: a session of a thousand
// partitions would otherwise allocate a few hundred kilobytes a fetch,
// most of the server's garbage under a busy consumer.
type scratch struct {
	items []Item
	parts []kmsg.FetchResponseTopicPartition
	reads []itemRead
}

// maxScratch is the most partitions a kept scratch holds room for (the
// session partition bound); a larger fetch's memory is not kept.
const maxScratch = 10000

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// getScratch returns a scratch with nothing in it.
func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// itemsFor returns n zero items.
func (s *scratch) itemsFor(n int) []Item {
	if cap(s.items) < n {
		s.items = make([]Item, n)
	}
	s.items = s.items[:n]
	return s.items
}

// readFor returns a read of n items, zero.
func (s *scratch) readFor(n int) *read {
	if cap(s.parts) < n {
		s.parts, s.reads = make([]kmsg.FetchResponseTopicPartition, n), make([]itemRead, n)
	}
	s.parts, s.reads = s.parts[:n], s.reads[:n]
	return &read{parts: s.parts, items: s.reads}
}

// release clears s, so that it holds no partition, answer or batch
// alive, and keeps it for another fetch. Only what this fetch used is
// cleared: past it everything is zero already (a fetch writes only the
// n items it asked for), so a small fetch after a large one clears
// little.
func (s *scratch) release() {
	if cap(s.items) > maxScratch || cap(s.parts) > maxScratch {
		return
	}
	clear(s.items)
	clear(s.parts)
	clear(s.reads)
	s.items, s.parts, s.reads = s.items[:0], s.parts[:0], s.reads[:0]
	scratchPool.Put(s)
}
