package cleaner

import (
	"crypto/md5"
	"encoding/binary"
)

// offsetMap is a pass's key -> latest offset map in a fixed budget (the dedupe budget):
// open addressing over one byte slice of slots, each a key's 16-byte MD5
// digest and its offset, as Kafka's SkimpyOffsetMap. It never grows: put
// reports full instead. Two keys with one digest would share a slot; at
// 128 bits that is not a concern (Kafka makes the same bet).
type offsetMap struct {
	slots  []byte // allocated as passes need them, up to the budget
	total  int    // slots in the budget
	n      int    // slots in use this pass (reset)
	used   int
	limit  int // most keys: dedupeLoadFactor of the slots
	latest Offset
}

const dedupeLoadFactor = 0.9

// SlotBytes is what one key costs in the dedupe buffer: a 16-byte key
// digest and an 8-byte offset, as Kafka's SkimpyOffsetMap.
const SlotBytes = 24

const dedupeSlotBytes = SlotBytes

func newOffsetMap(budget int64) *offsetMap {
	n := int(budget / dedupeSlotBytes)
	return &offsetMap{total: n, latest: -1}
}

// capacity is how many keys the map holds this pass.
func (m *offsetMap) capacity() int { return m.limit }

// reset empties the map for a pass that maps at most keys keys, keeping
// its memory: it uses (and clears) only the slots that many keys need, so
// a small partition's pass does not pay for the whole budget.
func (m *offsetMap) reset(keys int64) {
	m.n = m.total
	if want := int64(float64(keys)/dedupeLoadFactor) + 1; want < int64(m.total) {
		m.n = int(want)
	}
	if need := m.n * dedupeSlotBytes; need > len(m.slots) {
		m.slots = make([]byte, need) // grows to the budget at most
	} else {
		clear(m.slots[:need])
	}
	m.limit = int(float64(m.n) * dedupeLoadFactor)
	m.used, m.latest = 0, -1
}

// find returns the slot of digest d: where it is, or the empty slot
// where it would go.
func (m *offsetMap) find(d *[md5.Size]byte) (slot int, found bool) {
	i := int(binary.BigEndian.Uint64(d[:8]) % uint64(m.n))
	for {
		s := m.slots[i*dedupeSlotBytes : i*dedupeSlotBytes+md5.Size]
		if string(s) == string(d[:]) {
			return i, true
		}
		if m.emptySlot(i) {
			return i, false
		}
		if i++; i == m.n {
			i = 0
		}
	}
}

// emptySlot reports a slot never written: offsets are stored plus one, so
// a used slot's offset field is never zero.
func (m *offsetMap) emptySlot(i int) bool {
	return binary.BigEndian.Uint64(m.slots[i*dedupeSlotBytes+md5.Size:]) == 0
}

// put maps key to off (offsets come in increasing order, so the latest
// wins). It returns false, changing nothing, when key is new and the map
// is full.
func (m *offsetMap) put(key []byte, off Offset) bool {
	d := md5.Sum(key)
	i, found := m.find(&d)
	if !found {
		if m.used >= m.limit {
			return false
		}
		m.used++
		copy(m.slots[i*dedupeSlotBytes:], d[:])
	}
	binary.BigEndian.PutUint64(m.slots[i*dedupeSlotBytes+md5.Size:], uint64(off)+1)
	m.latest = max(m.latest, off)
	return true
}

// get returns key's latest mapped offset, false when it is not mapped.
func (m *offsetMap) get(key []byte) (Offset, bool) {
	d := md5.Sum(key)
	i, found := m.find(&d)
	if !found {
		return -1, false
	}
	return Offset(binary.BigEndian.Uint64(m.slots[i*dedupeSlotBytes+md5.Size:])) - 1, true
}
