package storage

import (
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Offloaded ledgers (doc.go "Offloaded ledgers"): a sealed ledger whose
// entries an object store holds keeps its record and its entry and time
// index; only its local file goes. Reads of its entries get ErrOffloaded
// from the local target and go to the object target (ledger/ targetOf).

// Offload marks sealed ledger led of log id offloaded, durably, and then
// removes its local file (once the last read pinning it releases it, I6).
// The caller must have made the entries durable elsewhere first (the
// object store's published object, verified): after Offload the store
// keeps only the index. The open ledger is never offloaded.
func (s *Store) Offload(id LogID, led LedgerID) error {
	l, done, err := s.adminLog(id)
	if err != nil {
		return err
	}
	defer done()
	l.mu.Lock()
	i := slices.IndexFunc(l.mu.ledgers, func(r ledgerRec) bool { return r.id == led })
	var rec ledgerRec
	if i >= 0 {
		rec = l.mu.ledgers[i]
	}
	last := i == len(l.mu.ledgers)-1
	l.mu.Unlock()
	switch {
	case i < 0:
		return fmt.Errorf("%w: %v %v", ErrRemoved, id, led)
	case rec.meta.Offloaded:
		return nil
	case !rec.meta.Sealed || last:
		return fmt.Errorf("%w: %v %v is open", ErrInvalid, id, led)
	}
	meta := rec.meta
	meta.Offloaded = true
	if err := s.db.Set(ledgerKey(id, led), meta.encode(), pebble.Sync); err != nil {
		return fmt.Errorf("storage: %v: offload %v: %w", id, led, err)
	}
	l.mu.Lock()
	if j := slices.IndexFunc(l.mu.ledgers, func(r ledgerRec) bool { return r.id == led }); j >= 0 {
		l.mu.ledgers[j].meta = meta
	}
	doomed := l.markRemovedLocked([]LedgerID{led})
	l.mu.Unlock()
	s.removeFiles(s.keepSpare(l, doomed, []ledgerRec{rec}))
	return nil
}

// offloadedLocked reports whether led is a live, offloaded ledger of l.
// Needs mu.
func (l *logState) offloadedLocked(led LedgerID) bool {
	i := slices.IndexFunc(l.mu.ledgers, func(r ledgerRec) bool { return r.id == led })
	return i >= 0 && l.mu.ledgers[i].meta.Offloaded
}

// HasLocal reports whether ledger led of log id has its local file (it is
// live and not offloaded). A read may still lose a race with Offload
// after it: it then gets ErrOffloaded and starts again.
func (s *Store) HasLocal(id LogID, led LedgerID) bool {
	if s.enter() != nil {
		return false
	}
	defer s.closeMu.RUnlock()
	l, err := s.getLog(id)
	if err != nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lf := l.mu.files[led]
	return lf != nil && !lf.removed
}

// LedgerEntries returns every index entry of ledger led of log id, a
// sealed ledger, whatever the log start (an uploader copies whole ledgers).
func (s *Store) LedgerEntries(id LogID, led LedgerID) (LedgerInfo, []EntryHeader, error) {
	if err := s.enter(); err != nil {
		return LedgerInfo{}, nil, err
	}
	defer s.closeMu.RUnlock()
	l, err := s.getLog(id)
	if err != nil {
		return LedgerInfo{}, nil, err
	}
	l.mu.Lock()
	i := slices.IndexFunc(l.mu.ledgers, func(r ledgerRec) bool { return r.id == led })
	if i < 0 || i == len(l.mu.ledgers)-1 || !l.mu.ledgers[i].meta.Sealed {
		l.mu.Unlock()
		return LedgerInfo{}, nil, fmt.Errorf("%w: %v %v is not a sealed ledger", ErrRemoved, id, led)
	}
	rec, end := l.mu.ledgers[i], l.mu.ledgers[i+1].meta.FirstOffset
	l.mu.Unlock()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: indexKey(id, rec.meta.FirstOffset), UpperBound: indexKey(id, end)})
	if err != nil {
		return LedgerInfo{}, nil, err
	}
	defer it.Close()
	out := make([]EntryHeader, 0, rec.meta.Entries)
	for ok := it.First(); ok; ok = it.Next() {
		h, err := decodeIndex(it.Key(), it.Value())
		if err != nil {
			return LedgerInfo{}, nil, err
		}
		out = append(out, h)
	}
	if err := it.Error(); err != nil {
		return LedgerInfo{}, nil, err
	}
	if int64(len(out)) != rec.meta.Entries {
		return LedgerInfo{}, nil, fmt.Errorf("%w: %v %v: %d index entries, record says %d", ErrRemoved, id, led, len(out), rec.meta.Entries)
	}
	return rec.meta.info(led), out, nil
}

// PinLedger pins ledger led's local file for reading (I6) and returns it
// with its release. ErrOffloaded when the file is gone to the object store.
func (s *Store) PinLedger(id LogID, led LedgerID) (File, func(), error) {
	if err := s.enter(); err != nil {
		return nil, nil, err
	}
	defer s.closeMu.RUnlock()
	l, err := s.getLog(id)
	if err != nil {
		return nil, nil, err
	}
	release, f, err := l.pinForRead(s, led)
	if err != nil {
		return nil, nil, err
	}
	return f, release, nil
}

// FrameHeaderLen is the size of a frame's header (doc.go "File format").
const FrameHeaderLen = frameHeaderLen

// FrameInfo is what a frame's header says about its entry.
type FrameInfo = frameFields

// CheckFrame verifies one whole frame (length and CRC32C) and returns its
// fields; errors wrap ErrCorrupt. An object store copy of a ledger holds
// the ledger file's frames as they are.
func CheckFrame(frame []byte) (FrameInfo, error) { return checkFrame(frame) }

// VerifyFrame is CheckFrame plus agreement with the entry's index header
// (offset and records); it returns the entry, whose payload is a slice
// of frame.
func VerifyFrame(frame []byte, h EntryHeader) (Entry, error) { return verifyFrame(frame, h) }
