package storage

import (
	"os"
	"path/filepath"

	"go.uber.org/zap"
)

// Filling the journal files (journal.go, doc.go "Journaled commits"): a
// pass writes only over blocks its file already has, written and synced,
// so that its fdatasyncs change no size and convert no extents (the
// unwritten extents of fallocate would still need converting, a file-
// system journal commit each time). A new file (a new store's, or one an
// earlier version truncated) is filled with zeros up to journalFileBytes
// a chunk at a time, each chunk synced before a pass may write there:
// the first chunk of file 0 before Open returns, the rest in the
// background, file 0 first. Until a pass's file is filled far
// enough, groups are committed as without a journal. The files keep
// their size from then on (retireJournal), so this happens once per
// store.
//
// The filler writes only at or past filled[i], the committer only below
// it. The filler uses handles of its own: a failed sync reports a write-
// back error once per open file, and a sync of the filler's must not
// take the error that the committer's sync of its records has to see.

// journalFillChunk is how much the filler writes and syncs at a time (a
// var for tests).
var journalFillChunk int64 = 4 << 20

// fillStart fills the first chunk of file 0, if it is not, before Open
// returns: the first groups, which a store's first seconds make many
// of (every new log's first entry), then find a journal to write, and the
// filler stays ahead of the committer from there on.
func (j *journal) fillStart() {
	j.fillTo(0, min(journalFillChunk, journalFileBytes))
}

// fill fills both journal files, unless Close comes first.
func (j *journal) fill() {
	defer close(j.fillDone)
	for i := range journalNames {
		if !j.fillTo(i, journalFileBytes) {
			return
		}
	}
}

// fillTo fills file i up to end and says whether it did. A failed write
// or sync ends the filling (logged): the journal then uses what is
// filled.
func (j *journal) fillTo(i int, end int64) bool {
	if j.filled[i].Load() >= end {
		return true
	}
	err := j.fillFile(i, filepath.Join(j.s.segDir, journalNames[i]), end)
	if err != nil {
		j.s.logger.Warn("storage-journal-fill-failed", zap.String("file", journalNames[i]), zap.Error(err))
	}
	return err == nil
}

// fillFile writes zeros from filled[i] to end, a chunk at a time,
// publishing each chunk once synced. It stops early, without an error,
// when the journal stops.
func (j *journal) fillFile(i int, name string, end int64) error {
	f, err := j.s.fs.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	zeros := make([]byte, min(journalFillChunk, journalFileBytes))
	for off := j.filled[i].Load(); off < end; {
		select {
		case <-j.quit:
			return nil
		default:
		}
		n := min(int64(len(zeros)), end-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		off += n
		j.filled[i].Store(off)
	}
	return nil
}
