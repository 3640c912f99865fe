package resolver

import (
	"errors"
	"fmt"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/storage"
)

// The read flow (doc.go "Read flow", docs/DESIGN.md "Read flow").

const (
	// minBatchBytes is the smallest possible record batch (header plus one
	// empty record); it turns a byte budget into an entry count.
	minBatchBytes = batchHeaderLen + 7
	// maxFetchEntries caps the entries one partition fetch reads.
	maxFetchEntries = 8192
)

// snapshot is step 2 for the calls that only need the bounds (Bounds,
// ListOffset, DeleteRecords): the binding with its log's log start and
// committed end (high watermark), taken fresh for every call and never
// cached (the fresh end check, no cached EOF). A Fetch takes its snapshot inside the ledger's read.
type snapshot struct {
	p    *partition
	info ledger.Snapshot
}

// snapshot takes h's snapshot in its view (a companion's is its view's,
// reads of the view), on the partition's new binding when h was replaced (the old copy's retirement).
func (h Partition) snapshot() (snapshot, error) {
	trace("snapshot")
	for attempt := 0; ; attempt++ {
		ml, err := h.readable()
		var sn ledger.Snapshot
		if err == nil {
			if sn, err = ml.SnapshotView(h.view); err != nil && h.p.isReplaced() {
				err = errRebound
			}
		}
		switch {
		case errors.Is(err, errRebound) && attempt < maxRebinds:
			if h, err = h.rebind(); err != nil {
				return snapshot{}, err
			}
			continue
		case errors.Is(err, errRebound):
			return snapshot{}, errReplaced
		case errors.Is(err, ErrUnknownTopic):
			return snapshot{}, err
		case err != nil:
			return snapshot{}, storageErr("log info", err)
		}
		return snapshot{p: h.p, info: sn}, nil
	}
}

// Fetch is Resolve then Partition.Fetch without a lease.
func (r *Resolver) Fetch(topic string, partition int32, offset Offset, maxBytes int, minOne bool, iso Isolation) (FetchResult, error) {
	return r.FetchLeased(topic, partition, offset, maxBytes, minOne, iso, nil)
}

// FetchLeased is Resolve then Partition.Fetch, for a caller with one read
// of the partition to make.
func (r *Resolver) FetchLeased(topic string, partition int32, offset Offset, maxBytes int, minOne bool, iso Isolation, lease *storage.Lease) (FetchResult, error) {
	h, err := r.Resolve(topic, partition)
	if err != nil {
		return FetchResult{}, err
	}
	return h.Fetch(offset, maxBytes, minOne, iso, lease)
}

// boundsOf is a fetch result's bounds under sn, with the last stable
// offset (the LSO).
func (p *partition) boundsOf(sn ledger.Snapshot) FetchResult {
	p.mu.Lock()
	lso := p.mu.txn.LSO(sn.Start, sn.End)
	p.mu.Unlock()
	return FetchResult{HighWatermark: sn.End, LastStable: lso, LogStart: sn.Start}
}

// abortedIn is the aborted transactions overlapping [from, to) (the read_committed bound).
func (p *partition) abortedIn(from, to Offset) []AbortedTxn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.txn.AbortedIn(from, to)
}

// belowOffset is the prefix of entries that end at or before lso: a
// transaction's first batch starts the LSO, so no entry straddles it.
func belowOffset(entries []storage.Entry, lso Offset) []storage.Entry {
	for i, e := range entries {
		if e.End() > lso {
			return entries[:i]
		}
	}
	return entries
}

// FetchEntries turns a byte budget into an entry count for ReadEntries
// (package explain plans with it too).
func FetchEntries(maxBytes int) int {
	return min(max(maxBytes/minBatchBytes, 0)+1, maxFetchEntries)
}

// limitBatches applies steps 5 and 6 to entries the ledger read under one
// snapshot (so none is at or past its end): every served entry is validated
// (fail closed: a bad one fails the partition with ErrStorage and nothing
// is served), and the byte budget holds except that with minOne the first
// batch is whole (KIP-74).
//
// Entries below viewEnd come from a compacted view (the view log): each spans from
// the end of the entry before it, so its batch may start after it.
func limitBatches(entries []storage.Entry, maxBytes int, minOne bool, viewEnd Offset) ([][]byte, int, error) {
	out, total := make([][]byte, 0, len(entries)), 0
	for i, e := range entries {
		if total+len(e.Payload) > maxBytes && (i > 0 || !minOne) {
			break
		}
		check := ValidateStored
		if e.Offset < viewEnd {
			check = validateViewed
		}
		if err := check(e); err != nil {
			return nil, 0, storageErr(fmt.Sprintf("entry at %s", e.Offset), err)
		}
		out = append(out, e.Payload)
		total += len(e.Payload)
	}
	return out, total, nil
}

// sourcesOf is where each entry's payload lies in a file (a leased read),
// nil when none was read from one.
func sourcesOf(entries []storage.Entry) []storage.FileSpan {
	var out []storage.FileSpan
	for i, e := range entries {
		if e.Src.File == nil {
			continue
		}
		if out == nil {
			out = make([]storage.FileSpan, len(entries))
		}
		out[i] = e.Src
	}
	return out
}

// Bounds is Resolve then Partition.Bounds: log start, high watermark and
// last stable offset, from a fresh snapshot.
func (r *Resolver) Bounds(topic string, partition int32) (logStart, hwm, lso Offset, err error) {
	h, err := r.Resolve(topic, partition)
	if err != nil {
		return -1, -1, -1, err
	}
	return h.Bounds()
}

// ListOffset: ts -1 latest (high watermark), -2 earliest (log start), -4
// earliest local, -5 latest tiered, -6 earliest pending upload, -3
// the first record of the batch with the largest max timestamp (tracked
// per partition, recovered on Open) that carries it, otherwise the first
// record at or after ts in the first batch whose max timestamp >= ts,
// found through the time index (O(log n)), as Kafka answers: the record's
// offset and timestamp (records.go). (-1, -1) when there is none.
func (r *Resolver) ListOffset(topic string, partition int32, ts int64) (off Offset, timestamp int64, err error) {
	h, err := r.Resolve(topic, partition)
	if err != nil {
		return -1, -1, err
	}
	return h.listOffset(ts)
}

// listOffset is ListOffset of h: its lookups go through h, resolved once.
func (h Partition) listOffset(ts int64) (off Offset, timestamp int64, err error) {
	s, err := h.snapshot()
	if err != nil {
		return -1, -1, err
	}
	switch {
	case ts == -1:
		return s.info.End, -1, nil
	case ts == -2:
		return s.info.Start, -1, nil
	case ts == -3:
		off, maxTS, err := h.maxTimestamp(s)
		if err != nil || off < 0 {
			return off, maxTS, err
		}
		return h.maxTimestampRecord(off, maxTS, s.info.Start)
	case ts == -4 || ts == -5:
		off, err := h.tieredOffset(s.p.log, s.info.Start, ts)
		return off, -1, err
	case ts == -6:
		off, err := h.pendingUploadOffset(s)
		return off, -1, err
	case ts < 0:
		return -1, -1, nil
	}
	if off, ok, err := s.p.seekPublished(ts); err != nil || ok {
		if err != nil {
			return -1, -1, err
		}
		return h.recordAtOrAfter(off, ts, s.info.Start, s.info.End)
	}
	e, err := h.r.store.SeekTime(s.p.log, ts)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return -1, -1, nil
	case err != nil:
		return -1, -1, storageErr("seek time", err)
	case e.Offset >= s.info.End:
		return -1, -1, nil // D5: not visible in this snapshot
	case e.End() <= s.info.Start:
		// The first such batch was trimmed; find the first visible one.
		off, _, err := h.scanIndex(s, func(e storage.EntryHeader) bool { return e.MaxTime >= ts })
		if err != nil || off < 0 {
			return -1, -1, err
		}
		e.Offset = off
	}
	return h.recordAtOrAfter(e.Offset, ts, s.info.Start, s.info.End)
}

// seekPublished finds ts in the published log below p's local one, in
// cluster mode (ledger R22); ok false: the local time index answers.
func (p *partition) seekPublished(ts int64) (Offset, bool, error) {
	ml, _, err := p.ledgerAndSettings()
	if err != nil {
		return 0, false, err
	}
	off, ok, err := ml.SeekPublishedTime(ts)
	if err != nil {
		return 0, false, storageErr("seek time in the published log", err)
	}
	return off, ok, nil
}

// tieredOffset answers ListOffsets -4 (KIP-405's earliest local: the
// first offset still in a local segment file, at least the log start) and
// -5 (KIP-1005's latest tiered: the last offset held by a published
// object, -1 when none is).
func (h Partition) tieredOffset(log storage.LogID, start Offset, ts int64) (Offset, error) {
	r := h.r
	info, err := r.store.Info(log)
	if err != nil {
		return -1, storageErr("info", err)
	}
	if ts == -4 {
		for _, li := range info.Ledgers {
			if !li.Offloaded {
				return max(li.FirstOffset, start), nil
			}
		}
		return info.End, nil
	}
	latest := Offset(-1)
	if r.cfg.Tier == nil {
		return latest, nil
	}
	for _, li := range info.Ledgers {
		objs, err := r.cfg.Tier.Candidates(log, li.ID)
		if err != nil {
			return -1, storageErr("object metadata", err)
		}
		for _, o := range objs {
			latest = max(latest, o.EndOffset-1)
		}
	}
	return latest, nil
}

// pendingUploadOffset answers ListOffset -6 (KIP-1023) for a topic with
// remote.storage.enable: the offset after the last one in a published
// object, or the log start while nothing is published (the next offset
// to upload; the log end once everything is). -1 for any other topic, as
// Kafka answers a topic without remote storage.
func (h Partition) pendingUploadOffset(s snapshot) (Offset, error) {
	_, set, err := s.p.ledgerAndSettings()
	if err != nil || h.r.cfg.Tier == nil || !set.Remote {
		return -1, err
	}
	latest, err := h.tieredOffset(s.p.log, s.info.Start, -5)
	if err != nil {
		return -1, err
	}
	return max(latest+1, s.info.Start), nil
}

// maxTimestamp answers ListOffset -3 from the partition's durable mark.
func (h Partition) maxTimestamp(s snapshot) (Offset, int64, error) {
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
	_, _, err := h.scanIndex(s, func(e storage.EntryHeader) bool {
		if best.Offset < 0 || e.MaxTime > best.MaxTime {
			best = e
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
func (h Partition) scanIndex(s snapshot, match func(storage.EntryHeader) bool) (Offset, int64, error) {
	from := s.info.Start
	for from < s.info.End {
		hs, err := h.r.store.IndexRange(s.p.log, from, 1024)
		if err != nil {
			return -1, -1, storageErr("index range", err)
		}
		if len(hs) == 0 {
			break
		}
		for _, e := range hs {
			if e.Offset >= s.info.End {
				return -1, -1, nil
			}
			if match(e) {
				return e.Offset, e.MaxTime, nil
			}
			from = e.End()
		}
	}
	return -1, -1, nil
}
