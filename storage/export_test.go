package storage

import (
	"fmt"
	"sync"
)

// Pin holds the named ledgers' files as a read in progress does (reads
// pin through pinForRead), so that tests can hold a pin across a trim or a
// deletion. It fails with ErrRemoved if one is already removed. release is
// idempotent.
func (s *Store) Pin(id LogID, ledgers ...LedgerID) (release func(), err error) {
	if err := s.enter(); err != nil {
		return func() {}, err
	}
	defer s.closeMu.RUnlock()
	l, err := s.getLog(id)
	if err != nil {
		return func() {}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, led := range ledgers {
		lf := l.mu.files[led]
		if lf == nil || lf.removed {
			for _, done := range ledgers[:i] {
				l.mu.files[done].pins--
			}
			return func() {}, fmt.Errorf("%w: %v %v", ErrRemoved, id, led)
		}
		lf.pins++
	}
	held := append([]LedgerID(nil), ledgers...)
	var once sync.Once
	return func() { once.Do(func() { s.unpin(l, held) }) }, nil
}

// Floor is Store.Floor on the read-only view, or ErrNotFound.
func (r *ReadOnly) Floor(id LogID, off Offset) (EntryHeader, error) {
	var found EntryHeader
	ok := false
	err := r.ScanEntries(id, off, func(h EntryHeader) (bool, error) {
		found, ok = h, h.Offset <= off
		return false, nil
	})
	if err == nil && !ok {
		err = fmt.Errorf("%w: %v: no entry holds %v", ErrNotFound, id, off)
	}
	return found, err
}
