package storage

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// logState is one open log.
//
// Lock order (doc.go "Locks"): Store.closeMu (read) -> logState.appendMu ->
// Store.ledgerMu -> Store.mu -> logState.mu. The committer takes only
// logState.mu.
type logState struct {
	id LogID

	// appendMu serializes everything that changes the log: Write (D3: offset
	// order is Write order), Roll, trims, fencing, DeleteLog.
	appendMu sync.Mutex
	// w is the writer's view, guarded by appendMu. It runs ahead of the
	// durable view in mu by the written-but-unsynced entries.
	w struct {
		ledger LedgerID
		file   File
		next   Offset // offset the next entry gets
		entry  EntryID
		pos    int64 // file size of the open ledger
		cum    int64
		runMax int64 // running max timestamp over all entries written
		hasMax bool
		// keyed, keyAt: the newest entry written since Open with a
		// time-index key, and its offset (timeKeyDue).
		keyed bool
		keyAt Offset
		last  *Pending // newest pending write, for draining (Roll, DeleteLog)
		// dirty: bytes at and past pos may hold part of a write that
		// failed for lack of space; the file is cut back to pos before
		// the next write (I7).
		dirty bool
		// reused: the open ledger's file was a spare (spare.go); bytes
		// past pos may be an older ledger's frames.
		reused bool
		// alloc: the open ledger's file has blocks allocated ahead of
		// its writes up to here, past its size (prealloc.go); 0 when
		// none were.
		alloc int64
		// spare is the path of this log's spare file, "" if none.
		spare string
		// hdr and iov are writeFrame's frame header and write vector,
		// kept here so that a write allocates neither.
		hdr [frameHeaderLen]byte
		iov [2][]byte
	}

	// tail is the log's part of the tail cache (tailcache.go).
	tail logTail

	// lane is the log's running average entry size and its newest
	// unanswered pending, for the group commit's lanes
	// (committer.inBulk); guarded by the committer's mu. seen is the
	// committer's mainQueued as of the log's latest entry queued
	// (burstStep); set under both the committer's mu and appendMu, read
	// under appendMu.
	lane struct {
		avg  int64
		last *Pending
		seen uint64
	}

	// changes counts the changes of what a snapshot of the log shows
	// (its state, start, durable end, failure and deletion): each is
	// counted under mu after it is made (Store.Changes).
	changes atomic.Uint64

	mu struct {
		sync.Mutex
		state   LogState
		start   Offset
		end     Offset // D5: end of the last durable entry
		ledgers []ledgerRec
		files   map[LedgerID]*ledgerFile
		failed  error // set once a write or sync failed (ErrFailed until reopen)
		deleted bool
	}
}

// ledgerRec is one live ledger with its durable record.
type ledgerRec struct {
	id   LedgerID
	meta ledgerMeta
}

// ledgerFile is the open handle of a ledger file plus its read pins.
type ledgerFile struct {
	name    string
	file    File // nil until first opened
	pins    int
	removed bool // the ledger is gone; remove the file when pins drop to 0
}

func newLogState(id LogID) *logState {
	l := &logState{id: id}
	l.mu.files = make(map[LedgerID]*ledgerFile)
	return l
}

// checkWritableLocked reports why the log takes no appends; needs mu.
func (l *logState) checkWritableLocked() error {
	switch {
	case l.mu.deleted:
		return fmt.Errorf("%w: %v", ErrNoLog, l.id)
	case l.mu.failed != nil:
		return fmt.Errorf("%w: %v: %w", ErrFailed, l.id, l.mu.failed)
	case l.mu.state == Fenced:
		return fmt.Errorf("%w: %v", ErrFenced, l.id)
	}
	return nil
}

// checkAlive is checkWritableLocked minus fencing: what admin operations need.
func (l *logState) checkAlive() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.deleted {
		return fmt.Errorf("%w: %v", ErrNoLog, l.id)
	}
	if l.mu.failed != nil {
		return fmt.Errorf("%w: %v: %w", ErrFailed, l.id, l.mu.failed)
	}
	return nil
}

// fail marks the log failed: the bytes of its open ledger are in doubt, so
// every later append fails until the store is reopened (never retry fsync).
func (l *logState) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.failed == nil {
		l.mu.failed = err
		l.changes.Add(1)
	}
}

// drain waits until every write issued so far is committed or failed. The
// caller holds appendMu so no new write can start. It returns the error of
// the newest pending write.
func (l *logState) drain() error {
	if p := l.w.last; p != nil {
		<-p.done
		return p.err
	}
	return nil
}

// snapshot is one consistent view of a log's bounds. It holds no ledger
// list: a read by offset needs none, and copying it on every read would
// cost O(ledgers) (Info copies it).
type snapshot struct {
	state LogState
	start Offset
	end   Offset
}

func (l *logState) snap() (snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.snapLocked()
}

// snapLocked is snap for a caller holding mu.
func (l *logState) snapLocked() (snapshot, error) {
	if l.mu.deleted {
		return snapshot{}, fmt.Errorf("%w: %v", ErrNoLog, l.id)
	}
	return snapshot{state: l.mu.state, start: l.mu.start, end: l.mu.end}, nil
}

// openLedgerLocked returns the newest ledger; needs mu.
func (l *logState) openLedgerLocked() *ledgerRec { return &l.mu.ledgers[len(l.mu.ledgers)-1] }
