package storage

// Read-only inspection of a data directory, for `kgateway inspect`,
// `explain` and `verify`. It works on a stopped store and on one a running
// server holds open:
//
//   - pebble is opened with Options.ReadOnly through a file system whose
//     Lock is a no-op. pebble takes its directory lock even when read-only,
//     and the running server holds it; a read-only open writes nothing
//     (no flush, no compaction, no file deletion), so skipping the lock
//     cannot harm the writer. What it sees is the state as of the open:
//     the MANIFEST, the sstables and the WAL replayed into memory.
//   - Segment files are opened O_RDONLY and read with pread.
//
// Caveats of the running case, all transient and reported as errors rather
// than hidden: a compaction may delete an sstable between the MANIFEST read
// and its open (OpenReadOnly retries); retention may remove a ledger file a
// later read wants (the read fails with the file's name); the open ledger
// may have a written-but-unsynced tail beyond the index (Verify reports it
// as a note, not corruption, exactly as recovery would treat it: I4).
// Unlike Open, nothing here recovers: a crashed store's unindexed tail is
// reported, not re-indexed.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// ReadOnly is a read-only view of a store directory.
type ReadOnly struct {
	dir    string
	segDir string
	db     *pebble.DB

	mu struct {
		sync.Mutex
		tails map[LogID][]EntryHeader // Tail, read once per log
	}
}

// noLockFS is the OS file system without pebble's directory lock (see the
// file comment: a read-only open must coexist with the running server).
type noLockFS struct{ vfs.FS }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

func (noLockFS) Lock(string) (io.Closer, error) { return nopCloser{}, nil }

// OpenReadOnly opens dir for inspection without taking pebble's lock and
// without writing anything.
func OpenReadOnly(dir string) (*ReadOnly, error) {
	idx := filepath.Join(dir, "index")
	if _, err := os.Stat(idx); err != nil {
		return nil, fmt.Errorf("storage: %s is not a data directory: %w", dir, err)
	}
	var err error
	for range 5 { // a concurrent compaction can delete a file mid-open
		var db *pebble.DB
		po := &pebble.Options{FS: noLockFS{vfs.Default}, ReadOnly: true, Logger: quietLogger{}}
		po.Experimental.ReadSamplingMultiplier = -1
		if db, err = pebble.Open(idx, po); err == nil {
			return &ReadOnly{dir: dir, segDir: filepath.Join(dir, "segments"), db: db}, nil
		}
	}
	return nil, fmt.Errorf("storage: open index read-only: %w", err)
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{})              {}
func (quietLogger) Errorf(string, ...interface{})             {}
func (quietLogger) Fatalf(format string, args ...interface{}) { panic(fmt.Sprintf(format, args...)) }

// Close releases the view.
func (r *ReadOnly) Close() error { return r.db.Close() }

// SegmentPath is the path of a ledger's file.
func (r *ReadOnly) SegmentPath(log LogID, led LedgerID) string {
	return filepath.Join(r.segDir, SegmentFileName(log, led))
}

func (r *ReadOnly) get(key []byte) ([]byte, error) {
	v, closer, err := r.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	return append([]byte(nil), v...), nil
}

// ScanMeta is Store.ScanMeta on the view.
func (r *ReadOnly) ScanMeta(prefix []byte, fn func(key, value []byte) error) error {
	lo := metaKey(prefix)
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return err
	}
	defer it.Close()
	for valid := it.First(); valid; valid = it.Next() {
		if err := fn(it.Key()[1:], it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

// Logs returns every log's bounds and ledgers, in ID order. The open
// ledger's Entries and Bytes come from the index (its durable record holds
// them only once sealed, I3); End is the end of the last indexed entry.
func (r *ReadOnly) Logs() ([]LogInfo, error) {
	byID, err := r.ledgerRecords()
	if err != nil {
		return nil, err
	}
	ids := make([]LogID, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := make([]LogInfo, 0, len(ids))
	for _, id := range ids {
		info, err := r.logInfo(id, byID[id])
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// Info returns one log's view, or ErrNoLog.
func (r *ReadOnly) Info(id LogID) (LogInfo, error) {
	byID, err := r.ledgerRecords()
	if err != nil {
		return LogInfo{}, err
	}
	recs, ok := byID[id]
	if !ok {
		return LogInfo{}, fmt.Errorf("%w: %v", ErrNoLog, id)
	}
	return r.logInfo(id, recs)
}

func (r *ReadOnly) ledgerRecords() (map[LogID][]ledgerRec, error) {
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixLedger}, UpperBound: []byte{prefixLedger + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	byID := make(map[LogID][]ledgerRec)
	for valid := it.First(); valid; valid = it.Next() {
		k := it.Key()
		if len(k) != 17 {
			return nil, fmt.Errorf("%w: ledger key %x", ErrCorrupt, k)
		}
		m, err := decodeLedgerMeta(it.Value())
		if err != nil {
			return nil, err
		}
		id := LogID(binary.BigEndian.Uint64(k[1:]))
		byID[id] = append(byID[id], ledgerRec{id: LedgerID(binary.BigEndian.Uint64(k[9:])), meta: m})
	}
	for _, recs := range byID {
		sortLedgers(recs) // offset order, as Open keeps them
	}
	return byID, it.Error()
}

func (r *ReadOnly) logInfo(id LogID, recs []ledgerRec) (LogInfo, error) {
	v, err := r.get(logKey(id))
	if err != nil {
		return LogInfo{}, fmt.Errorf("%v: log record: %w", id, err)
	}
	m, err := decodeLogMeta(v)
	if err != nil {
		return LogInfo{}, err
	}
	info := LogInfo{ID: id, State: m.State, Start: m.Start}
	for _, rec := range recs {
		info.Ledgers = append(info.Ledgers, rec.meta.info(rec.id))
	}
	if len(recs) == 0 {
		return info, nil
	}
	open := &info.Ledgers[len(info.Ledgers)-1]
	info.End = open.FirstOffset
	if last, ok, err := r.lastIndexed(id); err != nil {
		return LogInfo{}, err
	} else if ok {
		info.End = max(info.End, last.End())
		if !open.Sealed && last.Ledger == open.ID {
			open.Entries, open.Bytes = int64(last.Entry)+1, last.Pos+frameHeaderLen+int64(last.Size)
		}
	}
	tail, err := r.Tail(id)
	if err != nil {
		return LogInfo{}, err
	}
	if n := len(tail); n > 0 {
		last := tail[n-1]
		info.End = last.End()
		open.Entries, open.Bytes = int64(last.Entry)+1, last.Pos+frameHeaderLen+int64(last.Size)
	}
	return info, nil
}

// Tail returns the entries of the log's open ledger past its last indexed
// one: the whole, CRC-valid frames that continue the offset sequence,
// exactly what Open would re-index (I4). On a stopped store they are a
// crash's unindexed tail; beside a running server they are mostly entries
// whose NoSync index commit pebble has not yet written to its WAL (which a
// read-only open cannot see), plus possibly a group being synced right now
// (not yet durable, D5). Cum is left 0.
func (r *ReadOnly) Tail(id LogID) ([]EntryHeader, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.mu.tails[id]; ok {
		return t, nil
	}
	t, err := r.scanTail(id)
	if err != nil {
		return nil, err
	}
	if r.mu.tails == nil {
		r.mu.tails = make(map[LogID][]EntryHeader)
	}
	r.mu.tails[id] = t
	return t, nil
}

func (r *ReadOnly) scanTail(id LogID) ([]EntryHeader, error) {
	lo, hi := logPrefixRange(prefixLedger, id)
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	if !it.Last() {
		return nil, errors.Join(it.Error(), it.Close())
	}
	led := LedgerID(binary.BigEndian.Uint64(it.Key()[9:]))
	m, err := decodeLedgerMeta(it.Value())
	if err = errors.Join(err, it.Close()); err != nil || m.Sealed {
		return nil, err
	}
	next := EntryHeader{Offset: m.FirstOffset, Ledger: led}
	if last, ok, err := r.lastIndexed(id); err != nil {
		return nil, err
	} else if ok && last.Ledger == led {
		next.Offset, next.Entry, next.Pos = last.End(), last.Entry+1, last.Pos+frameHeaderLen+int64(last.Size)
	}
	f, err := os.Open(r.SegmentPath(id, led))
	if errors.Is(err, fs.ErrNotExist) && next.Pos == 0 {
		return nil, nil // I1: a ledger nothing was written to may have no file yet
	}
	if err != nil {
		return nil, fmt.Errorf("storage: %v %v: %w", id, led, err)
	}
	defer f.Close()
	var out []EntryHeader
	hdr := make([]byte, frameHeaderLen)
	for {
		if _, err := f.ReadAt(hdr, next.Pos); err != nil {
			return out, nil // EOF or a short header: the tail ends
		}
		n, ok := parseFrameLen(hdr)
		if !ok {
			return out, nil
		}
		frame := make([]byte, frameHeaderLen+n)
		if _, err := f.ReadAt(frame, next.Pos); err != nil {
			return out, nil
		}
		ff, err := checkFrame(frame)
		if err != nil || ff.Offset != next.Offset {
			return out, nil // torn, garbage, or not continuing: Open truncates here
		}
		h := next
		h.Records, h.MaxTime, h.Size = ff.Records, ff.MaxTime, int32(ff.Size)
		out = append(out, h)
		next.Offset, next.Entry, next.Pos = h.End(), h.Entry+1, h.Pos+int64(len(frame))
	}
}

func (r *ReadOnly) lastIndexed(id LogID) (EntryHeader, bool, error) {
	lo, hi := logPrefixRange(prefixIndex, id)
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return EntryHeader{}, false, err
	}
	defer it.Close()
	if !it.Last() {
		return EntryHeader{}, false, it.Error()
	}
	h, err := decodeIndex(it.Key(), it.Value())
	return h, err == nil, err
}

// ScanEntries calls fn with every entry of log from the one holding from
// (or the first after it) on, in offset order, until fn returns false:
// the indexed entries, then the open ledger's unindexed tail (Tail).
// Soft-trimmed entries are included: the caller compares with Start.
func (r *ReadOnly) ScanEntries(id LogID, from Offset, fn func(EntryHeader) (bool, error)) error {
	stopped := false
	err := r.scanIndexed(id, from, func(h EntryHeader) (bool, error) {
		more, err := fn(h)
		stopped = !more
		return more, err
	})
	if err != nil || stopped {
		return err
	}
	tail, err := r.Tail(id)
	if err != nil {
		return err
	}
	for _, h := range tail {
		if h.End() <= from {
			continue
		}
		if more, err := fn(h); err != nil || !more {
			return err
		}
	}
	return nil
}

// scanIndexed is ScanEntries over the index alone.
func (r *ReadOnly) scanIndexed(id LogID, from Offset, fn func(EntryHeader) (bool, error)) error {
	lo, hi := logPrefixRange(prefixIndex, id)
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	defer it.Close()
	valid := it.SeekLT(indexKey(id, from+1)) // floor: the entry holding from
	if !valid {
		valid = it.First()
	}
	for ; valid; valid = it.Next() {
		h, err := decodeIndex(it.Key(), it.Value())
		if err != nil {
			return err
		}
		if h.End() <= from {
			continue // the floor ends before from (a gap): start after it
		}
		if more, err := fn(h); err != nil || !more {
			return err
		}
	}
	return it.Error()
}

// ReadEntry reads and checks the frame h names: CRC32C, and that the frame
// says the same offset, records and size as the index. Errors wrap
// ErrCorrupt (or the file error) and name the ledger, entry and position.
func (r *ReadOnly) ReadEntry(id LogID, h EntryHeader) (Entry, error) {
	f, err := os.Open(r.SegmentPath(id, h.Ledger))
	if err != nil {
		return Entry{}, fmt.Errorf("storage: %v %v: %w", id, h.Ledger, err)
	}
	defer f.Close()
	return readCheckedEntry(f, id, h)
}

func readCheckedEntry(f io.ReaderAt, id LogID, h EntryHeader) (Entry, error) {
	frame := make([]byte, frameHeaderLen+int(h.Size))
	if _, err := f.ReadAt(frame, h.Pos); err != nil {
		return Entry{}, entryErr(id, h, fmt.Errorf("%w: read frame: %v", ErrCorrupt, err))
	}
	ff, err := checkFrame(frame)
	if err != nil {
		return Entry{}, entryErr(id, h, err)
	}
	if ff.Offset != h.Offset || ff.Records != h.Records || ff.Size != int(h.Size) {
		return Entry{}, entryErr(id, h, fmt.Errorf("%w: frame says %v records %d size %d, index says %v records %d size %d",
			ErrCorrupt, ff.Offset, ff.Records, ff.Size, h.Offset, h.Records, h.Size))
	}
	return Entry{EntryHeader: h, Payload: frame[frameHeaderLen:]}, nil
}

func entryErr(id LogID, h EntryHeader, err error) error {
	return fmt.Errorf("%v %v %v %v pos %d: %w", id, h.Ledger, h.Entry, h.Offset, h.Pos, err)
}

// orphanSegments lists segment files no ledger record names.
func (r *ReadOnly) orphanSegments(known map[string]bool) ([]string, error) {
	names, err := os.ReadDir(r.segDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n.Name(), ".seg") && !known[n.Name()] {
			out = append(out, n.Name())
		}
	}
	return out, nil
}
