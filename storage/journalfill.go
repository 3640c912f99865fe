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
// earlier version truncated) is filled with zeros a chunk at a time, each
// chunk synced before a pass may write there, and only a bounded distance
// (journalFillAhead) ahead of where the journal writes: the first chunk
// of file 0 before Open returns; then, as the committer asks for records,
// the current file up to journalFillAhead past its next record, and once
// that passes the file's end, the other file's start, for the next pass.
// So a store that journals little fills little, and a store's filling is
// spread over its first journaled bytes instead of following its Open.
// A group whose record lies past what is filled waits for the filler
// (awaitFilled): a chunk's write and sync is one fdatasync, where
// committing the group without the journal costs one for each of its
// files (hundreds for the first groups of a new topic's partitions, or
// a group gathered while the committer waited). Only when the filler
// has stopped short (a failed fill) is a group committed as without a
// journal. The files keep their size from then on
// (retireJournal), so this happens once per store, up to
// journalFileBytes a file.
//
// The filler writes only at or past filled[i], the committer only below
// it: a pass never writes where the filler still writes, and the filler
// never writes over a record. The committer alone raises target[i]
// (fillAhead), the filler alone filled[i]. The filler uses handles of its
// own: a failed sync reports a write-back error once per open file, and
// a sync of the filler's must not take the error that the committer's
// sync of its records has to see. Its chunks are small (a sync of the
// journal file also writes back the filler's unsynced zeros in it, so a
// chunk is what a journal sync may wait for beyond its own record).

// journalFillChunk is how much the filler writes and syncs at a time, and
// journalFillAhead how far past the journal's next record it keeps the
// journal filled (vars for tests). At 20 MB/s journaled, 4 MiB is 200 ms
// of records; a 1 MiB chunk is written and synced in about a millisecond.
var (
	journalFillChunk int64 = 1 << 20
	journalFillAhead int64 = 4 << 20
)

// Hooks for tests, when set: awaitFillHook and awaitCheckpointHook are
// called as the committer starts to wait for the filler or for a
// checkpoint, checkpointHook as a checkpoint of a pass starts.
var awaitFillHook, awaitCheckpointHook, checkpointHook func()

// filler is the filler's own handles of the journal files, opened as it
// first writes each, and its chunk of zeros.
type filler struct {
	j     *journal
	files [2]File
	zeros []byte
}

// fillStart fills the first chunk of file 0, if it is not, before Open
// returns: the first groups, which a store's first seconds make many
// of (every new log's first entry), then find a journal to write, and the
// filler (fill) is asked for more from there on.
func (j *journal) fillStart() *filler {
	fl := &filler{j: j, zeros: make([]byte, min(journalFillChunk, journalFileBytes))}
	end := min(journalFillChunk, journalFileBytes)
	j.target[0].Store(end)
	fl.fillTo(0, end)
	return fl
}

// fillAhead asks the filler (committer) for journalFillAhead past a
// record of size bytes at the write offset: in the current file, and
// when that passes its end, the next pass's first record and as much
// again at the other file's start.
func (j *journal) fillAhead(size int64) {
	end := j.off + size + journalFillAhead
	j.raiseFill(j.cur, end)
	if end > journalFileBytes {
		j.raiseFill(1-j.cur, size+journalFillAhead)
	}
}

// raiseFill raises file i's fill target to end, rounded up to a chunk,
// within the file's size, and wakes the filler if it rose.
func (j *journal) raiseFill(i int, end int64) {
	end = min((end+journalFillChunk-1)/journalFillChunk*journalFillChunk, journalFileBytes)
	for {
		t := j.target[i].Load()
		if end <= t {
			return
		}
		if j.target[i].CompareAndSwap(t, end) {
			signal(j.fillKick)
			return
		}
	}
}

// fill fills the journal files up to their targets as they rise, until
// both are filled to their size or Close comes first.
func (j *journal) fill(fl *filler) {
	defer close(j.fillDone)
	defer fl.close()
	for {
		for i := range journalNames {
			if !fl.fillTo(i, j.target[i].Load()) {
				return
			}
		}
		if j.filled[0].Load() >= journalFileBytes && j.filled[1].Load() >= journalFileBytes {
			return
		}
		select {
		case <-j.fillKick:
		case <-j.quit:
			return
		}
	}
}

// close closes the filler's handles.
func (fl *filler) close() {
	for _, f := range fl.files {
		if f != nil {
			_ = f.Close()
		}
	}
}

// fillTo fills file i up to end and says whether it did. A failed open,
// write or sync ends the filling (logged): the journal then uses what is
// filled.
func (fl *filler) fillTo(i int, end int64) bool {
	if fl.j.filled[i].Load() >= end {
		return true
	}
	err := fl.fillFile(i, end)
	if err != nil {
		fl.j.s.logger.Warn("storage-journal-fill-failed", zap.String("file", journalNames[i]), zap.Error(err))
	}
	return err == nil
}

// fillFile writes zeros from filled[i] to end, a chunk at a time,
// publishing each chunk once synced. It stops early, without an error,
// when the journal stops.
func (fl *filler) fillFile(i int, end int64) error {
	j := fl.j
	if fl.files[i] == nil {
		f, err := j.s.fs.OpenFile(filepath.Join(j.s.segDir, journalNames[i]), os.O_RDWR, 0)
		if err != nil {
			return err
		}
		fl.files[i] = f
	}
	f := fl.files[i]
	for off := j.filled[i].Load(); off < end; {
		select {
		case <-j.quit:
			return nil
		default:
		}
		n := min(int64(len(fl.zeros)), end-off)
		if _, err := f.WriteAt(fl.zeros[:n], off); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		off += n
		j.filled[i].Store(off)
		signal(j.fillWake)
	}
	return nil
}

// awaitFilled waits until file i is filled up to end (the committer, with
// the filler asked for it by fillAhead) and says whether it is: false
// only when the filler stopped short of it (a failed fill). The committer
// runs before Close stops the filler, so the wait ends.
func (j *journal) awaitFilled(i int, end int64) bool {
	if j.filled[i].Load() < end && awaitFillHook != nil {
		awaitFillHook()
	}
	for j.filled[i].Load() < end {
		select {
		case <-j.fillWake:
		case <-j.fillDone:
			return j.filled[i].Load() >= end
		}
	}
	return true
}
