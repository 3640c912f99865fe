package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"go.uber.org/zap"
)

// Spare segment files (doc.go I8). An fdatasync after appending to a file
// must commit the file system's journal (the file grew); after
// overwriting blocks the file already has, it need not, which makes a
// durable append cheaper (BenchmarkAppendReused; the figures are in
// BENCHMARKS.md, "Reusing trimmed segment files"). So HardTrim keeps one trimmed ledger file per
// log, renamed to the log's spare name, and the log's next Roll writes
// its new ledger over it instead of creating an empty file. Under
// retention, in the steady state, most new ledgers reuse a file. Only the
// same log reuses it: every offset in a trimmed ledger is below the first
// offset of any later ledger of that log, so the old frames past the new
// ledger's end can never continue its offset sequence, and recovery (I4)
// stops at the first of them as it stops at a torn frame.

// spareFileName is the base name of a log's spare file.
func spareFileName(log LogID) string { return fmt.Sprintf("%016x.spare", uint64(log)) }

func parseSpareFileName(name string) (LogID, bool) {
	var log uint64
	if len(name) != 22 {
		return 0, false
	}
	if _, err := fmt.Sscanf(name, "%016x.spare", &log); err != nil {
		return 0, false
	}
	return LogID(log), true
}

// SpareFiles lists the spare files (I8) in the store directory dir, which
// may be in use: verify reports them, tests look for them.
func SpareFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(dir, "segments"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if _, ok := parseSpareFileName(e.Name()); ok {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func (s *Store) sparePath(log LogID) string { return filepath.Join(s.segDir, spareFileName(log)) }

// keepSpare renames one of doomed (files of ledgers whose records are
// durably gone, that nobody pins) to l's spare name, if l has none, and
// returns the files still to remove. It keeps the one of the largest
// ledger in gone (records as they were before the trim): the most blocks
// to write over; an empty ledger's file is not worth keeping. Needs
// appendMu.
func (s *Store) keepSpare(l *logState, doomed []*ledgerFile, gone []ledgerRec) []*ledgerFile {
	if s.opts.NoReuse || s.lowSpace.Load() || l.w.spare != "" || len(doomed) == 0 {
		return doomed
	}
	best, size := "", int64(0)
	for _, r := range gone {
		if r.meta.Bytes > size {
			best, size = s.segPath(l.id, r.id), r.meta.Bytes
		}
	}
	i := slices.IndexFunc(doomed, func(lf *ledgerFile) bool { return lf.name == best })
	if i < 0 {
		return doomed
	}
	lf := doomed[i]
	if lf.file != nil {
		_ = lf.file.Close()
		lf.file = nil
	}
	spare := s.sparePath(l.id)
	if err := s.fs.Rename(lf.name, spare); err != nil {
		s.logger.Warn("storage-spare-rename-failed", zap.String("file", lf.name), zap.Error(err))
		return doomed
	}
	// No directory sync: until one, a crash leaves the file under either
	// name, and both are safe (an orphan, or a spare).
	l.w.spare = spare
	return slices.Delete(doomed, i, i+1)
}

// takeSpare renames l's spare, if it has one, to name and reports whether
// it did. A spare that cannot be renamed is removed. Needs appendMu.
func (s *Store) takeSpare(l *logState, name string) bool {
	spare := l.w.spare
	if spare == "" {
		return false
	}
	l.w.spare = ""
	if err := s.fs.Rename(spare, name); err != nil {
		s.logger.Warn("storage-spare-reuse-failed", zap.String("file", spare), zap.Error(err))
		_ = s.fs.Remove(spare)
		return false
	}
	return true
}

// cutReused cuts the open ledger's file back to its last entry when the
// file was reused, so that no old bytes stay past a sealed ledger's end
// (verify checks that) and a clean restart finds no tail to truncate. It
// syncs the cut before it returns. Needs appendMu (or the store closed).
func (l *logState) cutReused() error {
	if !l.w.reused || l.w.file == nil {
		return nil
	}
	if err := l.w.file.Truncate(l.w.pos); err != nil {
		return fmt.Errorf("storage: %v: cut reused ledger file: %w", l.id, err)
	}
	if err := l.w.file.Sync(); err != nil {
		return fmt.Errorf("storage: %v: sync reused ledger file: %w", l.id, err)
	}
	l.w.reused, l.w.dirty, l.w.alloc = false, false, 0
	return nil
}

// removeSpare removes l's spare file, if it has one, and reports whether
// it did. Needs appendMu.
func (s *Store) removeSpare(l *logState) (bool, error) {
	if l.w.spare == "" {
		return false, nil
	}
	if err := s.fs.Remove(l.w.spare); err != nil && !os.IsNotExist(err) {
		return false, fmt.Errorf("storage: %v: remove spare: %w", l.id, err)
	}
	l.w.spare = ""
	return true, nil
}

// dropSpare removes l's spare file durably. DeleteLog calls it before the
// log's records go, so that no spare can outlive its log and be reused by
// a new log of the same ID, whose offsets start again at 0. Needs
// appendMu.
func (s *Store) dropSpare(l *logState) error {
	removed, err := s.removeSpare(l)
	if err != nil || !removed {
		return err
	}
	if err := s.fs.SyncDir(s.segDir); err != nil {
		return fmt.Errorf("storage: sync segments dir: %w", err)
	}
	return nil
}

// outOfSpace is called when a write failed for lack of space (I7): the
// spares hold disk that appends now need, so they are removed, in the
// background (each under its log's append lock, which the failing Write
// holds), and no new one is kept until the store is reopened. The append
// that failed is refused as I7 says; a retry may find the space.
func (s *Store) outOfSpace() {
	if s.lowSpace.Swap(true) {
		return
	}
	go s.dropSpares()
}

func (s *Store) dropSpares() {
	if err := s.enter(); err != nil {
		return
	}
	defer s.closeMu.RUnlock()
	s.mu.Lock()
	logs := make([]*logState, 0, len(s.mu.logs))
	for _, l := range s.mu.logs {
		logs = append(logs, l)
	}
	s.mu.Unlock()
	dropped := 0
	for _, l := range logs {
		// Free space needs no directory sync; a crash before one leaves
		// the spare, which Open adopts or removes.
		l.appendMu.Lock()
		removed, err := s.removeSpare(l)
		l.appendMu.Unlock()
		if err != nil {
			s.logger.Warn("storage-spare-remove-failed", zap.Error(err))
		}
		if removed {
			dropped++
		}
	}
	s.logger.Warn("storage-out-of-space-spares-dropped", zap.Int("files", dropped))
}

// adoptSpare is Open's handling of a spare file: the log it belongs to
// keeps it; one of a log that no longer exists, or any with NoReuse, is
// removed.
func (s *Store) adoptSpare(id LogID, name string) (removed bool, err error) {
	if l := s.mu.logs[id]; l != nil && l.w.spare == "" && !s.opts.NoReuse {
		l.w.spare = filepath.Join(s.segDir, name)
		return false, nil
	}
	if err := s.fs.Remove(filepath.Join(s.segDir, name)); err != nil {
		return false, fmt.Errorf("remove orphan %s: %w", name, err)
	}
	return true, nil
}
