package storage

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"go.uber.org/zap"
)

// recover loads every log's records, writes journaled frames back into
// their files and repairs the newest ledger of each (doc.go, I1, I3, I4,
// I8 and I15). Cost: O(logs + ledgers) pebble reads plus the
// unindexed tails, never the whole data (start-up must not grow with it).
func (s *Store) recover() error {
	if err := s.loadLogs(); err != nil {
		return err
	}
	// I15: journaled frames are back in their files before any is read.
	if err := s.replayJournal(); err != nil {
		return err
	}
	for _, l := range s.mu.logs {
		if err := s.recoverTail(l); err != nil {
			return fmt.Errorf("storage: recover %v: %w", l.id, err)
		}
	}
	return s.removeOrphans()
}

// loadLogs reads the log and ledger records.
func (s *Store) loadLogs() error {
	if v, err := s.get(keyNextLedger); err == nil && len(v) == 8 {
		s.nextLedger = LedgerID(binary.BigEndian.Uint64(v))
	}
	s.nextLedger = max(s.nextLedger, 1)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixLedger}, UpperBound: []byte{prefixLedger + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	for valid := it.First(); valid; valid = it.Next() {
		k := it.Key()
		if len(k) != 17 {
			return fmt.Errorf("%w: ledger key", ErrCorrupt)
		}
		id, led := LogID(binary.BigEndian.Uint64(k[1:])), LedgerID(binary.BigEndian.Uint64(k[9:]))
		m, err := decodeLedgerMeta(it.Value())
		if err != nil {
			return err
		}
		l := s.mu.logs[id]
		if l == nil {
			l = newLogState(id)
			s.mu.logs[id] = l
		}
		l.mu.ledgers = append(l.mu.ledgers, ledgerRec{id: led, meta: m})
		if !m.Offloaded {
			// An offloaded ledger has no file: one left by a crash
			// between its record and the file's removal is an orphan.
			l.mu.files[led] = &ledgerFile{name: s.segPath(id, led)}
		}
		s.nextLedger = max(s.nextLedger, led+1)
	}
	if err := it.Error(); err != nil {
		return err
	}
	for id, l := range s.mu.logs {
		// Offset order: a rewrite's ledger (a newer id) takes the place
		// of the ledgers it replaced (doc.go "Generations").
		sortLedgers(l.mu.ledgers)
		v, err := s.get(logKey(id))
		if err != nil {
			return fmt.Errorf("%v: log record: %w", id, err)
		}
		m, err := decodeLogMeta(v)
		if err != nil {
			return err
		}
		l.mu.state, l.mu.start = m.State, m.Start
	}
	return nil
}

// sortLedgers puts a log's ledger records (read in id order) in offset
// order, ties (empty ledgers) in id order.
func sortLedgers(recs []ledgerRec) {
	slices.SortStableFunc(recs, func(a, b ledgerRec) int { return cmp.Compare(a.meta.FirstOffset, b.meta.FirstOffset) })
}

// tailStart is where the unindexed tail of the open ledger begins.
type tailStart struct {
	pos    int64
	next   Offset
	entry  EntryID
	cum    int64
	runMax int64
	hasMax bool
	keyed  bool // as logState.w's keyed and keyAt
	keyAt  Offset
}

// findTail locates the last indexed entry of the open ledger and the log's
// running max timestamp. The open ledger's entries have the log's highest
// offsets, so its last indexed entry, if it has one, is the log's last
// index entry (one seek).
func (s *Store) findTail(l *logState, open ledgerRec) (tailStart, error) {
	t := tailStart{next: open.meta.FirstOffset, cum: open.meta.FirstCum}
	lo, hi := logPrefixRange(prefixIndex, l.id)
	if k, v, ok, err := s.last(lo, hi); err != nil {
		return t, err
	} else if ok {
		h, err := decodeIndex(k, v)
		if err != nil {
			return t, err
		}
		if h.Ledger == open.id {
			t.pos, t.next, t.entry, t.cum = h.Pos+frameHeaderLen+int64(h.Size), h.End(), h.Entry+1, h.Cum
		}
	}
	lo, hi = logPrefixRange(prefixTime, l.id)
	if k, _, ok, err := s.last(lo, hi); err != nil {
		return t, err
	} else if ok {
		if t.runMax, err = s.recoverRunMax(l.id, k); err != nil {
			return t, err
		}
		t.hasMax = true
	}
	return t, nil
}

// last returns the last key in [lo, hi) with a copy of its value.
func (s *Store) last(lo, hi []byte) (key, val []byte, ok bool, err error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, nil, false, err
	}
	defer it.Close()
	if !it.Last() {
		return nil, nil, false, it.Error()
	}
	return append([]byte(nil), it.Key()...), append([]byte(nil), it.Value()...), true, nil
}

// recoverTail scans the open ledger past its last indexed entry, indexes
// every whole entry it finds, truncates the first torn or garbage frame and
// everything after it, and syncs file then index (I4 in doc.go).
func (s *Store) recoverTail(l *logState) error {
	if len(l.mu.ledgers) == 0 {
		return fmt.Errorf("%w: no ledgers", ErrCorrupt)
	}
	open := l.mu.ledgers[len(l.mu.ledgers)-1]
	lf := l.mu.files[open.id]
	t, err := s.findTail(l, open)
	if err != nil {
		return err
	}
	f, err := s.fs.OpenFile(lf.name, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) && t.pos == 0 {
		// I1: a ledger no entry was ever indexed in may have no file yet
		// (CreateLogs makes it on the first Write). It is empty.
		l.w.ledger, l.w.next, l.w.cum = open.id, t.next, t.cum
		l.w.runMax, l.w.hasMax = t.runMax, t.hasMax
		l.mu.end = t.next
		return nil
	}
	if err != nil {
		return fmt.Errorf("open ledger file: %w", err)
	}
	lf.file = f
	size, err := f.Size()
	if err != nil {
		return err
	}
	if size < t.pos {
		return fmt.Errorf("%w: %s is %d bytes, index says %d", ErrCorrupt, lf.name, size, t.pos)
	}
	b := s.db.NewBatch()
	defer b.Close()
	scanned := t.pos
	t = indexTail(b, l.id, open.id, f, size, t)
	if t.pos < size {
		s.logger.Warn("storage-torn-tail-truncated", zap.Stringer("log", l.id), zap.Stringer("ledger", open.id),
			zap.Int64("at", t.pos), zap.Int64("dropped-bytes", size-t.pos))
		if err := f.Truncate(t.pos); err != nil {
			return fmt.Errorf("truncate torn tail: %w", err)
		}
	}
	if t.pos != scanned || size != scanned {
		// The re-indexed entries become durable before the index names them.
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync recovered tail: %w", err)
		}
		if err := b.Commit(pebble.Sync); err != nil {
			return err
		}
	}
	l.w.ledger, l.w.file, l.w.next, l.w.entry, l.w.pos = open.id, f, t.next, t.entry, t.pos
	l.w.cum, l.w.runMax, l.w.hasMax = t.cum, t.runMax, t.hasMax
	l.w.keyed, l.w.keyAt = t.keyed, t.keyAt
	l.mu.end = t.next
	l.mu.ledgers[len(l.mu.ledgers)-1].meta.Entries = int64(t.entry)
	l.mu.ledgers[len(l.mu.ledgers)-1].meta.Bytes = t.pos
	return nil
}

// indexTail adds to b an index entry for every whole frame from t.pos that
// continues the offset sequence, and returns the position after the last.
func indexTail(b *pebble.Batch, id LogID, led LedgerID, f File, size int64, t tailStart) tailStart {
	for t.pos < size {
		ff, ok := readTailFrame(f, t.pos, size, t.next)
		if !ok {
			break
		}
		h := EntryHeader{Offset: t.next, Records: ff.Records, MaxTime: ff.MaxTime, Size: int32(ff.Size),
			Cum: t.cum + int64(ff.Size), Ledger: led, Entry: t.entry, Pos: t.pos}
		_ = b.Set(indexKey(id, h.Offset), encodeIndexValue(h), nil)
		if !t.hasMax || h.MaxTime > t.runMax {
			t.runMax, t.hasMax = h.MaxTime, true
			if timeKeyDue(t.keyed, t.keyAt, h.Offset) {
				t.keyed, t.keyAt = true, h.Offset
				_ = b.Set(timeKey(id, h.MaxTime, h.Offset), nil, nil)
			}
		}
		t.pos += frameHeaderLen + int64(ff.Size)
		t.next, t.entry, t.cum = h.End(), t.entry+1, h.Cum
	}
	return t
}

// readTailFrame reads and checks the frame at pos; ok is false for a torn,
// corrupt or out-of-sequence frame (the end of the recoverable tail).
func readTailFrame(f File, pos, size int64, want Offset) (frameFields, bool) {
	var hdr [frameHeaderLen]byte
	if pos+frameHeaderLen > size {
		return frameFields{}, false
	}
	if n, _ := f.ReadAt(hdr[:], pos); n < frameHeaderLen {
		return frameFields{}, false
	}
	psize, ok := parseFrameLen(hdr[:])
	if !ok || pos+frameHeaderLen+int64(psize) > size {
		return frameFields{}, false
	}
	frame := make([]byte, frameHeaderLen+psize)
	if n, _ := f.ReadAt(frame, pos); n < len(frame) {
		return frameFields{}, false
	}
	ff, err := checkFrame(frame)
	if err != nil || ff.Offset != want || ff.Records <= 0 {
		return frameFields{}, false
	}
	return ff, true
}

// removeOrphans deletes segment files no ledger record names: files created
// by a Roll or CreateLog whose record never became durable, and files of
// ledgers trimmed or deleted before a crash let their removal finish.
func (s *Store) removeOrphans() error {
	names, err := s.fs.ReadDir(s.segDir)
	if err != nil {
		return err
	}
	removed := 0
	for _, name := range names {
		if id, ok := parseSpareFileName(name); ok {
			gone, err := s.adoptSpare(id, name)
			if err != nil {
				return err
			}
			if gone {
				removed++
			}
			continue
		}
		id, led, ok := parseSegmentFileName(name)
		if ok {
			if l := s.mu.logs[id]; l != nil && l.mu.files[led] != nil {
				continue
			}
			s.nextLedger = max(s.nextLedger, led+1)
		}
		if !ok {
			continue
		}
		if err := s.fs.Remove(s.segPath(id, led)); err != nil {
			return fmt.Errorf("remove orphan %s: %w", name, err)
		}
		removed++
	}
	if removed > 0 {
		s.logger.Info("storage-orphans-removed", zap.Int("files", removed))
		return s.fs.SyncDir(s.segDir)
	}
	return nil
}
