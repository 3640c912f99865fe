package storage

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// adminLog enters the store, finds the log and takes its append lock, the
// preamble of every operation that changes a log's records. A failed log
// still takes trims, fencing and deletion: they touch no segment bytes. The returned
// func undoes all three.
func (s *Store) adminLog(id LogID) (*logState, func(), error) {
	if err := s.enter(); err != nil {
		return nil, nil, err
	}
	l, err := s.getLog(id)
	if err != nil {
		s.closeMu.RUnlock()
		return nil, nil, err
	}
	l.appendMu.Lock()
	l.mu.Lock()
	deleted := l.mu.deleted
	l.mu.Unlock()
	if deleted {
		l.appendMu.Unlock()
		s.closeMu.RUnlock()
		return nil, nil, fmt.Errorf("%w: %v", ErrNoLog, id)
	}
	return l, func() { l.appendMu.Unlock(); s.closeMu.RUnlock() }, nil
}

// writeLogMeta durably stores the log record with the given change applied
// and, on success, applies it in memory. Needs appendMu.
func (s *Store) writeLogMeta(l *logState, change func(*logMeta)) error {
	l.mu.Lock()
	m := logMeta{State: l.mu.state, Start: l.mu.start}
	l.mu.Unlock()
	change(&m)
	if err := s.db.Set(logKey(l.id), m.encode(), pebble.Sync); err != nil {
		return fmt.Errorf("storage: %v: write log record: %w", l.id, err)
	}
	l.mu.Lock()
	l.mu.state, l.mu.start = m.State, m.Start
	l.changes.Add(1)
	l.mu.Unlock()
	return nil
}

// SoftTrim makes entries below off invisible and moves the log start to
// off (durably). It never moves the start backwards. off past the durable
// End is ErrOutOfRange.
func (s *Store) SoftTrim(id LogID, off Offset) error {
	l, done, err := s.adminLog(id)
	if err != nil {
		return err
	}
	defer done()
	l.mu.Lock()
	start, end := l.mu.start, l.mu.end
	l.mu.Unlock()
	if off > end {
		return fmt.Errorf("%w: %v: trim %v past end %v", ErrOutOfRange, id, off, end)
	}
	if off <= start {
		return nil
	}
	return s.writeLogMeta(l, func(m *logMeta) { m.Start = off })
}

// HardTrim removes every sealed ledger all of whose entries are below off.
// Files a read has pinned are removed when the last pin is released. The
// start moves up to the first remaining ledger if it was below it.
func (s *Store) HardTrim(id LogID, off Offset) error {
	l, done, err := s.adminLog(id)
	if err != nil {
		return err
	}
	defer done()
	l.mu.Lock()
	lrs := append([]ledgerRec(nil), l.mu.ledgers...)
	start := l.mu.start
	l.mu.Unlock()
	// Ledger i (sealed) ends where ledger i+1 begins; never the open one.
	n := 0
	for n+1 < len(lrs) && lrs[n].meta.Sealed && lrs[n+1].meta.FirstOffset <= off {
		n++
	}
	if n == 0 {
		return nil
	}
	keep := lrs[n]
	b := s.db.NewBatch()
	defer b.Close()
	gone := make([]LedgerID, n)
	for i, r := range lrs[:n] {
		gone[i] = r.id
		_ = b.Delete(ledgerKey(id, r.id), nil)
	}
	// Position keys are no longer written; a store written by an earlier
	// version has them, and they go with their ledgers.
	_ = b.DeleteRange(posKey(id, 0, 0), posKey(id, keep.id, 0), nil)
	_ = b.DeleteRange(indexKey(id, 0), indexKey(id, keep.meta.FirstOffset), nil)
	if err := s.trimTimeIndex(b, id, keep.meta.FirstOffset); err != nil {
		return err
	}
	newStart := max(start, keep.meta.FirstOffset)
	l.mu.Lock()
	meta := logMeta{State: l.mu.state, Start: newStart}
	l.mu.Unlock()
	_ = b.Set(logKey(id), meta.encode(), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("storage: %v: hard trim: %w", id, err)
	}
	l.mu.Lock()
	l.mu.start = newStart
	l.changes.Add(1)
	l.mu.ledgers = append([]ledgerRec(nil), l.mu.ledgers[n:]...)
	doomed := l.markRemovedLocked(gone)
	l.mu.Unlock()
	s.removeFiles(s.keepSpare(l, doomed, lrs[:n]))
	return nil
}

// DeleteLog removes the log, its index and, once unpinned, its files.
func (s *Store) DeleteLog(id LogID) error {
	l, done, err := s.adminLog(id)
	if err != nil {
		return err
	}
	defer done()
	_ = l.drain() // no write is in flight when the records go
	if err := s.dropSpare(l); err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	_ = b.Delete(logKey(id), nil)
	for _, p := range []byte{prefixLedger, prefixIndex, prefixPos, prefixTime} {
		lo, hi := logPrefixRange(p, id)
		_ = b.DeleteRange(lo, hi, nil)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("storage: delete %v: %w", id, err)
	}
	l.mu.Lock()
	l.mu.deleted = true
	l.changes.Add(1)
	var all []LedgerID
	for led := range l.mu.files {
		all = append(all, led)
	}
	l.mu.ledgers = nil
	doomed := l.markRemovedLocked(all)
	l.mu.Unlock()
	s.mu.Lock()
	delete(s.mu.logs, id)
	s.mu.Unlock()
	s.tail.drop(l)
	s.removeFiles(doomed)
	return nil
}

// Fence makes appends fail with ErrFenced; Activate undoes it. Durable.
func (s *Store) Fence(id LogID) error { return s.setState(id, Fenced) }

// Activate returns a fenced log to NORMAL. Durable.
func (s *Store) Activate(id LogID) error { return s.setState(id, Normal) }

func (s *Store) setState(id LogID, st LogState) error {
	l, done, err := s.adminLog(id)
	if err != nil {
		return err
	}
	defer done()
	return s.writeLogMeta(l, func(m *logMeta) { m.State = st })
}
