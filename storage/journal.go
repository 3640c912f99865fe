package storage

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"go.uber.org/zap"
)

// Journaled group commits (doc.go "Journaled commits", I15): a group of
// small entries spread over many logs is made durable by one record in a
// journal file of the store's own, written and fdatasynced once, instead
// of one fdatasync per segment file. The frames are in their segment
// files too (page cache); a checkpoint syncs those files in the
// background, and Open writes every frame of the journal back into its
// file before recovery.
//
// The journal is two files in segments/ (journal-0.jnl, journal-1.jnl),
// written in turns: one pass (an epoch) appends records to one file from
// its start until the next record would pass journalFileBytes; then the
// files written by that pass are checkpointed while the next pass writes
// the other file from its start, over the blocks of its pass before,
// once that pass's checkpoint has finished. So from the second pass of a
// file on, a journal fdatasync overwrites blocks the file already has:
// no file size to commit, and on ext4 no journal commit of the file
// system (the cost that every fdatasync of pebble's WAL, which grows,
// paid when the frames went into the index batch).
//
// A record is
//
//	[0:4)   length of the body, uint32 big-endian
//	[4:8)   CRC32C (Castagnoli) of bytes [8:end)
//	[8:16)  epoch of the pass that wrote it
//	[16:)   body: per frame, log, ledger and position (uint64 each), the
//	        frame's length (uint32) and the frame as written to its file
//
// A pass's records lie back to back from the file's start, so a reader
// takes records while each is whole (length and CRC) and of the epoch of
// the first; an older pass's records past them, or a torn record, end
// the pass.

// DefaultJournalBytes is the server's Options.JournalBytes: a group whose
// entries average at most this many bytes per file it touches is
// journaled (a group of a few small records per partition; a batch of a
// producer at its default batch.size, 16 KiB, and a little more).
const DefaultJournalBytes = 32 << 10

// journalFileBytes is how large a pass lets a journal file grow (a var
// for tests); journalSyncers how many files a checkpoint syncs at a time.
// At 20 MB/s of journaled frames a pass lasts about 1.6 s, and a
// checkpoint of a thousand files at four at a time takes about a second.
var journalFileBytes int64 = 32 << 20

const (
	journalSyncers  = 4
	journalHdrLen   = 16
	journalFrameHdr = 3*8 + 4
)

// journalNames are the journal's two files, in segments/.
var journalNames = [2]string{"journal-0.jnl", "journal-1.jnl"}

// journal is the store's journal of frames not yet synced in their files
// (nil without Options.JournalBytes, or with a Replicator). The
// committer alone writes records (cur, off, epoch, buf, broken); mu
// guards the files to checkpoint.
type journal struct {
	s        *Store
	maxBytes int // Options.JournalBytes
	files    [2]File
	cur      int    // the file being written
	off      int64  // where its next record goes
	epoch    uint64 // the pass being written
	buf      []byte
	broken   bool // a journal write or sync failed: no more journaled groups
	kick     chan struct{}
	quit     chan struct{}
	done     chan struct{}
	mu       struct {
		sync.Mutex
		// touched: files with frames of the current pass; passed: those
		// of the finished pass, until its checkpoint has synced them
		// (nil then: the other file may be written over).
		touched map[File]*journaled
		passed  map[File]*journaled
		// kept: a checkpoint sync failed, so the journal holds frames
		// that no later sync may be trusted to have made durable in
		// place: Close leaves the journal for Open to write back.
		kept bool
	}
}

// journaled is one file with frames in the journal and not yet synced in
// place.
type journaled struct {
	l      *logState
	ledger LedgerID
}

// openJournal opens the journal files, creating them (and syncing the
// directory, so that they exist after a crash, I9) when missing. Open
// has written back and emptied them before (replayJournal).
func openJournal(s *Store) (*journal, error) {
	if s.opts.JournalBytes <= 0 || s.opts.Replicator != nil {
		return nil, nil
	}
	j := &journal{s: s, maxBytes: s.opts.JournalBytes, epoch: 1, kick: make(chan struct{}, 1),
		quit: make(chan struct{}), done: make(chan struct{})}
	j.mu.touched = make(map[File]*journaled)
	for i, name := range journalNames {
		f, err := s.fs.OpenFile(filepath.Join(s.segDir, name), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			j.closeFiles()
			return nil, fmt.Errorf("storage: open journal: %w", err)
		}
		j.files[i] = f
	}
	if err := s.fs.SyncDir(s.segDir); err != nil {
		j.closeFiles()
		return nil, fmt.Errorf("storage: sync segments dir: %w", err)
	}
	go j.run()
	return j, nil
}

func (j *journal) closeFiles() {
	for i, f := range j.files {
		if f != nil {
			_ = f.Close()
			j.files[i] = nil
		}
	}
}

// wants says whether a group is journaled: it touches at least two files
// and its entries average at most maxBytes per file. One file is synced
// as cheaply as the journal; large entries would be written twice. When
// the record would pass the current file's end, the pass ends here if
// the other file's previous pass is checkpointed; if it is not yet, the
// group is not journaled (its files are synced as without a journal).
func (j *journal) wants(group []*Pending, files int) bool {
	if j == nil || j.broken || files < 2 {
		return false
	}
	size := int64(journalHdrLen)
	for _, p := range group {
		size += journalFrameHdr + frameHeaderLen + int64(p.hdr.Size)
	}
	if size-journalHdrLen-int64(len(group))*journalFrameHdr > int64(j.maxBytes)*int64(files) || size > journalFileBytes {
		return false
	}
	if j.off+size <= journalFileBytes {
		return true
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mu.passed != nil {
		return false // the other file's pass is not checkpointed yet
	}
	j.mu.passed, j.mu.touched = j.mu.touched, make(map[File]*journaled)
	j.cur, j.off = 1-j.cur, 0
	j.epoch++
	signal(j.kick)
	return true
}

// write makes the group's frames durable in the journal: one record,
// written after the frames were written to their files and fdatasynced
// before the group is indexed or answered (I15). A failed write or sync
// fails every live log of the group, as a failed fdatasync of their
// files would, and ends journaling.
func (j *journal) write(group []*Pending, failed map[*logState]error) {
	b := append(j.buf[:0], make([]byte, journalHdrLen)...)
	for _, p := range group {
		if failed[p.log] != nil {
			continue
		}
		h := p.hdr
		b = binary.BigEndian.AppendUint64(b, uint64(p.log.id))
		b = binary.BigEndian.AppendUint64(b, uint64(h.Ledger))
		b = binary.BigEndian.AppendUint64(b, uint64(h.Pos))
		b = binary.BigEndian.AppendUint32(b, uint32(frameHeaderLen+len(p.payload)))
		b = append(append(b, p.frame[:]...), p.payload...)
	}
	binary.BigEndian.PutUint32(b[0:], uint32(len(b)-8))
	binary.BigEndian.PutUint64(b[8:], j.epoch)
	binary.BigEndian.PutUint32(b[4:], crc32.Checksum(b[8:], castagnoli))
	j.buf = b
	f := j.files[j.cur]
	_, err := f.WriteAt(b, j.off)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		j.broken = true
		j.s.logger.Error("storage-journal-failed", zap.Error(err))
		for _, p := range group {
			if failed[p.log] == nil {
				p.log.fail(err)
				failed[p.log] = err
			}
		}
		return
	}
	j.off += int64(len(b))
	j.track(group, failed)
}

// track records the files of a journaled group, once its record is
// durable, for the checkpoint of its pass.
func (j *journal) track(group []*Pending, failed map[*logState]error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, p := range group {
		if failed[p.log] == nil && j.mu.touched[p.file] == nil {
			j.mu.touched[p.file] = &journaled{l: p.log, ledger: p.hdr.Ledger}
		}
	}
}

func (j *journal) run() {
	defer close(j.done)
	for {
		select {
		case <-j.kick:
			j.checkpointPassed()
		case <-j.quit:
			return
		}
	}
}

// stop ends the checkpointer, syncs every file with journaled frames and
// empties the journal, so that a clean restart has nothing to write back.
// The committer has stopped.
func (j *journal) stop() error {
	if j == nil {
		return nil
	}
	close(j.quit)
	<-j.done
	j.checkpointAll()
	j.mu.Lock()
	kept := j.mu.kept
	j.mu.Unlock()
	var errs []error
	if !j.broken && !kept {
		for _, f := range j.files {
			errs = append(errs, f.Truncate(0), f.Sync())
		}
	}
	j.closeFiles()
	return errors.Join(errs...)
}

// checkpointPassed syncs the files of the finished pass in place; then
// the other journal file may be written over.
func (j *journal) checkpointPassed() {
	j.mu.Lock()
	files := j.mu.passed
	j.mu.Unlock()
	if files == nil {
		return
	}
	ok := j.syncAll(files)
	j.mu.Lock()
	defer j.mu.Unlock()
	if ok {
		j.mu.passed = nil
	}
}

// checkpointAll syncs every file with journaled frames in place (Close;
// tests). Nothing may be committed meanwhile.
func (j *journal) checkpointAll() {
	j.checkpointPassed()
	j.mu.Lock()
	files := j.mu.touched
	j.mu.touched = make(map[File]*journaled)
	j.mu.Unlock()
	j.syncAll(files)
}

// syncAll syncs files, journalSyncers at a time, and says whether every
// one's frames may leave the journal: a file whose ledger is gone
// (trimmed, deleted, offloaded: its record is durably gone, so Open
// would skip its frames) needs no sync; a failed sync fails the log, and
// the pass stays in the journal (its file is not written over).
func (j *journal) syncAll(files map[File]*journaled) bool {
	if len(files) == 0 {
		return true
	}
	work := make(chan File)
	out := make(chan bool, len(files))
	for range min(journalSyncers, len(files)) {
		go func() {
			for f := range work {
				out <- j.syncInPlace(f, files[f])
			}
		}()
	}
	for f := range files {
		work <- f
	}
	close(work)
	ok := true
	for range files {
		ok = <-out && ok
	}
	return ok
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
	j.mu.Lock()
	j.mu.kept = true
	j.mu.Unlock()
	return false
}

// journalFrame is one frame read back from the journal.
type journalFrame struct {
	log    LogID
	ledger LedgerID
	pos    int64
	frame  []byte
}

// readJournalPass returns the epoch and frames of the pass at the start
// of a journal file's contents (epoch 0: none): its records, back to
// back, while each is whole and of the first one's epoch.
func readJournalPass(data []byte) (epoch uint64, frames []journalFrame) {
	for off := 0; off+journalHdrLen <= len(data); {
		n := int(binary.BigEndian.Uint32(data[off:]))
		if n < journalHdrLen-8 || off+8+n > len(data) {
			break
		}
		rec := data[off : off+8+n]
		if crc32.Checksum(rec[8:], castagnoli) != binary.BigEndian.Uint32(rec[4:]) {
			break
		}
		e := binary.BigEndian.Uint64(rec[8:])
		if epoch != 0 && e != epoch {
			break
		}
		fs, ok := parseJournalBody(rec[journalHdrLen:])
		if !ok {
			break
		}
		epoch, frames = e, append(frames, fs...)
		off += len(rec)
	}
	return epoch, frames
}

func parseJournalBody(b []byte) ([]journalFrame, bool) {
	var out []journalFrame
	for len(b) > 0 {
		if len(b) < journalFrameHdr {
			return nil, false
		}
		n := int(binary.BigEndian.Uint32(b[24:]))
		if len(b) < journalFrameHdr+n {
			return nil, false
		}
		out = append(out, journalFrame{log: LogID(binary.BigEndian.Uint64(b)),
			ledger: LedgerID(binary.BigEndian.Uint64(b[8:])), pos: int64(binary.BigEndian.Uint64(b[16:])),
			frame: b[journalFrameHdr : journalFrameHdr+n]})
		b = b[journalFrameHdr+n:]
	}
	return out, true
}

// replayJournal writes every frame of the journal back into its file,
// syncs the files and only then empties the journal (I15), before
// recovery reads any file: the passes of both journal files, the older
// first, and any frame an earlier version kept in the index (keys
// j|log|ledger|pos). A frame whose ledger is gone (no record, or
// offloaded) is skipped: its record was removed durably after the frame
// was journaled. Positions are never written twice with different bytes
// while a ledger lives, so writing a frame that its file already holds
// changes nothing. Needs loadLogs.
func (s *Store) replayJournal() error {
	frames, err := indexJournal(s.db)
	if err != nil {
		return err
	}
	type pass struct {
		epoch  uint64
		frames []journalFrame
	}
	var passes []pass
	var jfiles []File
	defer func() {
		for _, f := range jfiles {
			_ = f.Close()
		}
	}()
	for _, name := range journalNames {
		f, err := s.fs.OpenFile(filepath.Join(s.segDir, name), os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		jfiles = append(jfiles, f)
		size, err := f.Size()
		if err != nil {
			return err
		}
		data := make([]byte, size)
		if _, err := f.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("storage: read journal %s: %w", name, err)
		}
		if e, fs := readJournalPass(data); e != 0 {
			passes = append(passes, pass{e, fs})
		}
	}
	slices.SortFunc(passes, func(a, b pass) int { return cmp.Compare(a.epoch, b.epoch) })
	for _, p := range passes {
		frames = append(frames, p.frames...)
	}
	n, files, err := writeBack(s, frames)
	if err != nil {
		return err
	}
	for _, f := range jfiles {
		if err := f.Truncate(0); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if n > 0 {
		s.logger.Info("storage-journal-replayed", zap.Int("frames", n), zap.Int("files", files))
	}
	return s.db.DeleteRange([]byte{prefixJournal}, []byte{prefixJournal + 1}, pebble.Sync)
}

// indexJournal reads the frames an earlier version journaled in the
// index (j|log|ledger|pos).
func indexJournal(db *pebble.DB) ([]journalFrame, error) {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixJournal}, UpperBound: []byte{prefixJournal + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []journalFrame
	for valid := it.First(); valid; valid = it.Next() {
		k := it.Key()
		if len(k) != journalKeyLen {
			return nil, fmt.Errorf("%w: journal key", ErrCorrupt)
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, err
		}
		out = append(out, journalFrame{log: LogID(binary.BigEndian.Uint64(k[1:])),
			ledger: LedgerID(binary.BigEndian.Uint64(k[9:])), pos: int64(binary.BigEndian.Uint64(k[17:])),
			frame: slices.Clone(v)})
	}
	return out, it.Error()
}

// journalKeyLen is the length of an index journal key (j|log|ledger|pos).
const journalKeyLen = 1 + 3*8

func journalKey(id LogID, led LedgerID, pos int64) []byte {
	return appendU64(appendU64(appendU64([]byte{prefixJournal}, uint64(id)), uint64(led)), uint64(pos))
}

// writeBack writes frames at their places in s's files, in order, and
// syncs the files written; it returns how many frames and files it
// wrote. Needs loadLogs.
func writeBack(s *Store, frames []journalFrame) (n, files int, err error) {
	open := make(map[string]File)
	defer func() {
		for _, f := range open {
			_ = f.Close()
		}
	}()
	for _, fr := range frames {
		l := s.mu.logs[fr.log]
		if l == nil || l.mu.files[fr.ledger] == nil {
			continue
		}
		name := l.mu.files[fr.ledger].name
		f := open[name]
		if f == nil {
			if f, err = s.fs.OpenFile(name, os.O_RDWR, 0); errors.Is(err, fs.ErrNotExist) {
				return 0, 0, fmt.Errorf("%w: %s is missing, the journal has frames of it", ErrCorrupt, name)
			} else if err != nil {
				return 0, 0, err
			}
			open[name] = f
		}
		if _, err := f.WriteAt(fr.frame, fr.pos); err != nil {
			return 0, 0, fmt.Errorf("storage: replay journal into %s: %w", name, err)
		}
		n++
	}
	for name, f := range open {
		if err := f.Sync(); err != nil {
			return 0, 0, fmt.Errorf("storage: sync %s after replaying the journal: %w", name, err)
		}
	}
	return n, len(open), nil
}
