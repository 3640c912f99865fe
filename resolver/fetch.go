package resolver

import (
	"errors"
	"fmt"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/storage"
)

// The read flow (doc.go, DESIGN.md "Resolver (read flow)").

const (
	// maxSnapshotAttempts bounds the retries when a snapshot stops holding
	// between the position lookup and the read (step 4 revalidation).
	maxSnapshotAttempts = 8
	// minBatchBytes is the smallest possible record batch (header plus one
	// empty record); it turns a byte budget into an entry count.
	minBatchBytes = batchHeaderLen + 7
	// maxFetchEntries caps the entries one partition fetch reads.
	maxFetchEntries = 8192
)

// snapshot is step 2: the binding, committed end (high watermark), trim
// offset (log start) and the ledger, read together. It is taken fresh for
// every attempt and never cached (S3, S4). The metadata version is the
// identity of p and ml: a deleted and recreated topic, or a reopened
// ledger, is a different binding.
type snapshot struct {
	p    *partition
	ml   *ledger.Managed
	info storage.LogInfo
}

func (s snapshot) bounds() FetchResult {
	// No transactions: the last stable offset is the high watermark.
	return FetchResult{HighWatermark: s.info.End, LastStable: s.info.End, LogStart: s.info.Start}
}

func (r *Resolver) takeSnapshot(topic string, idx int32) (snapshot, error) {
	p, err := r.partition(topic, idx) // step 1
	if err != nil {
		return snapshot{}, err
	}
	p.mu.Lock()
	ml, deleted := p.mu.ml, p.mu.deleted
	p.mu.Unlock()
	if deleted {
		return snapshot{}, ErrUnknownTopic
	}
	info, err := r.store.Info(p.log)
	if err != nil {
		return snapshot{}, storageErr("log info", err)
	}
	return snapshot{p: p, ml: ml, info: info}, nil
}

// holds revalidates s (step 4): same binding, same ledger, same trim
// offset. The end may have moved; s's end still bounds the read.
func (r *Resolver) holds(s snapshot) bool {
	fresh, err := r.takeSnapshot(s.p.topic, s.p.index)
	return err == nil && fresh.p == s.p && fresh.ml == s.ml && fresh.info.Start == s.info.Start
}

// Fetch reads from offset under one snapshot (S1–S4). With minOne the first
// batch is returned whole even past maxBytes (KIP-74). Isolation
// ReadCommitted reads up to the last stable offset, which equals the high
// watermark because there are no transactions. The bounds are set on the
// result also when the error is ErrOffsetOutOfRange or ErrStorage.
func (r *Resolver) Fetch(topic string, partition int32, offset Offset, maxBytes int, iso Isolation, minOne bool) (FetchResult, error) {
	_ = iso // LSO == HWM: both isolation levels read up to the same end.
	var res FetchResult
	for range maxSnapshotAttempts {
		s, err := r.takeSnapshot(topic, partition)
		if err != nil {
			return FetchResult{}, err
		}
		var retry bool
		res, retry, err = r.fetchOnce(s, offset, maxBytes, minOne)
		if !retry {
			return res, err
		}
	}
	return res, fmt.Errorf("%w: snapshot of %s/%d kept changing", ErrStorage, topic, partition)
}

// fetchOnce runs steps 2–6 under snapshot s; retry reports that s stopped
// holding and the read must start again from a fresh snapshot.
func (r *Resolver) fetchOnce(s snapshot, offset Offset, maxBytes int, minOne bool) (_ FetchResult, retry bool, _ error) {
	res := s.bounds()
	switch end := s.info.End; {
	case offset < s.info.Start: // S1: trimmed
		return res, false, fmt.Errorf("%w: %s is below log start %s", ErrOffsetOutOfRange, offset, s.info.Start)
	case offset == end: // S2: nothing yet; a long poll waits on Watch
		return res, false, nil
	case offset > end: // S3: s is fresh (taken after the request arrived)
		return res, false, fmt.Errorf("%w: %s is beyond the end %s", ErrOffsetOutOfRange, offset, end)
	}
	// Step 4: offset -> position (floor: the entry holding offset), and the
	// entry holding end-1 as maxPosition (R7 inclusive), so nothing at or
	// past the snapshot's end is read (D5).
	from, err := s.ml.PositionOf(offset)
	if err != nil {
		return res, !r.holds(s), storageErr("position of "+offset.String(), err)
	}
	last, err := s.ml.PositionOf(s.info.End - 1)
	if err != nil {
		return res, !r.holds(s), storageErr("position of end", err)
	}
	release, err := r.store.Pin(s.p.log, ledgersIn(s.info.Ledgers, from.Ledger, last.Ledger)...)
	if err != nil {
		return res, errors.Is(err, storage.ErrRemoved) || !r.holds(s), storageErr("pin", err)
	}
	defer release()
	if !r.holds(s) {
		return res, true, nil
	}
	entries, err := s.ml.ReadEntries(from, fetchEntries(maxBytes), max(maxBytes, 1), last)
	if err != nil {
		return res, !r.holds(s), storageErr("read", err)
	}
	res.Batches, res.Bytes, err = limitBatches(entries, s.info.End, maxBytes, minOne)
	return res, false, err
}

// fetchEntries turns a byte budget into an entry count for ReadEntries.
func fetchEntries(maxBytes int) int {
	return min(max(maxBytes/minBatchBytes, 0)+1, maxFetchEntries)
}

// ledgersIn lists the snapshot's ledgers in [first, last]: the ones the
// read may touch, to pin.
func ledgersIn(ls []storage.LedgerInfo, first, last storage.LedgerID) []storage.LedgerID {
	var out []storage.LedgerID
	for _, l := range ls {
		if l.ID >= first && l.ID <= last {
			out = append(out, l.ID)
		}
	}
	return out
}

// limitBatches applies steps 5 and 6: every served entry is validated
// (fail closed: a bad one fails the partition with ErrStorage and nothing
// is served), and the byte budget holds except that with minOne the first
// batch is whole (KIP-74).
func limitBatches(entries []storage.Entry, end Offset, maxBytes int, minOne bool) ([][]byte, int, error) {
	var (
		out   [][]byte
		total int
	)
	for i, e := range entries {
		if e.Offset >= end {
			break // D5: never past the snapshot's committed end
		}
		if total+len(e.Payload) > maxBytes && (i > 0 || !minOne) {
			break
		}
		if err := validateStored(e); err != nil {
			return nil, 0, storageErr(fmt.Sprintf("entry at %s", e.Offset), err)
		}
		out = append(out, e.Payload)
		total += len(e.Payload)
	}
	return out, total, nil
}

// Bounds returns log start, high watermark and last stable offset, from a
// fresh snapshot.
func (r *Resolver) Bounds(topic string, partition int32) (logStart, hwm, lso Offset, err error) {
	s, err := r.takeSnapshot(topic, partition)
	if err != nil {
		return -1, -1, -1, err
	}
	return s.info.Start, s.info.End, s.info.End, nil
}

// ListOffset: ts -1 latest (high watermark), -2 earliest (log start), -3
// the first record of the batch with the largest max timestamp (tracked
// per partition, recovered on Open) that carries it, otherwise the first
// record at or after ts in the first batch whose max timestamp >= ts,
// found through the time index (O(log n)), as Kafka answers: the record's
// offset and timestamp (records.go). (-1, -1) when there is none.
func (r *Resolver) ListOffset(topic string, partition int32, ts int64) (off Offset, timestamp int64, err error) {
	s, err := r.takeSnapshot(topic, partition)
	if err != nil {
		return -1, -1, err
	}
	switch {
	case ts == -1:
		return s.info.End, -1, nil
	case ts == -2:
		return s.info.Start, -1, nil
	case ts == -3:
		off, maxTS, err := r.maxTimestamp(s)
		if err != nil || off < 0 {
			return off, maxTS, err
		}
		return r.maxTimestampRecord(topic, partition, off, maxTS, s.info.Start)
	case ts < 0:
		return -1, -1, nil
	}
	h, err := r.store.SeekTime(s.p.log, ts)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return -1, -1, nil
	case err != nil:
		return -1, -1, storageErr("seek time", err)
	case h.Offset >= s.info.End:
		return -1, -1, nil // D5: not visible in this snapshot
	case h.End() <= s.info.Start:
		// The first such batch was trimmed; find the first visible one.
		off, _, err := r.scanIndex(s, func(h storage.EntryHeader) bool { return h.MaxTime >= ts })
		if err != nil || off < 0 {
			return -1, -1, err
		}
		h.Offset = off
	}
	return r.recordAtOrAfter(topic, partition, h.Offset, ts, s.info.Start, s.info.End)
}

// maxTimestamp answers ListOffset -3 from the partition's durable mark.
func (r *Resolver) maxTimestamp(s snapshot) (Offset, int64, error) {
	s.p.mu.Lock()
	m := s.p.mu.maxTS
	s.p.mu.Unlock()
	switch {
	case m.Offset < 0 || s.info.End == s.info.Start:
		return -1, -1, nil
	case m.Offset >= s.info.Start:
		return m.Offset, m.TS, nil
	}
	// The batch carrying the max was trimmed: scan the index headers of
	// what is left (no payloads; only after a trim).
	best := storage.EntryHeader{Offset: -1, MaxTime: -1}
	_, _, err := r.scanIndex(s, func(h storage.EntryHeader) bool {
		if best.Offset < 0 || h.MaxTime > best.MaxTime {
			best = h
		}
		return false
	})
	if err != nil || best.Offset < 0 {
		return -1, -1, err
	}
	return best.Offset, best.MaxTime, nil
}

// scanIndex walks the index headers of the snapshot's visible entries and
// returns the first for which match is true, (-1, -1) if none.
func (r *Resolver) scanIndex(s snapshot, match func(storage.EntryHeader) bool) (Offset, int64, error) {
	from := s.info.Start
	for from < s.info.End {
		hs, err := r.store.IndexRange(s.p.log, from, 1024)
		if err != nil {
			return -1, -1, storageErr("index range", err)
		}
		if len(hs) == 0 {
			break
		}
		for _, h := range hs {
			if h.Offset >= s.info.End {
				return -1, -1, nil
			}
			if match(h) {
				return h.Offset, h.MaxTime, nil
			}
			from = h.End()
		}
	}
	return -1, -1, nil
}
