package storage

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Rewrites (doc.go "Generations"): a range of a log's sealed ledgers is
// replaced by one new ledger, the range's next generation, holding a
// subset of its entries at their own offsets (a log cleaner's output).
// The new ledger's file is written and synced beside the old ones, which
// reads keep using; one synced pebble batch then swaps the index from the
// old generation to the new (compacted generations, the generation swap and reads across gaps).

// Rewrite is a new generation of a range of sealed ledgers, being written.
// It is used by one goroutine; Commit or Abort ends it.
type Rewrite struct {
	s        *Store
	l        *logState
	led      LedgerID
	file     File
	name     string
	replaced []ledgerRec
	first    Offset // the range is [first, end): the first replaced ledger's
	end      Offset // first offset to the next ledger's
	gen      uint64
	pos      int64
	cum      int64
	entries  []EntryHeader
	done     bool
}

// BeginRewrite starts a new generation of the given ledgers of log id,
// which must be consecutive sealed ledgers of it, in order, followed by
// another ledger (so never the open one). It allocates the new ledger and
// creates its file, durably (I1), outside the log's append lock: appends
// go on meanwhile.
func (s *Store) BeginRewrite(id LogID, ledgers []LedgerID) (*Rewrite, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()
	l, err := s.getLog(id)
	if err != nil {
		return nil, err
	}
	if err := l.checkAlive(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	replaced, end, err := l.rangeOfLocked(ledgers)
	l.mu.Unlock()
	if err != nil {
		return nil, err
	}
	w := &Rewrite{s: s, l: l, replaced: replaced, first: replaced[0].meta.FirstOffset, end: end, cum: replaced[0].meta.FirstCum}
	for _, r := range replaced {
		w.gen = max(w.gen, r.meta.Gen+1)
	}
	s.ledgerMu.Lock()
	defer s.ledgerMu.Unlock()
	w.led = s.nextLedger
	if err := s.db.Set(keyNextLedger, appendU64(nil, uint64(w.led+1)), pebble.Sync); err != nil {
		return nil, fmt.Errorf("storage: %v: allocate a ledger: %w", id, err)
	}
	s.nextLedger++
	w.name = s.segPath(id, w.led)
	if w.file, err = s.fs.OpenFile(w.name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
		return nil, fmt.Errorf("storage: create ledger file: %w", err)
	}
	if err := s.fs.SyncDir(s.segDir); err != nil {
		w.Abort()
		return nil, fmt.Errorf("storage: sync segments dir: %w", err)
	}
	return w, nil
}

// rangeOfLocked checks that ledgers are consecutive sealed ledgers of l
// followed by another, and returns their records and the offset where the
// range ends. Needs mu.
func (l *logState) rangeOfLocked(ledgers []LedgerID) ([]ledgerRec, Offset, error) {
	if len(ledgers) == 0 {
		return nil, 0, fmt.Errorf("%w: no ledgers to rewrite", ErrInvalid)
	}
	ls := l.mu.ledgers
	i := slices.IndexFunc(ls, func(r ledgerRec) bool { return r.id == ledgers[0] })
	if i < 0 {
		return nil, 0, fmt.Errorf("%w: %v %v", ErrRemoved, l.id, ledgers[0])
	}
	if i+len(ledgers) >= len(ls) {
		return nil, 0, fmt.Errorf("%w: %v: a rewrite must end before the open ledger", ErrInvalid, l.id)
	}
	for j, led := range ledgers {
		if r := ls[i+j]; r.id != led || !r.meta.Sealed {
			return nil, 0, fmt.Errorf("%w: %v: %v is not the next sealed ledger", ErrRemoved, l.id, led)
		}
	}
	return slices.Clone(ls[i : i+len(ledgers)]), ls[i+len(ledgers)].meta.FirstOffset, nil
}

// Ledger is the new generation's ledger id.
func (w *Rewrite) Ledger() LedgerID { return w.led }

// Range is the offsets the rewrite replaces, [first, end).
func (w *Rewrite) Range() (first, end Offset) { return w.first, w.end }

// Append adds an entry spanning [off, off+span) to the new generation.
// Entries must come in offset order, inside the range, and may leave gaps
// (reads across gaps); span counts offsets, not the records the payload still holds.
func (w *Rewrite) Append(off Offset, span int32, maxTime int64, payload []byte) error {
	if w.done {
		return fmt.Errorf("%w: rewrite ended", ErrInvalid)
	}
	low := w.first
	if n := len(w.entries); n > 0 {
		low = w.entries[n-1].End()
	}
	if span < 1 || off < low || off+Offset(span) > w.end {
		return fmt.Errorf("%w: entry [%v,+%d) outside [%v, %v)", ErrInvalid, off, span, low, w.end)
	}
	var hdr [frameHeaderLen]byte
	encodeFrameHeader(hdr[:], off, span, maxTime, payload, suffixCRC{})
	if _, err := w.file.WriteAt(hdr[:], w.pos); err != nil {
		return fmt.Errorf("storage: rewrite %v: %w", w.l.id, err)
	}
	if _, err := w.file.WriteAt(payload, w.pos+frameHeaderLen); err != nil {
		return fmt.Errorf("storage: rewrite %v: %w", w.l.id, err)
	}
	w.cum += int64(len(payload))
	w.entries = append(w.entries, EntryHeader{
		Offset: off, Records: span, MaxTime: maxTime, Size: int32(len(payload)),
		Cum: w.cum, Ledger: w.led, Entry: EntryID(len(w.entries)), Pos: w.pos,
	})
	w.pos += frameHeaderLen + int64(len(payload))
	return nil
}

// Bytes is the size of the new generation's file so far.
func (w *Rewrite) Bytes() int64 { return w.pos }

// Abort drops the rewrite: its file is removed, nothing else changed.
func (w *Rewrite) Abort() {
	if w.done {
		return
	}
	w.done = true
	_ = w.file.Close()
	_ = w.s.fs.Remove(w.name)
}

// Commit swaps the range to the new generation (compacted generations): the file is synced,
// then one synced pebble batch removes the old ledgers' records and their
// entry index and adds the new ledger and its entries. A crash before the
// batch leaves the old generation and an orphan file, after it the new
// generation and orphan old files; Open removes orphans (I1). The old
// files go when the last read pinning them releases it (no stranded member, I6). If a
// trim or another rewrite changed the range meanwhile, Commit fails with
// ErrRemoved and changes nothing (the caller Aborts).
func (w *Rewrite) Commit() error {
	if w.done {
		return fmt.Errorf("%w: rewrite ended", ErrInvalid)
	}
	if err := w.file.Sync(); err != nil {
		return fmt.Errorf("storage: rewrite %v: sync: %w", w.l.id, err)
	}
	s := w.s
	l, unlock, err := s.adminLog(w.l.id)
	if err != nil {
		return err
	}
	defer unlock()
	if l != w.l {
		return fmt.Errorf("%w: %v was recreated", ErrRemoved, l.id)
	}
	ids := make([]LedgerID, len(w.replaced))
	for i, r := range w.replaced {
		ids[i] = r.id
	}
	l.mu.Lock()
	cur, end, err := l.rangeOfLocked(ids)
	l.mu.Unlock()
	if err != nil {
		return err
	}
	if end != w.end || cur[0].meta.FirstOffset != w.first {
		return fmt.Errorf("%w: %v: the range moved", ErrRemoved, l.id)
	}
	meta := ledgerMeta{
		FirstOffset: w.first, FirstCum: w.replaced[0].meta.FirstCum, Entries: int64(len(w.entries)),
		Bytes: w.pos, Created: time.Now().UnixNano(), Sealed: true, Gen: w.gen,
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, r := range w.replaced {
		_ = b.Delete(ledgerKey(l.id, r.id), nil)
	}
	_ = b.Set(ledgerKey(l.id, w.led), meta.encode(), nil)
	_ = b.DeleteRange(indexKey(l.id, w.first), indexKey(l.id, w.end), nil)
	for _, h := range w.entries {
		_ = b.Set(indexKey(l.id, h.Offset), encodeIndexValue(h), nil)
	}
	// The new file is known to reads before the index names it: a read
	// that sees the committed entries before the ledger list below is
	// updated must be able to pin it (the generation swap).
	l.mu.Lock()
	l.mu.files[w.led] = &ledgerFile{name: w.name, file: w.file}
	l.mu.Unlock()
	if err := b.Commit(pebble.Sync); err != nil {
		// In doubt: pebble may or may not hold the batch. Either
		// generation is whole, so the log stays readable; the store
		// must be reopened to know which (as for a failed sync).
		// The file stays (Abort does nothing now): if the batch is in
		// pebble it is the range's data; if not, Open removes it.
		l.fail(err)
		w.done = true
		return fmt.Errorf("storage: %v: commit rewrite: %w", l.id, err)
	}
	w.done = true
	l.mu.Lock()
	i := slices.IndexFunc(l.mu.ledgers, func(r ledgerRec) bool { return r.id == ids[0] })
	l.mu.ledgers = slices.Replace(l.mu.ledgers, i, i+len(ids), ledgerRec{id: w.led, meta: meta})
	doomed := l.markRemovedLocked(ids)
	l.mu.Unlock()
	// The tail cache must not serve the old generation's entries: drop
	// every cached entry that starts in the range (cached entries are
	// contiguous, so that is a prefix of them).
	l.tail.evictFront(w.end - 1)
	s.removeFiles(doomed)
	return nil
}
