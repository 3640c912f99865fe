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
	"sync/atomic"

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
// once that pass's checkpoint has finished. The files keep their size:
// the part of a new file a pass writes is filled with zeros first (real
// blocks, synced; journalfill.go), a bounded distance ahead of the pass,
// and neither Close nor Open shortens one. So a journal fdatasync
// overwrites blocks the file already has: no file size to commit, and on
// ext4 no journal commit of the file system (the cost that every
// fdatasync of a growing file pays, pebble's WAL among them).
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
// the pass. For that a pass's epoch must be above every epoch the file
// holds, across restarts too: the index keeps a bound (s|journal-epoch)
// above every epoch ever written, and each Open reserves the next
// journalEpochReserve epochs by raising it (synced) before any record is
// written. Once Open has written a pass back, or Close has checkpointed
// it, the pass is retired: its first header is zeroed (synced), so that
// no later Open takes its frames again; the bytes past it stay, older
// than any pass to come.

// DefaultJournalBytes is the server's Options.JournalBytes: a group whose
// entries average at most this many bytes per file it touches is
// journaled (a group of a few small records per partition; a batch of a
// producer at its default batch.size, 16 KiB, and a little more), and a
// group over journalWideFiles files or more up to four times that.
const DefaultJournalBytes = 32 << 10

// journalFileBytes is how large a pass lets a journal file grow (a var
// for tests); journalSyncers how many files a checkpoint syncs at a time.
// At 20 MB/s of journaled frames a pass lasts about 1.6 s, and a
// checkpoint of a thousand files at four at a time takes about a second.
var journalFileBytes int64 = 32 << 20

const (
	journalSyncers = 4
	// journalHurrySyncers: how many more a checkpoint syncs at a time
	// once the committer waits for it (a pass ended before it).
	journalHurrySyncers = 32
	journalHdrLen       = 16
	journalFrameHdr     = 3*8 + 4
	// journalEpochReserve is how many epochs an Open reserves: a pass
	// per 32 MiB journaled, so never used up (the journal stops if so).
	journalEpochReserve = 1 << 32
)

// A group over journalWideFiles files or more is journaled up to
// journalWideFactor times Options.JournalBytes a file: there one record
// and one fdatasync replace that many fdatasyncs (each a writeback and a
// device flush of its own), which cost more CPU and time than writing
// the frames twice does, now that a record is written from the frames
// (journalrecord.go). A storage benchmark (BenchmarkJournaledGroupCPU,
// groups of one entry to each of 32 files) took 10–46% less CPU per GB
// and 1.5–2.5× the throughput journaled, for entries of 48–120 KiB; for 8
// files CPU was a fifth lower but throughput up to a third lower, and
// for 2 files journaling was slower at no CPU saved.
const (
	journalWideFiles  = 16
	journalWideFactor = 4
)

// journalBound is how many bytes per file a group touching files files
// may average and be journaled, for Options.JournalBytes maxBytes.
func journalBound(maxBytes, files int) int64 {
	if files >= journalWideFiles {
		return int64(maxBytes) * journalWideFactor
	}
	return int64(maxBytes)
}

// keyJournalEpoch holds a bound above every epoch ever written to the
// journal files (uint64).
var keyJournalEpoch = []byte{prefixStore, 'j', 'o', 'u', 'r', 'n', 'a', 'l', '-', 'e', 'p', 'o', 'c', 'h'}

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
	cur      int           // the file being written
	off      int64         // where its next record goes
	epoch    uint64        // the pass being written
	limit    uint64        // the bound Open reserved: epochs stay below it
	buf      []byte        // a record's headers and small frames (journalrecord.go)
	pieces   []recordPiece // its large frames
	bufs     [][]byte      // its buffers, as written
	broken   bool          // a journal write or sync failed: no more journaled groups
	// filled: how much of each file is zeros or records, synced; a pass
	// writes only there. target: how far the committer asked the filler
	// to fill each file (journalfill.go).
	filled   [2]atomic.Int64
	target   [2]atomic.Int64
	fillKick chan struct{}
	// hurrying: the committer waits for the checkpoint, which hurry
	// tells it (a token left by an earlier wait is ignored while
	// hurrying is false); ckptEnd: a checkpoint of the passed files
	// ended (awaitCheckpoint).
	hurrying atomic.Bool
	// passOff is off, for the checkpoint's pacing (syncAll).
	passOff atomic.Int64
	hurry   chan struct{}
	ckptEnd chan struct{}
	// fillWake: the filler filled a chunk (awaitFilled).
	fillWake chan struct{}
	kick     chan struct{}
	quit     chan struct{}
	done     chan struct{}
	fillDone chan struct{}
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
		// checked: the checkpoint of passed ended (and failed, as passed
		// is still set); awaitCheckpoint.
		checked bool
	}
}

// journaled is one file with frames in the journal and not yet synced in
// place.
type journaled struct {
	l      *logState
	ledger LedgerID
}

// openJournal opens the journal files, creating them (and syncing the
// directory, so that they exist after a crash, I9) when missing, and
// reserves its epochs above seen (the newest epoch Open found) and the
// stored bound. Open has written back and retired their passes before
// (replayJournal).
func openJournal(s *Store, seen uint64) (*journal, error) {
	if !s.journalOn() {
		return nil, nil
	}
	j := &journal{s: s, maxBytes: s.opts.JournalBytes, kick: make(chan struct{}, 1), fillKick: make(chan struct{}, 1), fillWake: make(chan struct{}, 1),
		hurry: make(chan struct{}, 1), ckptEnd: make(chan struct{}, 1),
		quit: make(chan struct{}), done: make(chan struct{}), fillDone: make(chan struct{})}
	j.mu.touched = make(map[File]*journaled)
	if err := j.reserveEpochs(seen); err != nil {
		return nil, err
	}
	for i, name := range journalNames {
		f, err := s.fs.OpenFile(filepath.Join(s.segDir, name), os.O_RDWR|os.O_CREATE, 0o644)
		if err == nil {
			j.files[i] = f
			var size int64
			size, err = f.Size()
			j.filled[i].Store(min(size, journalFileBytes))
		}
		if err != nil {
			j.closeFiles()
			return nil, fmt.Errorf("storage: open journal: %w", err)
		}
	}
	if err := s.fs.SyncDir(s.segDir); err != nil {
		j.closeFiles()
		return nil, fmt.Errorf("storage: sync segments dir: %w", err)
	}
	go j.fill(j.fillStart())
	go j.run()
	return j, nil
}

// journalOn says whether the store journals (Options.JournalBytes, no
// Replicator).
func (s *Store) journalOn() bool { return s.opts.JournalBytes > 0 && s.opts.Replicator == nil }

// reserveEpochs sets the first epoch above seen and the stored bound and
// raises the bound (synced) past the epochs this Open may use, before any
// record is written: so a pass's epoch is above every epoch in the files.
func (j *journal) reserveEpochs(seen uint64) error {
	bound := seen
	if v, err := j.s.get(keyJournalEpoch); err == nil && len(v) == 8 {
		bound = max(bound, binary.BigEndian.Uint64(v))
	} else if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	j.epoch, j.limit = bound+1, bound+journalEpochReserve
	if err := j.s.db.Set(keyJournalEpoch, binary.BigEndian.AppendUint64(nil, j.limit), pebble.Sync); err != nil {
		return fmt.Errorf("storage: reserve journal epochs: %w", err)
	}
	return nil
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
// and its entries average at most maxBytes per file (journalBound). One
// file is synced as cheaply as the journal; large entries would be
// written twice. It asks the filler for the record and journalFillAhead
// past it, and journals the group only where the file is filled: when
// the filler is behind the record, it waits for it (awaitFilled). When
// the record would pass the current file's end, the pass ends here once
// the other file's previous pass is checkpointed: while that checkpoint
// runs, the group waits for it and hurries it (awaitCheckpoint); only
// after a failed checkpoint is the group committed as without a journal.
func (j *journal) wants(group []*Pending, files int) bool {
	if j == nil || j.broken || files < 2 {
		return false
	}
	size := int64(journalHdrLen)
	for _, p := range group {
		size += journalFrameHdr + frameHeaderLen + int64(p.hdr.Size)
	}
	if size-journalHdrLen-int64(len(group))*journalFrameHdr > journalBound(j.maxBytes, files)*int64(files) || size > journalFileBytes {
		return false
	}
	j.fillAhead(size)
	if j.off+size <= journalFileBytes {
		return j.awaitFilled(j.cur, j.off+size)
	}
	if j.epoch+1 >= j.limit || !j.awaitFilled(1-j.cur, size) || !j.awaitCheckpoint() {
		return false // the other file is not filled, or its pass is kept
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.mu.passed, j.mu.touched = j.mu.touched, make(map[File]*journaled)
	j.mu.checked = false
	j.cur, j.off = 1-j.cur, 0
	j.passOff.Store(0)
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
	bufs, n := j.buildRecord(group, failed)
	f := j.files[j.cur]
	err := writeRecord(f, bufs, j.off)
	j.releaseRecord()
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
	j.off += n
	j.passOff.Store(j.off)
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

// stop ends the checkpointer and the filler, syncs every file with
// journaled frames and retires the journal's passes, so that a clean
// restart has nothing to write back. The committer has stopped.
func (j *journal) stop() error {
	if j == nil {
		return nil
	}
	close(j.quit)
	<-j.done
	<-j.fillDone
	j.checkpointAll()
	j.mu.Lock()
	kept := j.mu.kept
	j.mu.Unlock()
	var err error
	if !j.broken && !kept {
		err = retireJournal(j.files[:])
	}
	j.closeFiles()
	return err
}

// retireJournal zeroes the first record header of each file and syncs
// it: a reader finds no pass there, and the records past it are of
// epochs below any pass to come. The files keep their blocks.
func retireJournal(files []File) error {
	var zero [journalHdrLen]byte
	for _, f := range files {
		if _, err := f.WriteAt(zero[:], 0); err != nil {
			return fmt.Errorf("storage: retire journal: %w", err)
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("storage: retire journal: %w", err)
		}
	}
	return nil
}

// checkpointPassed syncs the files of the finished pass in place; then
// the other journal file may be written over. It tells a committer
// waiting for it (awaitCheckpoint) when it ends.
func (j *journal) checkpointPassed() {
	defer signal(j.ckptEnd)
	j.mu.Lock()
	files := j.mu.passed
	j.mu.Unlock()
	if files == nil {
		return
	}
	if checkpointHook != nil {
		checkpointHook()
	}
	ok := j.syncAll(files, true)
	j.mu.Lock()
	defer j.mu.Unlock()
	if ok {
		j.mu.passed = nil
	}
	j.mu.checked = true
}

// awaitCheckpoint waits until the finished pass is checkpointed (the
// committer, at a pass's end) and says whether it is: false once a
// checkpoint sync failed (the pass is kept for good). It asks the running
// checkpoint to hurry: waiting costs the group the checkpoint's rest,
// where committing it without the journal would cost an fdatasync for
// each of its files, beside the checkpoint's own, and the same again for
// every group after it until the checkpoint ends. It waits for that
// pass's checkpoint to end, once: the checkpointer (run), kicked as the
// pass ended, runs it (the committer runs before Close stops it), and a
// pass still there after it is kept.
func (j *journal) awaitCheckpoint() bool {
	passed, checked := j.passedState()
	if !passed || checked {
		return !passed
	}
	if awaitCheckpointHook != nil {
		awaitCheckpointHook()
	}
	j.hurrying.Store(true)
	defer j.hurrying.Store(false)
	signal(j.hurry)
	for passed && !checked {
		<-j.ckptEnd // a token may be left by an earlier checkpoint
		passed, checked = j.passedState()
	}
	return !passed
}

// passedState says whether a finished pass waits for its checkpoint
// (passed) and whether that checkpoint ended, failed (checked).
func (j *journal) passedState() (passed, checked bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.mu.passed != nil, j.mu.checked
}

// checkpointAll syncs every file with journaled frames in place (Close;
// tests). Nothing may be committed meanwhile.
func (j *journal) checkpointAll() {
	j.checkpointPassed()
	j.mu.Lock()
	files := j.mu.touched
	j.mu.touched = make(map[File]*journaled)
	j.mu.Unlock()
	j.syncAll(files, false)
}

// syncAll syncs files, journalSyncers at a time (journalHurrySyncers
// more once the committer waits for it: hurry), and says whether every
// one's frames may leave the journal: a file whose ledger is gone
// (trimmed, deleted, offloaded: its record is durably gone, so Open
// would skip its frames) needs no sync; a failed sync fails the log, and
// the pass stays in the journal (its file is not written over).
//
// A checkpoint of a passed pass (paced) starts with one file at a time,
// and goes to journalSyncers once the share of its files started falls
// a sixteenth behind the share of the next pass written: a group
// commit's journal fdatasync then queues behind one sync in place rather
// than several, and the checkpoint's syscalls are spread over the pass
// instead of bunched at its start, while it still ends about when the
// pass does.
func (j *journal) syncAll(files map[File]*journaled, paced bool) bool {
	if len(files) == 0 {
		return true
	}
	work := make(chan File)
	out := make(chan bool, len(files))
	syncers := func(n int) {
		for range min(n, len(files)) {
			go func() {
				for f := range work {
					out <- j.syncInPlace(f, files[f])
				}
			}()
		}
	}
	started := journalSyncers
	if paced {
		started = 1
	}
	syncers(started)
	hurry := j.hurry
	n := int64(0)
	for f := range files {
		if started < journalSyncers && (n+int64(len(files))/16)*journalFileBytes < j.passOff.Load()*int64(len(files)) {
			syncers(journalSyncers - started)
			started = journalSyncers
		}
		n++
		for sent := false; !sent; {
			select {
			case work <- f:
				sent = true
			case <-hurry:
				if j.hurrying.Load() {
					syncers(journalHurrySyncers)
					hurry = nil
				}
			}
		}
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
// syncs the files and only then retires the journal's passes (I15),
// before recovery reads any file: the passes of both journal files, the
// older first, and any frame an earlier version kept in the index (keys
// j|log|ledger|pos). A frame whose ledger is gone (no record, or
// offloaded) is skipped: its record was removed durably after the frame
// was journaled. Positions are never written twice with different bytes
// while a ledger lives, so writing a frame that its file already holds
// changes nothing. It records the newest epoch found (s.journalSeen).
// Needs loadLogs.
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
		data, err := readJournalFile(f)
		if err != nil {
			return fmt.Errorf("storage: read journal %s: %w", name, err)
		}
		if e, fs := readJournalPass(data); e != 0 {
			passes = append(passes, pass{e, fs})
			s.journalSeen = max(s.journalSeen, e)
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
	s.journalReplayed = n
	if err := s.emptyJournal(jfiles); err != nil {
		return err
	}
	if n > 0 {
		s.logger.Info("storage-journal-replayed", zap.Int("frames", n), zap.Int("files", files))
	}
	return s.db.DeleteRange([]byte{prefixJournal}, []byte{prefixJournal + 1}, pebble.Sync)
}

// readJournalFile reads a journal file's contents, or nothing when its
// first record header is zero (retired, or never written): the common
// case of a clean restart reads 16 bytes, not the file.
func readJournalFile(f File) ([]byte, error) {
	size, err := f.Size()
	if err != nil || size < journalHdrLen {
		return nil, err
	}
	var hdr [journalHdrLen]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if hdr == [journalHdrLen]byte{} {
		return nil, nil
	}
	data := make([]byte, size)
	if _, err := f.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return data, nil
}

// emptyJournal leaves the journal files with no pass once their frames
// are written back and synced: with the journal on, and the epoch bound
// in the index (so every epoch in them is below the next pass's), it
// retires them and they keep their blocks; otherwise (an earlier
// version's files, whose epochs the bound does not cover, or a journal
// turned off) it truncates them.
func (s *Store) emptyJournal(jfiles []File) error {
	_, err := s.get(keyJournalEpoch)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if err == nil && s.journalOn() {
		return retireJournal(jfiles)
	}
	for _, f := range jfiles {
		if err := f.Truncate(0); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return nil
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
