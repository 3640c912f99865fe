package storage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync/atomic"

	"github.com/kgateway/kgateway/storage/fsys"

	"github.com/cockroachdb/pebble/v2"
)

// Reads (doc.go "Reads"). Every read takes one snapshot of the log's bounds
// (Start, End) and sees only index entries that are durable (below End, D5)
// and visible (ending above Start). Reads write nothing: no pebble write, no
// file write, no metadata update (R1 relies on this).

// readLog enters the store and snapshots the log. The caller must call
// s.closeMu.RUnlock when err is nil.
func (s *Store) readLog(id LogID) (*logState, snapshot, error) {
	if err := s.enter(); err != nil {
		return nil, snapshot{}, err
	}
	l, err := s.getLog(id)
	if err == nil {
		var sn snapshot
		if sn, err = l.snap(); err == nil {
			return l, sn, nil
		}
	}
	s.closeMu.RUnlock()
	return nil, snapshot{}, err
}

// scanIndex calls visit with the durable, visible entry containing from and
// then each following one until visit returns false.
func (s *Store) scanIndex(l *logState, sn snapshot, from Offset, visit func(EntryHeader) bool) error {
	id := l.id
	switch {
	case from < 0:
		return fmt.Errorf("%w: offset %d", ErrInvalid, from)
	case from >= sn.end:
		return fmt.Errorf("%w: %v: %v >= end %v", ErrOutOfRange, id, from, sn.end)
	}
	if l.tail.scan(sn, from, visit) { // C2: the tail cache answers alone
		return nil
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: indexKey(id, 0), UpperBound: indexKey(id, sn.end)})
	if err != nil {
		return err
	}
	defer it.Close()
	probes := 1
	defer func() { s.probed(probes) }()
	if !it.SeekLT(indexKey(id, from+1)) {
		if err := it.Error(); err != nil {
			return err
		}
		// No entry at or below from: trimmed, or a gap a rewrite left
		// at the start of the log (reads across gaps).
		if from < sn.start || !l.startAtOrBelow(from) {
			return fmt.Errorf("%w: %v: %v", ErrTrimmed, id, from)
		}
		probes++
		if !it.First() {
			return gapToEnd(it, id, from)
		}
	} else if h, err := decodeIndex(it.Key(), it.Value()); err != nil {
		return err
	} else if h.End() <= sn.start || h.End() <= from {
		if from < sn.start {
			return fmt.Errorf("%w: %v: %v below start %v", ErrTrimmed, id, from, sn.start)
		}
		// from is in a gap a rewrite left (reads across gaps): the read moves to the
		// next entry (R3). The floor entry is there, so nothing between
		// it and from was trimmed (trims remove a prefix).
		probes++
		if !it.Next() {
			return gapToEnd(it, id, from)
		}
	}
	first := true
	for ; it.Valid(); it.Next() {
		if !first {
			probes++ // the Next that reached this entry
		}
		first = false
		h, err := decodeIndex(it.Key(), it.Value())
		if err != nil {
			return err
		}
		if !visit(h) {
			return nil
		}
	}
	return it.Error()
}

// gapToEnd is scanIndex's answer when from lies in a gap with no entry
// after it below the snapshot's end: ErrNotFound, which the reads by
// offset turn into an empty result (R5).
func gapToEnd(it *pebble.Iterator, id LogID, from Offset) error {
	if err := it.Error(); err != nil {
		return err
	}
	return fmt.Errorf("%w: %v: no entry at or after %v", ErrNotFound, id, from)
}

// startAtOrBelow reports whether the log start, now, is at or below off:
// a read that found no entry at or below off tells a trim that raced it
// (the start moved past off) from a gap at the start of the log.
func (l *logState) startAtOrBelow(off Offset) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.start <= off
}

// Floor returns the durable entry containing off: a floor lookup in the
// entry index, O(log n). ErrTrimmed below the first visible entry,
// ErrOutOfRange at or past End.
func (s *Store) Floor(id LogID, off Offset) (EntryHeader, error) {
	l, sn, err := s.readLog(id)
	if err != nil {
		return EntryHeader{}, err
	}
	defer s.closeMu.RUnlock()
	var out EntryHeader
	err = s.scanIndex(l, sn, off, func(h EntryHeader) bool { out = h; return false })
	return out, err
}

// FirstOffset describes the first visible (not soft-trimmed) entry, or
// ErrEmpty.
func (s *Store) FirstOffset(id LogID) (EntryHeader, error) {
	return s.edgeEntry(id, func(sn snapshot) Offset { return sn.start })
}

// LastOffset describes the last durable entry, or ErrEmpty when no entry is
// visible.
func (s *Store) LastOffset(id LogID) (EntryHeader, error) {
	return s.edgeEntry(id, func(sn snapshot) Offset { return sn.end - 1 })
}

// edgeEntry describes the visible entry containing the offset that at
// picks from the log's (Start, End) snapshot, or ErrEmpty when no entry is
// visible.
func (s *Store) edgeEntry(id LogID, at func(snapshot) Offset) (EntryHeader, error) {
	l, sn, err := s.readLog(id)
	if err != nil {
		return EntryHeader{}, err
	}
	defer s.closeMu.RUnlock()
	if sn.start >= sn.end {
		return EntryHeader{}, fmt.Errorf("%w: %v", ErrEmpty, id)
	}
	var out EntryHeader
	err = s.scanIndex(l, sn, at(sn), func(h EntryHeader) bool { out = h; return false })
	return out, err
}

// IndexRange returns up to max durable index entries starting with the one
// containing from. Pair with ReadIndexed to read without re-resolving.
// from == End returns nothing; ErrTrimmed/ErrOutOfRange as for Floor.
func (s *Store) IndexRange(id LogID, from Offset, max int) ([]EntryHeader, error) {
	if max <= 0 {
		return nil, fmt.Errorf("%w: max %d", ErrInvalid, max)
	}
	l, sn, err := s.readLog(id)
	if err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()
	if from == sn.end {
		return nil, nil
	}
	var out []EntryHeader
	err = s.scanIndex(l, sn, from, func(h EntryHeader) bool {
		out = append(out, h)
		return len(out) < max
	})
	if errors.Is(err, ErrNotFound) {
		err = nil // a gap up to the end (R3, R5)
	}
	return out, err
}

// Headers is the plan of a read by offset: it takes one snapshot of the
// log and returns its bounds with, under it, the index headers of the
// entries from the one containing from, at most maxEntries of them and no
// more payload bytes than maxBytes, except that the first is always taken
// whole. A from outside [Start, End) gets the bounds and no headers, and
// no error: the caller judges it against them. ReadIndexed reads the
// payloads.
func (s *Store) Headers(id LogID, from Offset, maxEntries int, maxBytes int64) (Bounds, []EntryHeader, error) {
	if maxEntries <= 0 || maxBytes < 0 {
		return Bounds{}, nil, fmt.Errorf("%w: max entries %d, max bytes %d", ErrInvalid, maxEntries, maxBytes)
	}
	l, sn, err := s.readLog(id)
	if err != nil {
		return Bounds{}, nil, err
	}
	defer s.closeMu.RUnlock()
	b := Bounds{State: sn.state, Start: sn.start, End: sn.end}
	if from < sn.start || from >= sn.end {
		return b, nil, nil
	}
	var (
		hdrs  []EntryHeader
		bytes int64
	)
	err = s.scanIndex(l, sn, from, func(h EntryHeader) bool {
		if len(hdrs) > 0 && bytes+int64(h.Size) > maxBytes {
			return false
		}
		hdrs = append(hdrs, h)
		bytes += int64(h.Size)
		return len(hdrs) < maxEntries
	})
	if errors.Is(err, ErrNotFound) {
		err = nil // a gap up to the end: nothing to read yet (R3, R5)
	}
	return b, hdrs, err
}

// Changes is a log's change counter (Store.Changes).
type Changes struct{ n *atomic.Uint64 }

// Load returns the count of the log's changes so far. A count loaded
// before a snapshot (Bounds, Headers, Info) and loaded again later,
// unchanged, says that a snapshot taken now would show the same state,
// start and durable end, and that the log neither failed nor went since.
// The zero Changes counts nothing and always loads 0.
func (c Changes) Load() uint64 {
	if c.n == nil {
		return 0
	}
	return c.n.Load()
}

// Changes returns the counter of what id's snapshots show; loading it
// takes no lock, so a reader can tell cheaply that nothing moved since
// an earlier read.
func (s *Store) Changes(id LogID) (Changes, error) {
	if err := s.enter(); err != nil {
		return Changes{}, err
	}
	defer s.closeMu.RUnlock()
	l, err := s.getLog(id)
	if err != nil {
		return Changes{}, err
	}
	return Changes{n: &l.changes}, nil
}

// Bounds is the log's state and bounds now: Info without the ledger list.
func (s *Store) Bounds(id LogID) (Bounds, error) {
	_, sn, err := s.readLog(id)
	if err != nil {
		return Bounds{}, err
	}
	s.closeMu.RUnlock()
	return Bounds{State: sn.state, Start: sn.start, End: sn.end}, nil
}

// EntryAt looks an entry up by position. ErrNotFound when no durable entry
// has that position, ErrTrimmed when it is soft-trimmed. Nothing maps a
// position to its offset (no per-entry key is written): entry ids grow with
// offsets inside a ledger, so a binary search over the ledger's offsets
// finds it in O(log n) index seeks (seekEntry), unless the tail cache holds
// it.
func (s *Store) EntryAt(id LogID, ledger LedgerID, entry EntryID) (EntryHeader, error) {
	l, sn, err := s.readLog(id)
	if err != nil {
		return EntryHeader{}, err
	}
	defer s.closeMu.RUnlock()
	if h, ok := l.tail.entryAt(sn, ledger, entry); ok {
		return h, nil
	}
	lo, hi := l.offsetsOf(ledger, sn.end)
	h, ok, err := s.seekEntry(id, ledger, lo, hi, entry)
	switch {
	case err != nil:
		return EntryHeader{}, err
	case !ok:
		return EntryHeader{}, fmt.Errorf("%w: %v %v:%v", ErrNotFound, id, ledger, entry)
	case h.End() <= sn.start:
		return EntryHeader{}, fmt.Errorf("%w: %v %v:%v", ErrTrimmed, id, ledger, entry)
	}
	return h, nil
}

// offsetsOf is the range of offsets [lo, hi) the durable entries of ledger
// led start in, bounded by end; empty when the log has no such ledger.
func (l *logState) offsetsOf(led LedgerID, end Offset) (lo, hi Offset) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ls := l.mu.ledgers
	// Ledgers are in offset order, which is id order only until a rewrite
	// (doc.go "Generations"): a linear search.
	i := slices.IndexFunc(ls, func(r ledgerRec) bool { return r.id == led })
	if i < 0 {
		return 0, 0
	}
	hi = end
	if i+1 < len(ls) {
		hi = min(hi, ls[i+1].meta.FirstOffset)
	}
	return ls[i].meta.FirstOffset, hi
}

// seekEntry finds entry e of ledger led, whose entries start at offsets in
// [lo, hi), by a binary search on offsets: entry ids grow with offsets, so
// the answer starts in [lo, hi) and each probe (the first entry starting
// at or after mid) halves the range or lands on it.
func (s *Store) seekEntry(id LogID, led LedgerID, lo, hi Offset, e EntryID) (EntryHeader, bool, error) {
	if lo >= hi {
		return EntryHeader{}, false, nil
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: indexKey(id, lo), UpperBound: indexKey(id, hi)})
	if err != nil {
		return EntryHeader{}, false, err
	}
	defer it.Close()
	probes := 0
	defer func() { s.probed(probes) }()
	for lo < hi {
		mid := lo + (hi-lo)/2
		probes++
		if !it.SeekGE(indexKey(id, mid)) {
			if err := it.Error(); err != nil {
				return EntryHeader{}, false, err
			}
			hi = mid // nothing starts in [mid, hi)
			continue
		}
		h, err := decodeIndex(it.Key(), it.Value())
		switch {
		case err != nil:
			return EntryHeader{}, false, err
		case h.Offset >= hi || h.Entry > e:
			hi = mid // nothing starts in [mid, hi), or what does comes after e
		case h.Entry < e:
			lo = h.End()
		default:
			return h, h.Ledger == led, nil
		}
	}
	return EntryHeader{}, false, nil
}

// get returns a copy of key's value, or ErrNotFound.
func (s *Store) get(key []byte) ([]byte, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), v...)
	return out, closer.Close()
}

// probed reports one lookup's index probes (Options.OnIndexProbes).
func (s *Store) probed(n int) {
	if f := s.opts.OnIndexProbes; f != nil {
		f(n)
	}
}

// ReadEntries returns durable entries from the one containing start, at
// most maxRecords records' worth of entries and maxBytes of payload, but
// always at least one entry if any is readable. maxRecords or maxBytes <= 0
// means no limit on that dimension. start == End returns nothing;
// ErrTrimmed below the first visible entry; ErrOutOfRange past End. If a
// read fails after some entries were read (a later ledger's file, a corrupt
// frame), those entries are returned without the error; the next read,
// starting where they end, reports it.
func (s *Store) ReadEntries(id LogID, start Offset, maxRecords, maxBytes int) ([]Entry, error) {
	for attempt := 0; ; attempt++ {
		hdrs, err := s.planRead(id, start, maxRecords, maxBytes)
		if err != nil || len(hdrs) == 0 {
			return nil, err
		}
		out, err := s.ReadIndexed(id, hdrs)
		// A hard trim removed a ledger between the index scan and the pin:
		// plan again from a fresh snapshot (which reports ErrTrimmed).
		if errors.Is(err, ErrRemoved) && len(out) == 0 && attempt < 3 {
			continue
		}
		if err != nil && len(out) > 0 {
			return out, nil
		}
		return out, err
	}
}

// planRead picks the headers ReadEntries will read.
func (s *Store) planRead(id LogID, start Offset, maxRecords, maxBytes int) ([]EntryHeader, error) {
	l, sn, err := s.readLog(id)
	if err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()
	if start == sn.end {
		return nil, nil
	}
	var hdrs []EntryHeader
	records, bytes := 0, 0
	err = s.scanIndex(l, sn, start, func(h EntryHeader) bool {
		if len(hdrs) > 0 && ((maxRecords > 0 && records+int(h.Records) > maxRecords) ||
			(maxBytes > 0 && bytes+int(h.Size) > maxBytes)) {
			return false
		}
		hdrs = append(hdrs, h)
		records += int(h.Records)
		bytes += int(h.Size)
		return true
	})
	if errors.Is(err, ErrNotFound) {
		err = nil // a gap up to the end (R3, R5)
	}
	return hdrs, err
}

// ReadIndexed reads the payloads of hdrs in order, pinning each ledger while
// it reads from it and verifying each frame's CRC32C (ErrCorrupt). Entries
// the tail cache holds come from memory (C4: their payloads are shared and
// read-only); a run of entries that lie back to back in one ledger file is
// read with one pread. On an error it returns the entries read before it
// together with the error.
func (s *Store) ReadIndexed(id LogID, hdrs []EntryHeader) ([]Entry, error) {
	return s.ReadIndexedLeased(id, hdrs, nil)
}

// ReadIndexedLeased is ReadIndexed whose file reads go into pooled
// buffers held by lease and whose pins lease keeps, each entry read from
// a file saying where its payload lies (Entry.Src), so that the caller
// may send the payload from the file with sendfile until it releases the
// lease (lease.go). Every frame is verified as by ReadIndexed. A nil
// lease is ReadIndexed.
func (s *Store) ReadIndexedLeased(id LogID, hdrs []EntryHeader, lease *Lease) ([]Entry, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()
	l, err := s.getLog(id)
	if err != nil {
		return nil, err
	}
	cached := make([][]byte, len(hdrs))
	l.tail.payloads(hdrs, cached, lease)
	out := make([]Entry, 0, len(hdrs))
	var (
		cur     LedgerID
		f       File
		release = func() {}
	)
	defer func() { release() }()
	for i := 0; i < len(hdrs); {
		h := hdrs[i]
		if cached[i] != nil {
			out = append(out, Entry{EntryHeader: h, Payload: cached[i]})
			i++
			continue
		}
		if f == nil || h.Ledger != cur {
			release()
			release, f, err = l.pinForRead(s, h.Ledger)
			if err != nil {
				return out, err
			}
			if lease != nil && lease.pins {
				// The lease unpins once the bytes are sent.
				lease.keep(release)
				release = func() {}
			}
			cur = h.Ledger
		}
		n := contiguousRun(hdrs[i:], cached[i:])
		es, err := readRun(f, hdrs[i:i+n], lease)
		out = append(out, es...)
		if err != nil {
			h = hdrs[i+len(es)]
			return out, fmt.Errorf("%v %v:%v: %w", id, h.Ledger, h.Entry, err)
		}
		i += n
	}
	return out, nil
}

// maxRunBytes bounds one pread of back-to-back entries.
const maxRunBytes = 8 << 20

// contiguousRun is how many of hdrs, from the first, lie back to back in
// one ledger file and are not cached (at least one).
func contiguousRun(hdrs []EntryHeader, cached [][]byte) int {
	n, size := 1, frameHeaderLen+int64(hdrs[0].Size)
	for n < len(hdrs) && cached[n] == nil {
		prev, h := hdrs[n-1], hdrs[n]
		if h.Ledger != prev.Ledger || h.Pos != prev.Pos+frameHeaderLen+int64(prev.Size) ||
			size+frameHeaderLen+int64(h.Size) > maxRunBytes {
			break
		}
		size += frameHeaderLen + int64(h.Size)
		n++
	}
	return n
}

// readRun reads back-to-back entries with one pread and verifies each
// frame; on an error it returns the entries before the bad one. With a
// lease the buffer is the lease's and each entry says where in f its
// payload lies.
func readRun(f File, hdrs []EntryHeader, lease *Lease) ([]Entry, error) {
	first, last := hdrs[0], hdrs[len(hdrs)-1]
	size := int(last.Pos + frameHeaderLen + int64(last.Size) - first.Pos)
	var buf []byte
	if lease != nil {
		buf = lease.buf(size)
	} else {
		buf = make([]byte, size)
	}
	n, err := f.ReadAt(buf, first.Pos)
	if n < len(buf) {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("%w: short read", ErrCorrupt)
		}
		return nil, err
	}
	var osf *os.File
	if lease != nil && lease.pins {
		osf = fsys.OSFile(f)
	}
	out := make([]Entry, 0, len(hdrs))
	for _, h := range hdrs {
		at := h.Pos - first.Pos
		frame := buf[at : at+frameHeaderLen+int64(h.Size) : at+frameHeaderLen+int64(h.Size)]
		e, err := verifyFrame(frame, h)
		if err != nil {
			return out, err
		}
		if osf != nil {
			e.Src = FileSpan{File: osf, Off: h.Pos + frameHeaderLen}
		}
		out = append(out, e)
	}
	return out, nil
}

// verifyFrame checks one frame against its index header.
func verifyFrame(frame []byte, h EntryHeader) (Entry, error) {
	ff, err := checkFrame(frame)
	if err != nil {
		return Entry{}, err
	}
	if ff.Offset != h.Offset || ff.Records != h.Records {
		return Entry{}, fmt.Errorf("%w: frame says %v/%d, index %v/%d", ErrCorrupt, ff.Offset, ff.Records, h.Offset, h.Records)
	}
	return Entry{EntryHeader: h, Payload: frame[frameHeaderLen:]}, nil
}
