package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// The time index (doc.go "Keyspace", t|log|runmax|offset) is sparse, as
// Kafka's is: an entry that raises its log's running max timestamp gets
// a time key only when it is the first to raise it since Open, or when
// at least timeKeyEvery offsets lie between it and the newest entry
// keyed before it. On a small-batch workload nearly every entry raises
// the max, and one time key per entry was as many pebble keys as the
// entry index itself. So an entry that raised the max without a key
// lies less than timeKeyEvery offsets past a keyed entry whose key is
// the newest one below it; SeekTime, recovery and HardTrim scan that
// many offsets of the entry index past a key to find such raises.
const timeKeyEvery = 64

// timeKeyDue says whether an entry at off that raises its log's running
// max gets a time key, given the newest keyed entry written since Open
// (keyed, keyAt).
func timeKeyDue(keyed bool, keyAt, off Offset) bool {
	return !keyed || off-keyAt >= timeKeyEvery
}

// timeKeyOffset is the entry offset a time key names.
func timeKeyOffset(k []byte) Offset { return Offset(binary.BigEndian.Uint64(k[len(k)-8:])) }

// timeKeyMax is the running max a time key records.
func timeKeyMax(k []byte) int64 { return int64(binary.BigEndian.Uint64(k[9:]) ^ (1 << 63)) }

// scanUnkeyed calls visit with each entry-index record at an offset in
// (keyAt, min(keyAt+timeKeyEvery, limit)), in offset order, until visit
// returns false: the entries that may have raised the running max past
// the time key at keyAt without a key of their own.
func (s *Store) scanUnkeyed(id LogID, keyAt, limit Offset, visit func(EntryHeader) bool) error {
	hi := min(keyAt+timeKeyEvery, limit)
	if hi <= keyAt+1 {
		return nil
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: indexKey(id, keyAt+1), UpperBound: indexKey(id, hi)})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		h, err := decodeIndex(it.Key(), it.Value())
		if err != nil {
			return err
		}
		if !visit(h) {
			break
		}
	}
	return it.Error()
}

// SeekTime returns the first entry whose running max timestamp is >= ts,
// through the time index (O(log n)) and at most timeKeyEvery offsets of
// the entry index; ErrNotFound when there is none.
func (s *Store) SeekTime(id LogID, ts int64) (EntryHeader, error) {
	l, sn, err := s.readLog(id)
	if err != nil {
		return EntryHeader{}, err
	}
	defer s.closeMu.RUnlock()
	off, found, err := s.seekTimeKeys(id, sn, ts)
	if err != nil {
		return EntryHeader{}, err
	}
	if !found || off >= sn.end || sn.start >= sn.end {
		return EntryHeader{}, fmt.Errorf("%w: %v: no timestamp >= %d", ErrNotFound, id, ts)
	}
	// The running max only grows, so when the hit is trimmed away the first
	// visible entry's running max is >= ts as well.
	if off < sn.start {
		off = sn.start
	}
	var out EntryHeader
	err = s.scanIndex(l, sn, off, func(h EntryHeader) bool { out = h; return false })
	return out, err
}

// seekTimeKeys finds the offset of the first entry whose running max is
// >= ts: the first time key at or above ts, unless an entry between the
// key below it and that one raised the max to ts without a key (found
// by scanning past the key below, up to the durable end).
func (s *Store) seekTimeKeys(id LogID, sn snapshot, ts int64) (off Offset, found bool, err error) {
	lo, hi := logPrefixRange(prefixTime, id)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, false, err
	}
	defer it.Close()
	probes := 1
	defer func() { s.probed(probes) }()
	limit := sn.end
	var below bool
	if it.SeekGE(timeKey(id, ts, 0)) {
		off, found = timeKeyOffset(it.Key()), true
		limit = min(limit, off)
		below = it.Prev()
	} else {
		below = it.Last()
	}
	if err := it.Error(); err != nil || !below {
		return off, found, err
	}
	probes++
	err = s.scanUnkeyed(id, timeKeyOffset(it.Key()), limit, func(h EntryHeader) bool {
		if h.MaxTime >= ts {
			off, found = h.Offset, true
			return false
		}
		return true
	})
	return off, found, err
}

// recoverRunMax is the running max of a log whose newest time key is k:
// its own, or that of an entry past it that raised the max without a key.
func (s *Store) recoverRunMax(id LogID, k []byte) (int64, error) {
	runMax := timeKeyMax(k)
	err := s.scanUnkeyed(id, timeKeyOffset(k), timeKeyOffset(k)+timeKeyEvery, func(h EntryHeader) bool {
		runMax = max(runMax, h.MaxTime)
		return true
	})
	return runMax, err
}

// trimTimeIndex deletes the time-index keys of entries below off but the
// last of them. The running max only grows with the offset, so those keys
// are a prefix of the log's time index; the last one stays because it
// carries the running max at off: SeekTime finds it for any ts up to that
// max and clamps it to the log start, which is then correct. An entry
// below off that raised the max past that key without a key of its own
// (timeKeyEvery) gets one here in its place, the highest such, before
// its index record goes with the trim: the last key below off then holds
// the running max at off.
func (s *Store) trimTimeIndex(b *pebble.Batch, id LogID, off Offset) error {
	lo, hi := logPrefixRange(prefixTime, id)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return fmt.Errorf("storage: %v: hard trim: %w", id, err)
	}
	defer it.Close()
	var last []byte
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if timeKeyOffset(k) >= off {
			break
		}
		last = append(last[:0], k...)
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("storage: %v: hard trim: %w", id, err)
	}
	if last == nil {
		return nil
	}
	_ = b.DeleteRange(lo, last, nil)
	runMax, at := timeKeyMax(last), timeKeyOffset(last)
	err = s.scanUnkeyed(id, at, off, func(h EntryHeader) bool {
		if h.MaxTime > runMax {
			runMax, at = h.MaxTime, h.Offset
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("storage: %v: hard trim: %w", id, err)
	}
	if at != timeKeyOffset(last) {
		_ = b.Delete(last, nil)
		_ = b.Set(timeKey(id, runMax, at), nil, nil)
	}
	return nil
}
