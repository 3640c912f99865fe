package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"go.uber.org/zap"
)

// Journaled group commits (doc.go "Journaled commits", I15): a group of
// small entries spread over many logs is made durable by one synced
// pebble batch that holds, beside its index keys, a copy of every frame
// (j|log|ledger|pos -> frame), instead of one fdatasync per file. The
// frames are in their segment files too (page cache); a checkpoint syncs
// those files in the background and then deletes the copies, and Open
// writes every copy still there back into its file before recovery.

// DefaultJournalBytes is a value for Options.JournalBytes (the server
// leaves it 0, off: end to end it was not shown faster): a group whose
// entries average at most this many bytes per file it touches is
// journaled (a group of a few small records per partition; a batch of a
// producer at its default batch.size, 16 KiB, and a little more).
const DefaultJournalBytes = 32 << 10

// journalEvery is how many journaled bytes start a checkpoint; journalIdle
// how long journaled bytes wait for one at most. Both stay well below the
// memtable (journalMemTable), so that the frames are deleted before a
// flush would write them to an sstable. A checkpoint syncs journalSyncers
// files at a time: more concurrent fdatasyncs delay the journal's own WAL
// sync behind them (BenchmarkManyLogsGroup, loaded machine: 66-98 ms a
// round with 16, 23-33 ms with 4, 45 ms with 2).
const (
	journalEvery    = 16 << 20
	journalMemTable = 64 << 20
	journalSyncers  = 4
)

var journalIdle = time.Second // a var for tests

// journalKeyLen is the length of a journal key.
const journalKeyLen = 1 + 3*8

func journalKey(id LogID, led LedgerID, pos int64) []byte {
	return appendU64(appendU64(appendU64([]byte{prefixJournal}, uint64(id)), uint64(led)), uint64(pos))
}

// journal is the store's journal of frames not yet synced in their files
// (nil without Options.JournalBytes, or with a Replicator).
type journal struct {
	s        *Store
	maxBytes int // Options.JournalBytes
	kick     chan struct{}
	quit     chan struct{}
	done     chan struct{}
	mu       struct {
		sync.Mutex
		files map[File]*journaled
		bytes int64
		timer *time.Timer
	}
}

// journaled is one file with frames in the journal and not yet synced in
// place: frames of ledger at positions below end.
type journaled struct {
	l      *logState
	ledger LedgerID
	end    int64
}

func newJournal(s *Store) *journal {
	if s.opts.JournalBytes <= 0 || s.opts.Replicator != nil {
		return nil
	}
	j := &journal{s: s, maxBytes: s.opts.JournalBytes, kick: make(chan struct{}, 1),
		quit: make(chan struct{}), done: make(chan struct{})}
	j.mu.files = make(map[File]*journaled)
	go j.run()
	return j
}

// wants says whether a group is journaled: it touches at least two files
// and its entries average at most maxBytes per file. One file is synced
// as cheaply as the journal; large entries would be written twice.
func (j *journal) wants(group []*Pending, files int) bool {
	if j == nil || files < 2 {
		return false
	}
	bytes := 0
	for _, p := range group {
		bytes += frameHeaderLen + int(p.hdr.Size)
	}
	return bytes <= j.maxBytes*files
}

// add puts p's frame into the group's index batch.
func (j *journal) add(b *pebble.Batch, p *Pending) {
	h := p.hdr
	op := b.SetDeferred(journalKeyLen, frameHeaderLen+int(h.Size))
	copy(op.Key, journalKey(p.log.id, h.Ledger, h.Pos))
	copy(op.Value, p.frame[:])
	copy(op.Value[frameHeaderLen:], p.payload)
	_ = op.Finish()
}

// track records the files of a journaled group, once its batch is
// durable, for the next checkpoint.
func (j *journal) track(group []*Pending, failed map[*logState]error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, p := range group {
		if failed[p.log] != nil {
			continue
		}
		jf := j.mu.files[p.file]
		if jf == nil {
			jf = &journaled{l: p.log, ledger: p.hdr.Ledger}
			j.mu.files[p.file] = jf
		}
		jf.end = max(jf.end, p.hdr.Pos+frameHeaderLen+int64(p.hdr.Size))
		j.mu.bytes += frameHeaderLen + int64(p.hdr.Size)
	}
	if j.mu.bytes >= journalEvery {
		signal(j.kick)
	} else if j.mu.timer == nil && j.mu.bytes > 0 {
		j.mu.timer = time.AfterFunc(journalIdle, func() { signal(j.kick) })
	}
}

func (j *journal) run() {
	defer close(j.done)
	for {
		select {
		case <-j.kick:
			j.checkpoint()
		case <-j.quit:
			return
		}
	}
}

// stop ends the checkpointer and checkpoints what is left, so that a
// clean restart has nothing to replay. The committer has stopped.
func (j *journal) stop() {
	if j == nil {
		return
	}
	close(j.quit)
	<-j.done
	j.checkpoint()
}

// checkpoint syncs every file with journaled frames in place and then
// deletes those frames from the journal. A file whose ledger is gone
// (trimmed, deleted, offloaded: its record is durably gone, so Open
// would skip its frames) needs no sync. A failed sync fails the log and
// keeps its frames: Open writes them back (I15).
func (j *journal) checkpoint() {
	j.mu.Lock()
	files := j.mu.files
	j.mu.files = make(map[File]*journaled)
	j.mu.bytes = 0
	if j.mu.timer != nil {
		j.mu.timer.Stop()
		j.mu.timer = nil
	}
	j.mu.Unlock()
	if len(files) == 0 {
		return
	}
	type done struct {
		jf *journaled
		ok bool
	}
	work := make(chan File)
	out := make(chan done, len(files))
	for range min(journalSyncers, len(files)) {
		go func() {
			for f := range work {
				jf := files[f]
				out <- done{jf, j.syncInPlace(f, jf)}
			}
		}()
	}
	for f := range files {
		work <- f
	}
	close(work)
	b := j.s.db.NewBatch()
	defer b.Close()
	for range files {
		d := <-out
		if d.ok {
			_ = b.DeleteRange(journalKey(d.jf.l.id, d.jf.ledger, 0), journalKey(d.jf.l.id, d.jf.ledger, d.jf.end), nil)
		}
	}
	// NoSync: a deletion lost in a crash only makes Open write the same
	// bytes again at the same places.
	if err := b.Commit(pebble.NoSync); err != nil {
		j.s.logger.Warn("storage-journal-checkpoint-failed", zap.Error(err))
	}
}

// syncInPlace syncs f and says whether its journaled frames may go.
func (j *journal) syncInPlace(f File, jf *journaled) bool {
	err := f.Sync()
	if err == nil {
		return true
	}
	l := jf.l
	l.mu.Lock()
	lf := l.mu.files[jf.ledger]
	gone := lf == nil || lf.removed || lf.file != f
	l.mu.Unlock()
	if gone {
		return true
	}
	j.s.logger.Error("storage-sync-failed", zap.Stringer("log", l.id), zap.Error(err))
	l.fail(err)
	return false
}

// replayJournal writes every journaled frame back into its file, syncs
// the files and deletes the journal (I15), before recovery reads any
// file. A frame whose ledger is gone (no record, or offloaded) is
// skipped: its record was removed durably after the frame was journaled.
// Positions are never written twice with different bytes while a ledger
// lives, so writing a frame that its file already holds changes nothing.
// Needs loadLogs.
func (s *Store) replayJournal() error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixJournal}, UpperBound: []byte{prefixJournal + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	open := make(map[string]File)
	defer func() {
		for _, f := range open {
			_ = f.Close()
		}
	}()
	n, keys := 0, 0
	for valid := it.First(); valid; valid = it.Next() {
		keys++
		k := it.Key()
		if len(k) != journalKeyLen {
			return fmt.Errorf("%w: journal key", ErrCorrupt)
		}
		id, led := LogID(binary.BigEndian.Uint64(k[1:])), LedgerID(binary.BigEndian.Uint64(k[9:]))
		pos := int64(binary.BigEndian.Uint64(k[17:]))
		l := s.mu.logs[id]
		if l == nil || l.mu.files[led] == nil {
			continue
		}
		name := l.mu.files[led].name
		f := open[name]
		if f == nil {
			if f, err = s.fs.OpenFile(name, os.O_RDWR, 0); errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%w: %s is missing, the journal has frames of it", ErrCorrupt, name)
			} else if err != nil {
				return err
			}
			open[name] = f
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		if _, err := f.WriteAt(v, pos); err != nil {
			return fmt.Errorf("storage: replay journal into %s: %w", name, err)
		}
		n++
	}
	if err := it.Error(); err != nil {
		return err
	}
	for name, f := range open {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("storage: sync %s after replaying the journal: %w", name, err)
		}
	}
	if keys == 0 {
		return nil
	}
	s.logger.Info("storage-journal-replayed", zap.Int("frames", n), zap.Int("files", len(open)))
	return s.db.DeleteRange([]byte{prefixJournal}, []byte{prefixJournal + 1}, pebble.Sync)
}
