package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/kgateway/kgateway/storage/fsys"
	"go.uber.org/zap"
)

// Store is one data directory: segment files plus one pebble instance for
// the ledger lists, the entry index, the time index and metadata.
type Store struct {
	segDir string
	fs     FS
	db     *pebble.DB
	logger *zap.Logger
	opts   Options
	c      *committer
	// j is the journal of frames not yet synced in their files (nil
	// without Options.JournalBytes; journal.go, I15).
	j *journal
	// journalSeen is the newest journal epoch Open found, journalReplayed
	// how many frames it wrote back (replayJournal).
	journalSeen     uint64
	journalReplayed int
	// tail is the tail cache of recently written entries (tailcache.go).
	tail tailCache

	// closeMu is held (read) by every public operation for its duration and
	// (write) by Close, so Close never pulls pebble out from under one.
	closeMu sync.RWMutex
	closed  bool // guarded by closeMu

	// ledgerMu serializes ledger creation: it guards nextLedger and is held
	// across the durable write that records a new ledger, so ledger IDs are
	// store-wide unique and never reused (file names stay unique too).
	ledgerMu   sync.Mutex
	nextLedger LedgerID

	mu struct {
		sync.Mutex
		logs map[LogID]*logState
	}

	// dirUnsynced: a ledger file was created (or a spare renamed) in
	// segments/ without a directory sync; the next group commit syncs
	// the directory first (I1, openLedgerFile).
	dirUnsynced atomic.Bool

	// lowSpace is set once a write (or an allocation ahead of one) failed
	// for lack of space: from then on until the store is reopened no
	// trimmed file is kept for reuse (I8) and no blocks are allocated
	// ahead of the writes (prealloc.go).
	lowSpace atomic.Bool
	// noAlloc is set once the file system refused an allocation ahead of
	// the writes for any reason but space (it has no fallocate).
	noAlloc atomic.Bool
}

// MetaOp is one write to the metadata keyspace.
type MetaOp struct {
	Key, Value []byte
	Delete     bool
}

// SegmentFileName is the base name of a ledger's file inside the store's
// segments directory. Fault-injection tests use it to target one ledger.
func SegmentFileName(log LogID, ledger LedgerID) string {
	return fmt.Sprintf("%016x-%016x.seg", uint64(log), uint64(ledger))
}

func parseSegmentFileName(name string) (LogID, LedgerID, bool) {
	var log, led uint64
	if len(name) != 37 {
		return 0, 0, false
	}
	if _, err := fmt.Sscanf(name, "%016x-%016x.seg", &log, &led); err != nil {
		return 0, 0, false
	}
	return LogID(log), LedgerID(led), true
}

func (s *Store) segPath(log LogID, led LedgerID) string {
	return filepath.Join(s.segDir, SegmentFileName(log, led))
}

// Open opens (creating if needed) the store in dir. It scans only the
// unindexed tail of each log's newest ledger, truncating a torn tail.
func Open(dir string, opts Options) (*Store, error) {
	if opts.FS == nil {
		opts.FS = OSFS()
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.MaxGroupBytes <= 0 {
		opts.MaxGroupBytes = 8 << 20
	}
	if opts.TailCacheBytes == 0 {
		opts.TailCacheBytes = DefaultTailCacheBytes
	}
	s := &Store{segDir: filepath.Join(dir, "segments"), fs: opts.FS, logger: opts.Logger, opts: opts}
	s.tail.limit = opts.TailCacheBytes
	s.mu.logs = make(map[LogID]*logState)
	// I9: the data directory and segments/ are durable before anything is
	// written into them (pebble does the same for index/).
	if err := fsys.MkdirAllSync(s.fs, s.segDir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", s.segDir, err)
	}
	if err := syncDataDir(s.fs, dir); err != nil {
		return nil, err
	}
	db, err := pebble.Open(filepath.Join(dir, "index"), indexOptions(opts))
	if err != nil {
		return nil, fmt.Errorf("storage: open index: %w", err)
	}
	s.db = db
	start := time.Now()
	if err := s.recover(); err != nil {
		s.closeFiles()
		_ = db.Close()
		return nil, err
	}
	s.logger.Info("storage-opened", zap.String("dir", dir), zap.Int("logs", len(s.mu.logs)),
		zap.Duration("took", time.Since(start)))
	if s.j, err = openJournal(s, s.journalSeen); err != nil {
		s.closeFiles()
		_ = db.Close()
		return nil, err
	}
	s.c = newCommitter(s)
	s.c.stepper, _ = opts.FS.(fsys.Stepper)
	go s.c.run()
	return s, nil
}

// syncDataDir syncs dir and its parent at every Open (I9), whoever
// created them: MkdirAllSync syncs only what it creates, and a data
// directory made by an installer, an operator or a container runtime,
// or left by a start cut short, may still have its entry (or segments/'s)
// only in the page cache; a power cut would take it with every
// acknowledged entry. Two directory fsyncs per start.
func syncDataDir(fs fsys.FS, dir string) error {
	dir = filepath.Clean(dir)
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := fs.SyncDir(d); err != nil {
			return fmt.Errorf("storage: sync directory %s: %w", d, err)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return nil
}

// indexMemTableBytes is the index's memtable size (pebble's default is
// 4 MiB). Every log appends to its own key range, so each flushed table
// spans the ranges of all the logs written meanwhile, and each compaction
// out of level 0 rewrites all of the base level under it: with many logs
// of small entries, compactions cost most of the index's CPU, and fewer,
// larger flushes cut them (BENCHMARKS.md "Storage: the pebble index's
// CPU"). The price is memory, up to two memtables while one flushes, and
// up to a memtable's worth of WAL replayed at Open.
const indexMemTableBytes = 32 << 20

// indexOptions is the pebble index's configuration.
func indexOptions(opts Options) *pebble.Options {
	po := &pebble.Options{FS: opts.PebbleFS, Logger: pebbleLogger{opts.Logger.Sugar()}}
	// No read-triggered compactions: a read must not cause a write (R1).
	po.Experimental.ReadSamplingMultiplier = -1
	po.MemTableSize = indexMemTableBytes
	return po
}

// pebbleLogger routes pebble's log lines to zap at debug level.
type pebbleLogger struct{ l *zap.SugaredLogger }

func (p pebbleLogger) Infof(format string, args ...interface{})  { p.l.Debugf(format, args...) }
func (p pebbleLogger) Errorf(format string, args ...interface{}) { p.l.Errorf(format, args...) }
func (p pebbleLogger) Fatalf(format string, args ...interface{}) { p.l.Fatalf(format, args...) }

// enter starts a public operation; the caller must call s.closeMu.RUnlock.
func (s *Store) enter() error {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return ErrClosed
	}
	return nil
}

// Close syncs and closes. Appends after Close fail with ErrClosed.
func (s *Store) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	// Every Write has returned (they hold closeMu), so the committer's queue
	// is final: drain it so every Pending is answered.
	s.c.stop()
	errs := []error{s.j.stop()}
	// Flush NoSync index commits to the WAL durably (not needed for D2 —
	// recovery re-indexes the tail — but it makes the next Open cheap).
	if err := s.db.LogData(nil, pebble.Sync); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, s.closeFiles())
	errs = append(errs, s.db.Close())
	return errors.Join(errs...)
}

func (s *Store) closeFiles() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, l := range s.mu.logs {
		// No operation runs (closeMu is held): the writer's view is ours.
		errs = append(errs, l.cutReused())
		l.freeAllocated()
		l.mu.Lock()
		for _, lf := range l.mu.files {
			if lf.file != nil {
				errs = append(errs, lf.file.Close())
				lf.file = nil
			}
		}
		l.mu.Unlock()
	}
	return errors.Join(errs...)
}

// getLog returns the open log or ErrNoLog.
func (s *Store) getLog(id LogID) (*logState, error) {
	s.mu.Lock()
	l := s.mu.logs[id]
	s.mu.Unlock()
	if l == nil {
		return nil, fmt.Errorf("%w: %v", ErrNoLog, id)
	}
	return l, nil
}

// CreateLog creates an empty NORMAL log with one open ledger.
func (s *Store) CreateLog(id LogID) error { return s.CreateLogs(id) }

// CreateLogs creates empty NORMAL logs, each with one open ledger, with
// one synced index commit for all of them, then their first ledger files
// without a directory sync (precreate.go; with a Replicator, or when a
// creation fails, a log's first Write creates its file:
// materializeLocked). Creating a topic of many partitions thus costs one
// sync and a file create per partition, not also a directory sync and a
// synced commit per partition. It is all or nothing: if any id exists
// (ErrLogExists) or the commit fails, no log is added.
func (s *Store) CreateLogs(ids ...LogID) error { return s.createLogs(ids, 0) }

// CreateLogAt creates an empty NORMAL log whose start and end are start:
// its first Write gets offset start. It is CreateLogs otherwise (one
// synced index commit, no file until the first Write), and a reopen
// keeps start: the log record holds it as the log start, the ledger
// record as the first ledger's first offset (I1, I3). A new owner in
// cluster mode rebuilds a partition whose older offsets are gone with it.
func (s *Store) CreateLogAt(id LogID, start Offset) error {
	if start < 0 {
		return fmt.Errorf("%w: %v: start %v", ErrInvalid, id, start)
	}
	return s.createLogs([]LogID{id}, start)
}

// createLogs creates ids, each starting (and ending) at start, then
// their files (precreate.go).
func (s *Store) createLogs(ids []LogID, start Offset) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	if err := s.addLogs(ids, start); err != nil {
		return err
	}
	s.precreate(ids)
	return nil
}

// addLogs records ids, each starting (and ending) at start, with one
// synced commit, and adds them without files. Needs s.enter.
func (s *Store) addLogs(ids []LogID, start Offset) error {
	s.ledgerMu.Lock()
	defer s.ledgerMu.Unlock()
	seen := make(map[LogID]bool, len(ids))
	s.mu.Lock()
	for _, id := range ids {
		_, exists := s.mu.logs[id]
		if exists || seen[id] {
			s.mu.Unlock()
			return fmt.Errorf("%w: %v", ErrLogExists, id)
		}
		seen[id] = true
	}
	s.mu.Unlock()
	meta := ledgerMeta{FirstOffset: start, Created: time.Now().UnixNano()}
	b := s.db.NewBatch()
	defer b.Close()
	for i, id := range ids {
		led := s.nextLedger + LedgerID(i)
		_ = b.Set(logKey(id), logMeta{Start: start}.encode(), nil)
		_ = b.Set(ledgerKey(id, led), meta.encode(), nil)
	}
	_ = b.Set(keyNextLedger, appendU64(nil, uint64(s.nextLedger+LedgerID(len(ids)))), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("storage: create %d logs: %w", len(ids), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, id := range ids {
		led := s.nextLedger + LedgerID(i)
		l := newLogState(id)
		l.w.ledger = led // l.w.file stays nil until the first Write
		l.w.next = start
		l.mu.start, l.mu.end = start, start
		l.mu.ledgers = []ledgerRec{{id: led, meta: meta}}
		l.mu.files[led] = &ledgerFile{name: s.segPath(id, led)}
		s.mu.logs[id] = l
	}
	s.nextLedger += LedgerID(len(ids))
	return nil
}

// openLedgerFile gives ledger led of l its file and makes the directory
// entry durable before any record names an entry of it (I1): the log's
// spare when it has one (I8; renamed into place and opened without
// truncating, since writing over its blocks is the point), else a new
// empty file. reused says which. Needs appendMu (Roll, which allocates
// led, also holds ledgerMu).
//
// With lazy, the directory is not synced here: the file's entry is marked
// unsynced (dirUnsynced) and the group commit that takes the file's first
// entry syncs the directory before it syncs, journals or indexes anything
// (I1), once for every file created since.
func (s *Store) openLedgerFile(l *logState, led LedgerID, lazy bool) (f File, reused bool, err error) {
	name := s.segPath(l.id, led)
	flag := os.O_RDWR | os.O_CREATE | os.O_TRUNC
	if reused = s.takeSpare(l, name); reused {
		flag = os.O_RDWR
	}
	if f, err = s.fs.OpenFile(name, flag, 0o644); err != nil {
		return nil, false, fmt.Errorf("storage: create ledger file: %w", err)
	}
	if lazy {
		s.dirUnsynced.Store(true)
		return f, reused, nil
	}
	if err := s.fs.SyncDir(s.segDir); err != nil {
		_ = f.Close()
		return nil, false, fmt.Errorf("storage: sync segments dir: %w", err)
	}
	return f, reused, nil
}

// Logs lists every log, in ID order.
func (s *Store) Logs() []LogID {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]LogID, 0, len(s.mu.logs))
	for id := range s.mu.logs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Info returns one consistent view of the log's bounds and ledger list.
func (s *Store) Info(id LogID) (LogInfo, error) {
	if err := s.enter(); err != nil {
		return LogInfo{}, err
	}
	defer s.closeMu.RUnlock()
	l, err := s.getLog(id)
	if err != nil {
		return LogInfo{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	sn, err := l.snapLocked()
	if err != nil {
		return LogInfo{}, err
	}
	info := LogInfo{ID: id, State: sn.state, Start: sn.start, End: sn.end}
	info.Ledgers = make([]LedgerInfo, len(l.mu.ledgers))
	for i, r := range l.mu.ledgers {
		info.Ledgers[i] = r.meta.info(r.id)
	}
	return info, nil
}
