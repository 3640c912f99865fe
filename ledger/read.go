package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
)

// readAttempts bounds how often a read starts again after a concurrent trim
// removed what its snapshot promised (see raced).
const readAttempts = 8

// ReadEntries is the cursorless read (R1–R11, doc.go "Read contract"),
// and the one read of a partition: a Kafka fetch (resolver Fetch) and the
// producer-state replay call it, and the rule tests prove it. It takes one
// snapshot of the log in view v (V1, V2), reads under it the entries from
// the one holding from (inclusive, R2; Earliest and Latest as R4; a from
// in a gap moves forward, one below the log start reads nothing, R3) up
// to the earliest of
// the snapshot's end (R8), the entry holding maxOffset (R7, inclusive),
// maxEntries entries and maxBytes payload bytes (R9, the first entry
// always whole), crossing and skipping ledgers as the index lists them
// (R6). When a concurrent trim took what the snapshot promised it starts
// again from a fresh one. It returns the snapshot it read under with the
// entries: the caller judges its own from against it (a Kafka fetch below
// Start is out of range, and costs no read).
//
// With a lease, the payloads of entries read from the committed log's
// local segment files are lease's and say where they lie in their files
// (Entry.Src, storage ReadIndexedLeased) until the caller releases it;
// entries of the tail cache, of published objects and of a compacted view
// are read as without one.
func (m *Managed) ReadEntries(v View, from, maxOffset Offset, maxEntries, maxBytes int, lease *storage.Lease) (Snapshot, []Entry, error) {
	if maxEntries <= 0 || maxBytes < 0 { // R11
		return Snapshot{}, nil, fmt.Errorf("%w: maxEntries %d, maxBytes %d", ErrInvalid, maxEntries, maxBytes)
	}
	q := readArgs{view: v, from: from, max: maxOffset, maxEntries: maxEntries, maxBytes: int64(maxBytes), lease: lease}
	var sn Snapshot
	out, err := m.retrying(func() (out []Entry, err error) {
		sn, out, err = m.readOnce(q)
		return out, err
	})
	return sn, out, err
}

// readArgs are one ReadEntries call's arguments.
type readArgs struct {
	view       View
	from, max  Offset
	maxEntries int
	maxBytes   int64
	lease      *storage.Lease
}

// readOnce is one attempt of ReadEntries. Earliest reads from the
// snapshot's Start, under a second snapshot (R4); any other from below
// Start reads nothing (R3: the caller judges it against the snapshot);
// Latest, like any from at or past End, reads nothing (R4, R5). The
// entries stop at the one holding max (R7).
func (m *Managed) readOnce(q readArgs) (Snapshot, []Entry, error) {
	sn, out, err := m.readAt(q)
	if q.from == Earliest && err == nil && sn.Start < sn.End {
		q.from = sn.Start
		sn, out, err = m.readAt(q)
	}
	if q.max == Earliest {
		q.max = sn.Start // R7: the first available entry
	}
	return sn, upTo(out, q.max), err
}

// readAt reads q in its view from q.from as it is.
func (m *Managed) readAt(q readArgs) (Snapshot, []Entry, error) {
	if q.view == TopicCompacted {
		return m.readCompacted(q)
	}
	return m.readFrom(q)
}

// upTo is the prefix of entries starting at or before max (R7).
func upTo(entries []Entry, max Offset) []Entry {
	for i, e := range entries {
		if e.Offset > max {
			return entries[:i]
		}
	}
	return entries
}

// readFrom reads the committed log (V1). With a lease, entries read from
// local segment files are leased (storage ReadIndexedLeased): their
// payloads are the lease's and say where they lie in their files.
func (m *Managed) readFrom(q readArgs) (Snapshot, []Entry, error) {
	// Steps 2–4 of the Committed view (V1; a TopicCompacted read reads
	// the compacted view, V2, and falls back to this for the tail past
	// it): every durable entry below the snapshot's end. One storage
	// snapshot fixes the bounds and, under it, the entries from the one
	// holding from; storage stops them at that snapshot's end (R8, D5),
	// the one place a read's end is enforced.
	b, hdrs, err := m.store.Headers(m.log, q.from, q.maxEntries, q.maxBytes)
	if err != nil {
		return Snapshot{}, nil, m.storeReadErr(err)
	}
	sn := Snapshot{Start: b.Start, End: b.End}
	if b.State == storage.Fenced { // R11
		return sn, nil, ErrFenced
	}
	if q.from < b.Start && m.hasPublished() {
		return m.readPublished(sn, q.from, q.maxEntries, q.maxBytes) // R20
	}
	sn = m.publishedStart(sn) // R20: the log starts where the published one does
	max := q.max
	if max == Earliest {
		max = sn.Start // R7: the first available entry
	}
	for i, h := range hdrs {
		if h.Offset > max { // R7: no payload past max is read
			hdrs = hdrs[:i]
			break
		}
	}
	out, err := m.fetch(hdrs, q.lease) // step 5
	if err != nil && len(out) > 0 {
		err = nil // R10
	}
	return sn, out, err
}

// retrying runs read attempts: each checks the ledger's state first
// (R11), and an attempt that lost a race with a trim (raced) is followed
// by another, from a fresh snapshot, at most readAttempts in all.
func (m *Managed) retrying(attempt func() ([]Entry, error)) ([]Entry, error) {
	for n := 1; ; n++ {
		if err := m.readableErr(); err != nil { // R11
			return nil, err
		}
		out, err := attempt()
		if err == nil || n == readAttempts || !raced(err) {
			return out, err
		}
		m.readRetries.Add(1)
	}
}

// raced reports an error a concurrent trim can cause after a read's
// snapshot: the ledger was removed (storage.ErrRemoved: its file went
// before the read pinned it), the start was soft-trimmed
// (storage.ErrTrimmed), an offloaded file went or a published object or
// range turned stale. Such a read, having collected nothing, starts again
// from a fresh snapshot; its start then normalizes forward (R3), or, by
// offset, falls below the new Start.
func raced(err error) bool {
	return errors.Is(err, storage.ErrRemoved) || errors.Is(err, storage.ErrTrimmed) ||
		errors.Is(err, storage.ErrOffloaded) || errors.Is(err, tier.ErrStale) ||
		errors.Is(err, ErrStale)
}

// storeReadErr maps an error of the store's read snapshot (R11: a closed
// store reads as a closed ledger).
func (m *Managed) storeReadErr(err error) error {
	if errors.Is(err, storage.ErrClosed) {
		return fmt.Errorf("%w: %w", errFencedClosed, err)
	}
	return wrapStorageErr("read", m.log, err)
}

// A target holds the payloads of a ledger's entries (read flow step 5).
// A ledger's candidates (candidatesOf) are its local segment file while
// it has one, then its published objects in the object tier (tier),
// best first; the ReadTargetDispatcher picks the reader of each by its
// kind.
type target interface {
	read(c candidate, hdrs []storage.EntryHeader) ([]Entry, error)
}

// targetKind is a candidate's type of target.
type targetKind uint8

const (
	localSegment   targetKind = iota // the ledger's segment file, through storage
	objectStore                      // a published object, through the tier
	publishedRange                   // a range of a cluster's published log, below the local log (R20)
)

func (k targetKind) String() string {
	switch k {
	case objectStore:
		return "object"
	case publishedRange:
		return "published"
	}
	return "local"
}

// candidate is one place a ledger's payloads may be read from.
type candidate struct {
	kind   targetKind
	lease  *storage.Lease   // localSegment: read leased (storage ReadIndexedLeased), nil: not
	object tier.Object      // objectStore: the record as listed (revalidated after the pin)
	rngs   []PublishedRange // publishedRange: the ranges as listed (revalidated by the pin)
}

// ReadTargetDispatcher picks the reader of a candidate by its kind.
type ReadTargetDispatcher struct {
	local  target
	object target // nil without an object tier
	// published reads offsets below the local log from a cluster's
	// published ranges (R20); nil without one. A range target reads by
	// offsets, not by the local index's headers: nothing of it is local.
	published atomic.Pointer[publishedTarget]
}

// rangeTarget holds the payloads of published ranges: it reads a
// candidate's ranges, pinned together, into their entries.
type rangeTarget interface {
	readRanges(c candidate) ([][]Entry, error)
}

func (d *ReadTargetDispatcher) pickRange(c candidate) rangeTarget {
	if c.kind != publishedRange {
		panic("ledger: range read of a " + c.kind.String() + " candidate")
	}
	return d.published.Load()
}

func (d *ReadTargetDispatcher) pick(c candidate) target {
	if c.kind == objectStore {
		return d.object
	}
	return d.local
}

// segments reads local segment files through storage, which pins each
// file while it reads from it (so a concurrent hard trim cannot remove it
// under the read, storage I6) and checks every frame's CRC. An entry in
// the tail cache is served from memory and needs no pin.
type segments struct {
	store *storage.Store
	log   LogID
}

func (s *segments) read(c candidate, hdrs []storage.EntryHeader) ([]Entry, error) {
	return s.store.ReadIndexedLeased(s.log, hdrs, c.lease)
}

// objects reads published objects through the tier, which pins the
// object with a durable lease record, revalidates the candidate, and
// checks every frame (tier B5, B7). The pin is the only write of
// such a read, and it is no cursor (R1).
type objects struct{ tier *tier.Tier }

func (o *objects) read(c candidate, hdrs []storage.EntryHeader) ([]Entry, error) {
	return o.tier.Read(context.Background(), c.object, hdrs)
}

// targetOf reads the entries hdrs, all of ledger led, from its best
// candidate: the local file while there is one; else each published
// object in turn, moving to the next when one turned stale between being
// listed and pinned. No candidate left is a lost race with retention
// (the ledger went): the read starts again from a fresh snapshot.
func (m *Managed) targetOf(led LedgerID, hdrs []storage.EntryHeader, lease *storage.Lease) ([]Entry, error) {
	d := &m.dispatch
	if m.tier == nil || m.store.HasLocal(m.log, led) {
		local := candidate{kind: localSegment, lease: lease}
		es, err := d.pick(local).read(local, hdrs)
		if m.tier == nil || len(es) > 0 || !errors.Is(err, storage.ErrOffloaded) {
			return es, err
		}
	}
	cands, err := m.objectCandidates(led)
	if err != nil {
		return nil, err
	}
	last := fmt.Errorf("%w: %v %v: no local file and no published object", storage.ErrRemoved, m.log, led)
	for _, c := range cands {
		es, err := d.pick(c).read(c, hdrs)
		if errors.Is(err, tier.ErrStale) && len(es) == 0 {
			last = err
			continue
		}
		return es, err
	}
	return nil, last
}

// objectCandidates lists ledger led's published objects, best first.
func (m *Managed) objectCandidates(led LedgerID) ([]candidate, error) {
	objs, err := m.tier.Candidates(m.log, led)
	if err != nil {
		return nil, err
	}
	out := make([]candidate, len(objs))
	for i, o := range objs {
		out[i] = candidate{kind: objectStore, object: o}
	}
	return out, nil
}

// fetch reads planned entries from their targets, in order, one run of
// entries of the same ledger per call. On an error it returns the
// entries read before it with the error (the callers apply R10).
func (m *Managed) fetch(hdrs []storage.EntryHeader, lease *storage.Lease) ([]Entry, error) {
	var out []Entry
	for len(hdrs) > 0 {
		led, n := hdrs[0].Ledger, 1
		for n < len(hdrs) && hdrs[n].Ledger == led {
			n++
		}
		es, err := m.targetOf(led, hdrs[:n], lease)
		if out == nil {
			out = es
		} else {
			out = append(out, es...)
		}
		if err != nil {
			return out, wrapStorageErr("read", m.log, err)
		}
		hdrs = hdrs[n:]
	}
	return out, nil
}
