package storage

import (
	"fmt"
	"os"
	"sync"

	"go.uber.org/zap"
)

// Pins (doc.go, I6): a read holds a pin on every ledger it reads from.
// HardTrim and DeleteLog drop a ledger's records at once but remove its file
// only when its last pin is released, so a read in progress never loses the
// file under it (resolver step 4).

// pinForRead pins one ledger and returns its open file. A ledger that is
// removed but still pinned by another read stays readable: the caller's
// headers were taken before the removal, and the bytes they name stay
// intact until the last pin is released.
func (l *logState) pinForRead(s *Store, led LedgerID) (release func(), f File, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lf := l.mu.files[led]
	if lf == nil {
		if l.offloadedLocked(led) {
			return func() {}, nil, fmt.Errorf("%w: %v %v", ErrOffloaded, l.id, led)
		}
		return func() {}, nil, fmt.Errorf("%w: %v %v", ErrRemoved, l.id, led)
	}
	if lf.file == nil {
		// Read-only: a read never writes (R1).
		if lf.file, err = s.fs.OpenFile(lf.name, os.O_RDONLY, 0); err != nil {
			return func() {}, nil, fmt.Errorf("storage: open %s: %w", lf.name, err)
		}
	}
	lf.pins++
	var once sync.Once
	return func() { once.Do(func() { s.unpin(l, []LedgerID{led}) }) }, lf.file, nil
}

func (s *Store) unpin(l *logState, ledgers []LedgerID) {
	var doomed []*ledgerFile
	l.mu.Lock()
	for _, led := range ledgers {
		lf := l.mu.files[led]
		if lf == nil {
			continue
		}
		lf.pins--
		if lf.pins == 0 && lf.removed {
			delete(l.mu.files, led)
			doomed = append(doomed, lf)
		}
	}
	l.mu.Unlock()
	s.removeFiles(doomed)
}

// markRemovedLocked marks ledgers removed and returns the files nobody pins,
// which the caller removes (after releasing mu). Needs l.mu.
func (l *logState) markRemovedLocked(ledgers []LedgerID) []*ledgerFile {
	var doomed []*ledgerFile
	for _, led := range ledgers {
		lf := l.mu.files[led]
		if lf == nil {
			continue
		}
		lf.removed = true
		if lf.pins == 0 {
			delete(l.mu.files, led)
			doomed = append(doomed, lf)
		}
	}
	return doomed
}

// removeFiles closes and deletes ledger files whose records are already
// durably gone. A failure leaves an orphan that the next Open removes.
func (s *Store) removeFiles(files []*ledgerFile) {
	for _, lf := range files {
		if lf.file != nil {
			_ = lf.file.Close()
			lf.file = nil
		}
		if err := s.fs.Remove(lf.name); err != nil && !os.IsNotExist(err) {
			s.logger.Warn("storage-remove-failed", zap.String("file", lf.name), zap.Error(err))
		}
	}
}
