package storage

import (
	"slices"

	"go.uber.org/zap"
)

// Creating new logs' files ahead of their first Write. CreateLogs records
// a new log's first ledger without a file (materializeLocked creates it
// on the log's first Write), so that a topic of many partitions is
// created with one synced commit. But then the first produce to a
// thousand new partitions creates a thousand files on the produce path,
// one after another, each under its log's append lock, and every group
// commit of those first seconds syncs the directory for the files
// created since the one before (I1): that start, not the steady state,
// is what a new topic's first acknowledgements wait for. So CreateLogs
// also starts a goroutine that creates the files in the background, one
// log at a time, each exactly as a first Write would (under the log's
// append lock, skipping a log whose file exists, that is gone, failed or
// fenced); a Write that comes first creates its own. Nothing about
// durability changes: the files are created without a directory sync,
// and the group commit that takes a first entry of one syncs the
// directory before it acknowledges anything (I1), as for a file a Write
// created. Without a Replicator only (with one, every creation syncs
// the directory).

// precreate creates ids' first ledger files in the background.
func (s *Store) precreate(ids []LogID) {
	if s.opts.Replicator != nil || len(ids) == 0 {
		return
	}
	ids = slices.Clone(ids)
	go func() {
		for _, id := range ids {
			if !s.precreateOne(id) {
				return
			}
		}
	}()
}

// precreateOne creates id's open ledger's file if it has none yet; it
// says whether to go on (not after Close or a failed creation, which the
// log's first Write then meets and reports).
func (s *Store) precreateOne(id LogID) bool {
	if s.enter() != nil {
		return false
	}
	defer s.closeMu.RUnlock()
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
		s.logger.Debug("storage-precreate-failed", zap.Stringer("log", id), zap.Error(err))
		return false
	}
	return true
}
