package ledger

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/storage/tier"
)

// readAttempts bounds how often a read starts again after a concurrent trim
// removed what its snapshot promised (see raced).
const readAttempts = 8

// indexChunk is how many index entries a read fetches at a time, so a
// small maxBytes does not pull a huge index range.
const indexChunk = 256

// ReadFrom is the read by offset, a Kafka fetch's read of one partition
// (the read flow's steps 2–5): the one place a partition read takes its
// snapshot, reads under it and, when a concurrent trim took what the
// snapshot promised, starts again from a fresh one. It returns the
// snapshot it read under, and the entries in offset order from the one
// holding from, up to the snapshot's end, maxEntries entries and maxBytes
// payload bytes (the first entry always whole, as R9). A from outside
// [Start, End) reads nothing and is no error: the caller judges it against
// the snapshot. R1, R10 and R11 hold as for ReadEntries.
func (m *Managed) ReadFrom(from Offset, maxEntries, maxBytes int) (Snapshot, []Entry, error) {
	if maxEntries <= 0 || maxBytes < 0 { // R11
		return Snapshot{}, nil, fmt.Errorf("%w: maxEntries %d, maxBytes %d", ErrInvalid, maxEntries, maxBytes)
	}
	var sn Snapshot
	out, err := m.retrying(func() (out []Entry, err error) {
		sn, out, err = m.readFrom(from, maxEntries, int64(maxBytes), nil)
		return out, err
	})
	return sn, out, err
}

// readFrom is one attempt of ReadFrom. With a lease, entries read from
// local segment files are leased (storage ReadIndexedLeased): their
// payloads are the lease's and say where they lie in their files.
func (m *Managed) readFrom(from Offset, maxEntries int, maxBytes int64, lease *storage.Lease) (Snapshot, []Entry, error) {
	// Steps 2–4 of the Committed view (V1; ReadView reads the compacted
	// view, V2, and falls back to this for the tail past it): every
	// durable entry below the snapshot's end. One
	// storage snapshot fixes the bounds and, under it, the entries from
	// the one holding from; storage stops them at that snapshot's end (R8,
	// D5), the one place a read's end is enforced.
	b, hdrs, err := m.store.Headers(m.log, from, maxEntries, maxBytes)
	if err != nil {
		return Snapshot{}, nil, m.storeReadErr(err)
	}
	sn := Snapshot{Start: b.Start, End: b.End}
	if b.State == storage.Fenced { // R11
		return sn, nil, ErrFenced
	}
	if from < b.Start && m.hasPublished() {
		return m.readPublished(sn, from, maxEntries, maxBytes) // R20
	}
	sn = m.publishedStart(sn)        // R20: the log starts where the published one does
	out, err := m.fetch(hdrs, lease) // step 5
	if err != nil && len(out) > 0 {
		err = nil // R10
	}
	return sn, out, err
}

// ReadEntries is the cursorless read, R1–R11 (doc.go). It returns entries
// in position order from the normalized start up to the earliest of
// maxPosition, the last confirmed entry when the call began, maxEntries
// entries and maxBytes payload bytes. The result belongs to the caller.
func (m *Managed) ReadEntries(start Position, maxEntries, maxBytes int, maxPosition Position) ([]Entry, error) {
	if maxEntries <= 0 || maxBytes < 0 { // R11
		return nil, fmt.Errorf("%w: maxEntries %d, maxBytes %d", ErrInvalid, maxEntries, maxBytes)
	}
	return m.retrying(func() ([]Entry, error) {
		return m.readOnce(start, maxEntries, int64(maxBytes), maxPosition)
	})
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
// (storage.ErrTrimmed), or the index entries went with a hard trim
// (errIndexMismatch). Such a read, having collected nothing, starts again
// from a fresh snapshot; its start then normalizes forward (R3), or, by
// offset, falls below the new Start.
func raced(err error) bool {
	return errors.Is(err, storage.ErrRemoved) || errors.Is(err, storage.ErrTrimmed) ||
		errors.Is(err, errIndexMismatch) || errors.Is(err, storage.ErrOffloaded) || errors.Is(err, tier.ErrStale) ||
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
// it has one, then its published objects in the object tier (storage/tier),
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
// checks every frame (storage/tier B5, B7). The pin is the only write of
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

// span is the part of one ledger a read covers: entries [from, to].
type span struct {
	ledger   storage.LedgerInfo
	from, to EntryID
}

// readOnce is one attempt of ReadEntries: snapshot, normalize, read.
func (m *Managed) readOnce(start Position, maxEntries int, maxBytes int64, maxPosition Position) ([]Entry, error) {
	// R8: one snapshot fixes the last confirmed entry for the whole call.
	info, err := m.store.Info(m.log)
	if err != nil {
		return nil, m.storeReadErr(err)
	}
	if info.State == storage.Fenced { // R11
		return nil, ErrFenced
	}
	if start == Latest { // R4: after the last confirmed entry
		return nil, nil
	}
	first, last, ok, err := m.boundsOf(info)
	if err != nil || !ok { // nothing readable: R4, R5 on an empty ledger
		return nil, err
	}
	from, ok := first, true
	if start != Earliest { // R4: Earliest is the first available entry
		from, ok = normalize(info.Ledgers, start) // R2, R3, R6
		if from.Less(first) {
			from = first // soft-trimmed entries are not available
		}
	}
	if !ok || last.Less(from) { // R5
		return nil, nil
	}
	end := last // R8
	if maxPosition == Earliest {
		maxPosition = first
	}
	if maxPosition.Less(end) {
		end = maxPosition // R7: inclusive
	}
	if end.Less(from) { // R7: a maxPosition before the start reads nothing
		return nil, nil
	}
	return m.readSpans(spansOf(info.Ledgers, from, end, maxEntries), maxEntries, maxBytes)
}

// boundsOf returns the first available and the last confirmed entry of
// info; ok is false when no entry is readable.
func (m *Managed) boundsOf(info storage.LogInfo) (first, last Position, ok bool, err error) {
	last, ok = lastConfirmedOf(info.Ledgers)
	if !ok || info.Start >= info.End {
		return Position{}, Position{}, false, nil
	}
	i := 0
	for info.Ledgers[i].Entries == 0 { // ends: lastConfirmedOf found a non-empty ledger
		i++
	}
	li := info.Ledgers[i]
	first = Position{Ledger: li.ID}
	if info.Start > li.FirstOffset {
		// Soft trim: the entry containing the log start is the first
		// visible one (entries ending at or below it are invisible).
		h, err := m.store.Floor(m.log, info.Start)
		if err != nil {
			return Position{}, Position{}, false, wrapStorageErr("read", m.log, err)
		}
		first = Position{Ledger: h.Ledger, Entry: h.Entry}
	}
	return first, last, !last.Less(first), nil
}

// normalize maps p to the first existing entry at or after it in ledger
// order (R2, R3, R6); ok is false when there is none, that is, p is after
// the last confirmed entry (R5). Ledgers hold only durable entries, so an
// entry id at or past the open ledger's count is past the end.
func normalize(ledgers []storage.LedgerInfo, p Position) (Position, bool) {
	i := sort.Search(len(ledgers), func(i int) bool { return ledgers[i].ID >= p.Ledger })
	e := p.Entry
	if i < len(ledgers) && ledgers[i].ID > p.Ledger {
		e = 0 // R3: a removed ledger or an id between two ledgers
	}
	for ; i < len(ledgers); i++ {
		if uint64(ledgers[i].Entries) > uint64(e) {
			return Position{Ledger: ledgers[i].ID, Entry: e}, true
		}
		e = 0 // R3, R6: past a closed ledger's end, or an empty ledger
	}
	return Position{}, false
}

// spansOf lists the non-empty ledgers between from and end (both existing
// or end past them), trimmed to at most maxEntries entries in all.
func spansOf(ledgers []storage.LedgerInfo, from, end Position, maxEntries int) []span {
	var spans []span
	left := uint64(maxEntries)
	i := sort.Search(len(ledgers), func(i int) bool { return ledgers[i].ID >= from.Ledger })
	for ; i < len(ledgers) && ledgers[i].ID <= end.Ledger && left > 0; i++ {
		li := ledgers[i]
		if li.Entries == 0 {
			continue // R6
		}
		s := span{ledger: li, to: EntryID(li.Entries - 1)}
		if li.ID == from.Ledger {
			s.from = from.Entry
		}
		if li.ID == end.Ledger && end.Entry < s.to {
			s.to = end.Entry // R7
		}
		if n := uint64(s.to-s.from) + 1; n > left {
			s.to = s.from + EntryID(left) - 1 // R9
		}
		left -= uint64(s.to-s.from) + 1
		spans = append(spans, s)
	}
	return spans
}

// readSpans reads the spans in order under the entry and byte budgets (R9).
// R10: a failure after entries were collected ends the read with those.
func (m *Managed) readSpans(spans []span, maxEntries int, maxBytes int64) ([]Entry, error) {
	var out []Entry
	var bytes int64
	for _, s := range spans {
		done, err := m.readSpan(s, &out, &bytes, maxEntries, maxBytes)
		if err != nil {
			if len(out) > 0 {
				return out, nil // R10
			}
			return nil, err
		}
		if done {
			break
		}
	}
	return out, nil
}

// readSpan appends the span's entries to *out until the span or a budget
// ends; done reports that a budget ended it.
func (m *Managed) readSpan(s span, out *[]Entry, bytes *int64, maxEntries int, maxBytes int64) (done bool, err error) {
	off, err := m.offsetOf(s.ledger, s.from)
	if err != nil {
		return false, err
	}
	for next := s.from; next <= s.to; {
		n := min(uint64(s.to-next)+1, uint64(maxEntries-len(*out)), indexChunk)
		hdrs, err := m.store.IndexRange(m.log, off, int(n))
		if err != nil {
			return false, wrapStorageErr("read index", m.log, err)
		}
		if err := checkHeaders(hdrs, s.ledger.ID, next, n); err != nil {
			return false, err
		}
		hdrs, done = budget(hdrs, len(*out), bytes, maxBytes)
		if len(hdrs) == 0 {
			return true, nil
		}
		es, err := m.fetch(hdrs, nil)
		*out = append(*out, es...)
		if err != nil {
			return false, err
		}
		if done || len(*out) >= maxEntries {
			return true, nil
		}
		next += EntryID(len(hdrs))
		off = hdrs[len(hdrs)-1].End()
	}
	return false, nil
}

// offsetOf is the offset of entry e of ledger li.
func (m *Managed) offsetOf(li storage.LedgerInfo, e EntryID) (Offset, error) {
	if e == 0 {
		return li.FirstOffset, nil
	}
	h, err := m.store.EntryAt(m.log, li.ID, e)
	if errors.Is(err, storage.ErrNotFound) {
		// The snapshot listed it: a hard trim removed it since.
		return 0, fmt.Errorf("%w: %v:%v: %w", errIndexMismatch, li.ID, e, err)
	}
	if err != nil {
		return 0, wrapStorageErr("read index", m.log, err)
	}
	return h.Offset, nil
}

// errIndexMismatch: the index did not return the entries the snapshot's
// ledger list promised (a concurrent removal, or a storage bug).
var errIndexMismatch = errors.New("ledger: entry index does not match ledger list")

// checkHeaders verifies that hdrs are entries from, from+1, ... of ledger,
// n of them.
func checkHeaders(hdrs []storage.EntryHeader, ledger LedgerID, from EntryID, n uint64) error {
	if uint64(len(hdrs)) != n {
		return fmt.Errorf("%w: %d of %d entries from %v:%v", errIndexMismatch, len(hdrs), n, ledger, from)
	}
	for i, h := range hdrs {
		if h.Ledger != ledger || h.Entry != from+EntryID(i) {
			want := Position{Ledger: ledger, Entry: from + EntryID(i)}
			got := Position{Ledger: h.Ledger, Entry: h.Entry}
			return fmt.Errorf("%w: want %v, got %v", errIndexMismatch, want, got)
		}
	}
	return nil
}

// budget keeps the prefix of hdrs that fits maxBytes given *bytes already
// taken by collected entries (R9: the read's first entry is always whole);
// done reports that the budget cut hdrs short.
func budget(hdrs []storage.EntryHeader, collected int, bytes *int64, maxBytes int64) ([]storage.EntryHeader, bool) {
	for i, h := range hdrs {
		size := int64(h.Size)
		if collected+i > 0 && *bytes+size > maxBytes {
			return hdrs[:i], true
		}
		*bytes += size
	}
	return hdrs, false
}
