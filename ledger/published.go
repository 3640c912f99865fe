package ledger

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/kgateway/kgateway/storage"
)

// Published is the durable copy of a log below its local start: in
// cluster mode the local log is a cache of the partition's published
// ranges (cluster/diskless), and may start above the partition's first
// offset (R20). Its methods are safe for concurrent use.
type Published interface {
	// Start is the published log's first offset; ok is false when there
	// is no published part to read (the local log is the whole log).
	Start() (start Offset, ok bool)
	// Candidates lists the published ranges that hold offsets in
	// [from, to), in offset order, as the index holds them now.
	Candidates(ctx context.Context, from, to Offset) ([]PublishedRange, error)
	// Read pins the objects of rs with durable pins, revalidates rs
	// against the index, reads their bytes and checks them (length,
	// SHA-256, batches tiling [Base, End)) (R21), and returns them in
	// rs's order. A range that changed since it was listed is an error
	// wrapping ErrStale.
	Read(ctx context.Context, rs []PublishedRange) ([][]byte, error)
	// Trim moves the published start up to start, durably, before it
	// returns (DeleteRecords); a start at or below it changes nothing.
	Trim(ctx context.Context, start Offset) error
}

// PublishedRange is one candidate of a published read: the offsets
// [Base, End) are the record batches in bytes [Pos, Pos+Len) of Object,
// whose SHA-256 is SHA256, as listed at index version Version.
type PublishedRange struct {
	Base, End Offset
	Object    string
	Pos, Len  int64
	SHA256    [32]byte
	Version   int64
	MaxTime   int64 // the largest max timestamp of its batches
	// Record is the Published's own: which index record listed it (a
	// record may be listed in several parts). Opaque to the ledger.
	Record int64
}

// ErrStale: a published range changed (merged, trimmed) between being
// listed and being pinned; the read starts again from a fresh snapshot.
var ErrStale = errors.New("ledger: published range changed since listed")

// SetPublished names the durable copy below the log's local start (R20);
// nil removes it. Reads and snapshots taken after the call use it.
func (m *Managed) SetPublished(p Published) {
	if p == nil {
		m.dispatch.published.Store(nil)
		return
	}
	m.dispatch.published.Store(&publishedTarget{p: p})
}

// TrimPublished moves the published start up to start when it is below
// (DeleteRecords in cluster mode); without a published copy, or at or
// below its start, it does nothing.
func (m *Managed) TrimPublished(start Offset) error {
	t := m.dispatch.published.Load()
	if t == nil {
		return nil
	}
	if cur, ok := t.p.Start(); !ok || start <= cur {
		return nil
	}
	return t.p.Trim(context.Background(), start)
}

// SeekPublishedTime is the offset of the first batch below the local
// log whose max timestamp is at or after ts (R22): the first published
// range whose max timestamp reaches ts is read, through the read flow's
// published target, and its batches walked. ok is false when no batch
// below the local log reaches ts: the local time index answers.
func (m *Managed) SeekPublishedTime(ts int64) (off Offset, ok bool, err error) {
	t := m.dispatch.published.Load()
	if t == nil {
		return 0, false, nil
	}
	_, err = m.retrying(func() ([]Entry, error) {
		off, ok, err = m.seekPublishedOnce(t, ts)
		return nil, err
	})
	return off, ok, err
}

func (m *Managed) seekPublishedOnce(t *publishedTarget, ts int64) (Offset, bool, error) {
	b, err := m.store.Bounds(m.log)
	if err != nil {
		return 0, false, m.storeReadErr(err)
	}
	start, ok := t.p.Start()
	if !ok || start >= b.Start {
		return 0, false, nil
	}
	cands, err := t.p.Candidates(context.Background(), start, b.Start)
	if err != nil {
		return 0, false, err
	}
	for _, r := range cands {
		if r.MaxTime < ts {
			continue
		}
		c := candidate{kind: publishedRange, rngs: []PublishedRange{r}}
		es, err := m.dispatch.pickRange(c).readRanges(c)
		if err != nil {
			return 0, false, err
		}
		for _, e := range es[0] {
			if e.MaxTime >= ts && e.End() > start && e.Offset < b.Start {
				return e.Offset, true, nil
			}
		}
	}
	return 0, false, nil
}

// hasPublished reports a published copy below the local log.
func (m *Managed) hasPublished() bool { return m.dispatch.published.Load() != nil }

// publishedStart lowers a snapshot's start to the published one (R20).
func (m *Managed) publishedStart(sn Snapshot) Snapshot {
	if t := m.dispatch.published.Load(); t != nil {
		if start, ok := t.p.Start(); ok && start < sn.Start {
			sn.Start = start
		}
	}
	return sn
}

// readPublished is a read from an offset below the local log's start
// (local is sn.Start): the published ranges from from's on, up to the
// local start, maxEntries entries and maxBytes bytes, the first entry
// whole (R9, R20). The read stops at the local start; the next one
// reads the local log.
func (m *Managed) readPublished(sn Snapshot, from Offset, maxEntries int, maxBytes int64) (Snapshot, []Entry, error) {
	local := sn.Start
	sn = m.publishedStart(sn)
	if from < sn.Start || from >= local {
		return sn, nil, nil // below the published start: the caller judges it (the log start check)
	}
	t := m.dispatch.published.Load()
	cands, err := t.p.Candidates(context.Background(), from, local)
	if err != nil {
		return sn, nil, err
	}
	// The ranges the limits may need (the first always), read at once.
	var size int64
	for i, r := range cands {
		if i > 0 && (size >= maxBytes || i >= maxEntries) {
			cands = cands[:i]
			break
		}
		size += r.Len
	}
	var out []Entry
	if len(cands) == 0 {
		return sn, nil, fmt.Errorf("%w: no published range holds %v", ErrStale, from)
	}
	c := candidate{kind: publishedRange, rngs: cands}
	ranges, err := m.dispatch.pickRange(c).readRanges(c)
	if err != nil {
		return sn, nil, err
	}
	var bytes int64
	for _, es := range ranges {
		for _, e := range es {
			if e.End() <= from {
				continue
			}
			if e.Offset >= local || len(out) >= maxEntries || (len(out) > 0 && bytes+int64(e.Size) > maxBytes) {
				return sn, out, nil
			}
			out = append(out, e)
			bytes += int64(e.Size)
		}
	}
	if len(out) == 0 {
		// The published log holds every offset in [start, local): none
		// listed is a race with its trim, or a fault. Never an empty
		// read, which a replay would take for the end (R21).
		return sn, nil, fmt.Errorf("%w: no published range holds %v", ErrStale, from)
	}
	return sn, out, nil
}

// publishedTarget reads published ranges (R21): the Published pins and
// revalidates them and checks their bytes, then they are cut into
// entries, one record batch each, as the local log holds them.
type publishedTarget struct{ p Published }

func (t *publishedTarget) readRanges(c candidate) ([][]Entry, error) {
	data, err := t.p.Read(context.Background(), c.rngs)
	if err != nil {
		return nil, err
	}
	out := make([][]Entry, len(data))
	for i, d := range data {
		if out[i], err = splitBatches(d, c.rngs[i].Base, c.rngs[i].End); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Record batch header fields (Kafka's v2 format).
const (
	batchLengthOff     = 8
	lastOffsetDeltaOff = 23
	maxTimestampOff    = 35
	batchHeaderLen     = 61
)

// splitBatches cuts data, record batches tiling [base, end), into one
// entry per batch. The bytes were checked against their SHA-256; the
// resolver validates each batch before serving it (read flow step 5).
func splitBatches(data []byte, base, end Offset) ([]Entry, error) {
	var out []Entry
	next := base
	for len(data) > 0 {
		if len(data) < batchHeaderLen {
			return nil, fmt.Errorf("%w: published batch at %v: %d bytes is short of a header", storage.ErrCorrupt, next, len(data))
		}
		size := 12 + int64(int32(binary.BigEndian.Uint32(data[batchLengthOff:])))
		off := Offset(binary.BigEndian.Uint64(data))
		span := int32(binary.BigEndian.Uint32(data[lastOffsetDeltaOff:])) + 1
		if size < batchHeaderLen || size > int64(len(data)) || off != next || span <= 0 {
			return nil, fmt.Errorf("%w: published batch at %v: base %v, %d bytes of %d", storage.ErrCorrupt, next, off, size, len(data))
		}
		out = append(out, Entry{
			EntryHeader: storage.EntryHeader{Offset: off, Records: span,
				MaxTime: int64(binary.BigEndian.Uint64(data[maxTimestampOff:])), Size: int32(size)},
			Payload: data[:size:size],
		})
		next += Offset(span)
		data = data[size:]
	}
	if next != end {
		return nil, fmt.Errorf("%w: published batches end at %v, not %v", storage.ErrCorrupt, next, end)
	}
	return out, nil
}
