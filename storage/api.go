package storage

import (
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/kgateway/kgateway/bufpool"
	"github.com/kgateway/kgateway/storage/fsys"
	"go.uber.org/zap"
)

// This file is the storage contract (doc.go; docs/DESIGN.md "Storage"). The
// layers above (ledger/, resolver/, offsets/ via cmd) code against exactly
// these names; change a signature only together with its callers.

// LogID names one offset-addressed log (one topic-partition).
type LogID uint64

func (l LogID) String() string { return fmt.Sprintf("log-%d", uint64(l)) }

// Offset is a logical record offset inside a log. Entries are addressed by
// the offset of their first record; an entry of n records at o spans [o, o+n).
type Offset int64

func (o Offset) String() string { return fmt.Sprintf("offset-%d", int64(o)) }

// LedgerID names one ledger (segment file) of a log. IDs increase within a
// log in creation order; they are never reused.
type LedgerID uint64

func (l LedgerID) String() string { return fmt.Sprintf("ledger-%d", uint64(l)) }

// EntryID is an entry's index inside its ledger, starting at 0.
type EntryID uint64

func (e EntryID) String() string { return fmt.Sprintf("entry-%d", uint64(e)) }

// Sentinel errors, checked with errors.Is.
var (
	ErrClosed     = errors.New("storage: closed")
	ErrNoLog      = errors.New("storage: no such log")
	ErrLogExists  = errors.New("storage: log exists")
	ErrFenced     = errors.New("storage: log fenced")
	ErrEmpty      = errors.New("storage: log empty")
	ErrNotFound   = errors.New("storage: entry not found")
	ErrTrimmed    = errors.New("storage: offset trimmed")
	ErrOutOfRange = errors.New("storage: offset out of range")
	ErrCorrupt    = errors.New("storage: corrupt entry")
	ErrRemoved    = errors.New("storage: ledger removed")
	// ErrOffloaded: the ledger's entries are in the object store only; its
	// local file is gone (Offload). A read by offset reads them from their
	// object target (ledger/ "targetOf").
	ErrOffloaded = errors.New("storage: ledger offloaded")
	// ErrFailed is returned by every append to a log after a write or sync
	// on it failed: the bytes on disk are in doubt until the store is
	// reopened (the fsyncgate lesson: never retry an fsync). It is also
	// returned, wrapping the Replicator's error, after a Replicator refused
	// the log's entries (doc.go I11), until the log is deleted.
	ErrFailed = errors.New("storage: log failed")
	// ErrNoSpace is returned by a Write whose bytes did not fit on the disk
	// (ENOSPC, EDQUOT) before anything of it was synced: nothing of the
	// entry is kept, its offset is not used, and the log is NOT failed —
	// appends succeed again once space is freed, without a reopen (doc.go
	// I7). A sync that fails, for any reason, is ErrFailed.
	ErrNoSpace = errors.New("storage: no space left on device")
	ErrInvalid = errors.New("storage: invalid argument")
	// ErrNotLeader: a Replicator refused a log's entries because this node
	// no longer owns the log (cluster mode); the log is failed, and no
	// entry of it is acknowledged again until it is replaced. The
	// Replicator wraps it; the appends' errors wrap both it and ErrFailed
	// (doc.go I11).
	ErrNotLeader = errors.New("storage: not the log's owner")
)

// LogState is the fencing state of a log.
type LogState uint8

const (
	Normal LogState = iota
	Fenced
)

// EntryHeader is the light descriptor of one entry: everything the index
// knows about it, no payload.
type EntryHeader struct {
	Offset  Offset   // first record's offset
	Records int32    // records in the entry; the entry spans [Offset, Offset+Records)
	MaxTime int64    // the entry's max timestamp (ms), as given to Append
	Size    int32    // payload bytes
	Cum     int64    // bytes of all payloads in the log up to and including this one (since the log was created)
	Ledger  LedgerID // where it lives
	Entry   EntryID
	Pos     int64 // file position of the entry's frame inside the ledger file
}

// End is the offset just past the entry.
func (h EntryHeader) End() Offset { return h.Offset + Offset(h.Records) }

// Entry is one entry with its payload. Payload is read-only: it may be
// the tail cache's own slice (an entry written with AppendOptions.Retain),
// shared with every other read of that entry. The store never modifies it.
type Entry struct {
	EntryHeader
	Payload []byte
	// Src is where Payload lies in its ledger file, for a leased read
	// (ReadIndexedLeased) from an OS file; zero otherwise.
	Src FileSpan
}

// LedgerInfo describes one ledger of a log.
type LedgerInfo struct {
	ID          LedgerID
	FirstOffset Offset // offset of entry 0 (for an empty ledger: the offset its first entry would get)
	Entries     int64  // whole, durable entries
	Bytes       int64  // file bytes of those entries
	Created     time.Time
	Sealed      bool // closed for appends (every ledger but the last is sealed)
	// Gen is the ledger's generation: 0 when written by appends, higher
	// for a rewrite of sealed ledgers (doc.go "Generations").
	Gen uint64
	// Offloaded: the entries live only in the object store; the local
	// file is gone (Offload, doc.go "Offloaded ledgers").
	Offloaded bool
}

// LogInfo is one consistent view of a log's bounds.
type LogInfo struct {
	ID    LogID
	State LogState
	// Start is the soft-trim point: entries ending at or below it are
	// invisible. It is the Kafka log start offset.
	Start Offset
	// End is the offset after the last *durable* entry (D5: the high
	// watermark). Written-but-unsynced entries are beyond it.
	End     Offset
	Ledgers []LedgerInfo
}

// Bounds is a log's state and bounds at one instant, as in LogInfo.
type Bounds struct {
	State      LogState
	Start, End Offset
}

// AppendOptions carry what the index records beside the payload.
type AppendOptions struct {
	// MaxTime is the entry's max timestamp (ms), kept in the index and in
	// the time index for timestamp lookups.
	MaxTime int64
	// Stamp, when set, is called under the log's append lock with the offset
	// the entry is given, before its bytes are written. It may modify
	// payload in place (the Kafka layer rewrites the batch base offset and,
	// for LogAppendTime, the max timestamp) and returns the MaxTime to index.
	Stamp func(payload []byte, base Offset) (maxTime int64)
	// Retain lets the store keep payload, after Stamp, in its tail cache
	// and serve it to reads as it is: the caller promises never to modify
	// payload once Write is called. Without it the store keeps nothing.
	Retain bool
	// Backing, with Retain, says payload is a slice of a larger buffer
	// (a request frame holding several partitions' batches): keeping the
	// slice keeps the whole buffer alive, so the tail cache charges the
	// buffer's full size once, however many of its slices it holds (C5).
	// A pooled one (NewPooledBacking) is reused only after its last
	// holder (doc.go "Pooled frames"). nil: payload is its own
	// allocation, charged at its length.
	Backing *Backing
	// SuffixCRC, when SuffixFrom > 0, is the CRC32C of payload[SuffixFrom:]
	// as written (after Stamp), which the caller has already verified (a
	// Kafka batch carries the CRC of its bytes 21..end): the store then
	// checksums only payload[:SuffixFrom] and derives the frame CRC, which
	// still covers every byte, without a second pass over the payload. A
	// wrong value makes the entry fail its CRC on every read.
	SuffixFrom int
	SuffixCRC  uint32
	// NoReplicate keeps the entry away from Options.Replicator: it is
	// acknowledged once written locally and indexed (doc.go I12). For
	// entries copied in from the replicated copy itself (a new owner
	// rebuilding its cache).
	NoReplicate bool
}

// Replicator makes group commits durable off this machine (cluster mode:
// an object store and etcd). The committer hands it every entry of a group
// commit not written with AppendOptions.NoReplicate, once their bytes are
// written locally, in per-log offset order, and acknowledges an entry only
// if Replicate returned no error for its log. A log with an error is
// failed (ErrFailed, wrapping that error) until it is deleted (doc.go
// I10-I13).
//
// Replicate is called from the store's one committer goroutine, one group
// at a time: while it runs, writers keep queuing and nothing of the store
// is locked, but no group commit of any log completes. It must not call
// the store's Close. entries and their payloads are valid only until it
// returns; a nil map, or a nil error for a log, means replicated.
type Replicator interface {
	Replicate(entries []Replicated) map[LogID]error
}

// Pipeliner is a Replicator that takes a group commit while earlier
// ones are still in flight (cluster mode's pipelined group commit,
// doc.go I14): with Options.ReplicateDepth above 1 the committer calls
// Start instead of Replicate, and takes the next group as soon as a slot
// is free, while the earlier groups' objects and publications are under
// way.
//
// BeginReplicate is called from the committer goroutine, one group at a time, in
// group order; it begins replicating entries and returns the function
// that waits for their outcome (the map Replicate would return). The
// committer calls each wait once, in the order of the calls, from one
// goroutine. entries and their payloads stay valid until wait returns.
// The Pipeliner must make a group's entries durable in call order: a
// log's entries of one group are never published before those of an
// earlier group that are still in flight, and never after an earlier
// group failed to publish that log's entries.
type Pipeliner interface {
	Replicator
	BeginReplicate(entries []Replicated) (wait func() map[LogID]error)
}

// Replicated is one entry handed to a Replicator.
type Replicated struct {
	Log     LogID
	Header  EntryHeader // offset, records, max time
	Payload []byte      // the entry's bytes as written (after Stamp); read only
}

// Backing is a buffer that retained payloads are slices of (see
// AppendOptions.Backing). One Backing is shared by every Write of slices
// of one buffer.
type Backing struct {
	size  int64
	refs  int // cached slices; guarded by tailCache.mu
	frame *bufpool.Shared
}

// NewBacking describes a buffer of size bytes.
func NewBacking(size int) *Backing { return &Backing{size: int64(size)} }

// NewPooledBacking describes frame, a pooled buffer that the writer holds
// until every Write of its slices is answered (doc.go "Pooled frames"):
// each cached slice holds it too, until it has left the cache, and so
// does each leased read served from the cache until its lease is
// released. It is charged at its whole capacity (C5).
func NewPooledBacking(frame *bufpool.Shared) *Backing {
	return &Backing{size: int64(frame.Cap()), frame: frame}
}

// FS is the file layer under segment files (package fsys). Tests replace
// it to inject faults and simulate crashes (package vfstest).
type FS = fsys.FS

// File is one open segment file.
type File = fsys.File

// OSFS returns the FS over the operating system's files (the default).
func OSFS() FS { return fsys.OS() }

// Options configure a Store. The zero value is usable.
type Options struct {
	FS       FS     // segment files; nil means the OS
	PebbleFS vfs.FS // pebble's files; nil means the OS
	Logger   *zap.Logger
	// MaxGroupBytes bounds how many bytes one group commit collects
	// before it syncs (default 8 MiB).
	MaxGroupBytes int
	// BulkEntryBytes, when positive and without a Replicator, turns on
	// the bulk lane (doc.go "Bulk lane"): the entries of a log whose
	// average entry size reaches it are group-committed by a second
	// committer, beside the other logs. So a small write neither shares
	// the fdatasync of another log's burst nor queues behind it. 0: one
	// lane (DefaultBulkEntryBytes is the server's default).
	BulkEntryBytes int
	// BulkStepBytes, with the bulk lane, writes an entry larger than it
	// in steps of this many bytes, each synced before the next is written,
	// while other logs write in the main lane (doc.go "Burst steps"). So
	// a small write's fdatasync, which on ext4 waits for whatever of a
	// concurrent burst is being written back, waits for one step. 0: in
	// one go (DefaultBulkStepBytes is the server's default).
	BulkStepBytes int
	// JournalBytes, when positive and without a Replicator, journals a
	// group commit that touches at least two files with at most this
	// many bytes per file on average (four times this over 16 files or
	// more): its frames are made durable by
	// one fdatasynced record in the store's journal files instead of an
	// fdatasync per file, and synced in their files in the background
	// (doc.go "Journaled commits", I15). 0 or negative: never (DefaultJournalBytes is the
	// server's default).
	JournalBytes int
	// TailCacheBytes bounds the tail cache, over all logs together
	// (default DefaultTailCacheBytes; negative: no cache). Only entries
	// written with AppendOptions.Retain are cached.
	TailCacheBytes int64
	// NoReuse turns off keeping trimmed ledger files for reuse (I8): a
	// trimmed file is removed at once, and spares found at Open are
	// removed. With reuse, each log may hold one trimmed file's worth of
	// disk between a trim and its next Roll.
	NoReuse bool
	// OnCommit, when set, is called by the group committer after every
	// group commit (metrics): how many entries and bytes it made durable
	// and how long the fdatasyncs of its files (or the Replicate call)
	// took. It must not block; with a bulk lane it is called from both
	// lanes' committers, concurrently.
	OnCommit func(CommitStats)
	// OnIndexProbes, when set, is called after each index lookup by a
	// read with the number of index iterator positionings it made (one
	// per seek into the entry or time index, one per step to a following
	// entry), so that a caller can see that lookups are seeks, not scans
	// (a seek is O(log n) inside pebble). It must not block. The count is
	// kept per lookup, so that readers share no counter.
	OnIndexProbes func(n int)
	// Replicator, when set, must accept every group commit before any of
	// its entries is acknowledged (cluster mode). The segment files are
	// then a cache of the replicated copy and are not fdatasynced (doc.go
	// I10), so after a crash the directory must be rebuilt from the
	// replicated copy, not reopened.
	Replicator Replicator
	// CommitInterval, with a Replicator, is the least time between the
	// starts of two group commits (cluster.commit.interval.ms): entries
	// that arrive meanwhile share the next one, up to MaxGroupBytes
	// (doc.go I13). With ReplicateDepth above 1 and no group in flight,
	// twice the latest group's time when that is shorter. Zero: no wait.
	// Ignored without a Replicator.
	CommitInterval time.Duration
	// ReplicateDepth is how many group commits may be in flight at once
	// when the Replicator is a Pipeliner (doc.go I14): the next group is
	// taken while earlier ones replicate. 0 or 1: one at a time (the
	// committer waits for each Replicate).
	ReplicateDepth int
}

// CommitStats describes one group commit (Options.OnCommit).
type CommitStats struct {
	Entries int
	Bytes   int64
	Files   int           // files the group wrote to (and, without a Replicator, synced)
	Sync    time.Duration // the group's fdatasyncs, which run concurrently (none with a Replicator), or its journal commit
	// Journaled: the group was made durable by one synced index batch
	// holding its frames, its files not synced (doc.go "Journaled commits").
	Journaled bool
	// Bulk: the group was the bulk lane's (doc.go "Bulk lane").
	Bulk bool
	// Replicate is how long the Replicator's call took (zero without one,
	// or when no entry of the group was replicated).
	Replicate time.Duration
}

// Lane names how the group was made durable, for metrics: "replicated"
// (a Replicator), "journal" (one journal record), "bulk" (the bulk
// lane's files synced) or "files" (the main lane's files synced).
func (st CommitStats) Lane() string {
	switch {
	case st.Replicate > 0:
		return "replicated"
	case st.Journaled:
		return "journal"
	case st.Bulk:
		return "bulk"
	}
	return "files"
}

// DefaultBulkEntryBytes is the average entry size from which a server
// commits a log in the bulk lane (Options.BulkEntryBytes): 8 times a
// producer's default batch.size (16 KiB), an eighth of its largest batch
// at the default max.request.size (1 MiB).
const DefaultBulkEntryBytes = 128 << 10

// DefaultBulkStepBytes is the step a server writes a burst's large
// entries in (Options.BulkStepBytes).
const DefaultBulkStepBytes = 256 << 10

// DefaultTailCacheBytes is the default tail cache budget.
const DefaultTailCacheBytes = 32 << 20
