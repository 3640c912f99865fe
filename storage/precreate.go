package storage

import (
	"go.uber.org/zap"
)

// Creating new logs' files before their first Write. CreateLogs records
// a new log's first ledger with one synced commit for all of them and no
// file; left at that, the first produce to a thousand new partitions
// creates a thousand files on the produce path, one after another, each
// under its log's append lock, and every group commit of those first
// moments syncs the directory for the files created since the one before
// (I1): that start, not the steady state, is what a new topic's first
// acknowledgements wait for. So CreateLogs then creates the files itself,
// before it returns, one log at a time, each exactly as a first Write
// would (under the log's append lock, skipping a log whose file exists,
// that is gone, failed or fenced). Creating them in the background
// instead was not enough: a producer that writes as soon as CreateTopics
// answers met the creation halfway, and its first writes waited for it.
// Nothing about durability changes: the files are created without a
// directory sync, and the group commit that takes a first entry of one
// syncs the directory before it acknowledges anything (I1), as for a file
// a Write created; a crash before that leaves files that Open finds
// empty. Without a Replicator only (with one, every creation syncs the
// directory, so the first Write creates the file).

// precreate creates ids' first ledger files. A failed creation ends it:
// the log's first Write then meets the failure and reports it. Needs
// s.enter.
func (s *Store) precreate(ids []LogID) {
	if s.opts.Replicator != nil {
		return
	}
	for _, id := range ids {
		if !s.precreateOne(id) {
			return
		}
	}
}

// precreateOne creates id's open ledger's file if it has none yet; it
// says whether to go on (not after a failed creation).
func (s *Store) precreateOne(id LogID) bool {
	l, err := s.getLog(id)
	if err != nil {
		return true
	}
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	l.mu.Lock()
	err = l.checkWritableLocked()
	l.mu.Unlock()
	if err != nil || l.w.file != nil {
		return true
	}
	if err := s.materializeLocked(l); err != nil {
		s.logger.Warn("storage-precreate-failed", zap.Stringer("log", id), zap.Error(err))
		return false
	}
	return true
}
