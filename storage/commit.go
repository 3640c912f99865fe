package storage

import (
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/kgateway/kgateway/storage/fsys"
	"go.uber.org/zap"
)

// Pending is an append whose bytes are written but maybe not yet durable.
type Pending struct {
	hdr  EntryHeader
	log  *logState
	file File
	// timeKey is set when the entry raised the log's running max timestamp
	// to runMax: the committer then writes a time index key.
	timeKey bool
	runMax  int64
	done    chan struct{}
	err     error // valid once done is closed
}

// Header is the entry's descriptor (offset, position) as assigned by Write.
func (p *Pending) Header() EntryHeader { return p.hdr }

// Wait blocks until the entry is durable and indexed, or its group commit
// failed (then the log is failed: ErrFailed until reopened).
func (p *Pending) Wait() error {
	<-p.done
	return p.err
}

// committer is the group committer (doc.go "Group commit"). Writers enqueue
// pendings in per-log offset order; one goroutine takes everything queued
// (up to MaxGroupBytes), fdatasyncs each touched file once, commits one
// pebble batch, publishes the new durable ends and wakes the waiters.
type committer struct {
	s *Store
	// stepper, when the FS implements it, is told each step of every group
	// commit (crash tests stop the machine there; fsys.Stepper).
	stepper fsys.Stepper
	wake    chan struct{} // capacity 1: "the queue may be non-empty"
	done    chan struct{} // closed when run returns
	mu      struct {
		sync.Mutex
		queue   []*Pending
		stopped bool
	}
}

func newCommitter(s *Store) *committer {
	return &committer{s: s, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// enqueue hands p to the committer. The caller holds the log's appendMu, so
// each log's pendings are queued in offset order.
func (c *committer) enqueue(p *Pending) {
	c.mu.Lock()
	c.mu.queue = append(c.mu.queue, p)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// stop drains the queue and waits for the committer to exit.
func (c *committer) stop() {
	c.mu.Lock()
	c.mu.stopped = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-c.done
}

func (c *committer) run() {
	defer close(c.done)
	for {
		group, stopped := c.take()
		if len(group) == 0 {
			if stopped {
				return
			}
			<-c.wake
			continue
		}
		c.commit(group)
	}
}

// take removes a group from the head of the queue: at least one pending,
// then more while the group stays within MaxGroupBytes.
func (c *committer) take() ([]*Pending, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.mu.queue
	n, bytes := 0, 0
	for n < len(q) && (n == 0 || bytes+int(q[n].hdr.Size) <= c.s.opts.MaxGroupBytes) {
		bytes += int(q[n].hdr.Size)
		n++
	}
	group := q[:n:n]
	c.mu.queue = q[n:]
	if len(c.mu.queue) == 0 {
		c.mu.queue = nil
	}
	return group, c.mu.stopped
}

// commit makes one group durable: sync files, then index, then publish.
// Order matters (doc.go I2): the index never names bytes that are not
// durable, and no waiter is woken before both steps succeeded.
func (c *committer) commit(group []*Pending) {
	c.step(fsys.StepWritten)
	start := time.Now()
	failed, files := c.syncFiles(group)
	synced := time.Since(start)
	c.step(fsys.StepSynced)
	b := c.s.db.NewBatch()
	for _, p := range group {
		if failed[p.log] != nil {
			continue
		}
		h := p.hdr
		_ = b.Set(indexKey(p.log.id, h.Offset), encodeIndexValue(h), nil)
		if p.timeKey {
			_ = b.Set(timeKey(p.log.id, p.runMax, h.Offset), nil, nil)
		}
	}
	// NoSync is enough (doc.go I3): the segment bytes are durable and
	// recovery re-indexes the newest ledger's tail from them.
	if err := b.Commit(pebble.NoSync); err != nil {
		c.s.logger.Error("storage-index-commit-failed", zap.Error(err))
		for _, p := range group {
			if failed[p.log] == nil {
				failed[p.log] = err
			}
		}
	}
	_ = b.Close()
	c.step(fsys.StepIndexed)
	// Before the waiters wake, so that whatever an acknowledgement lets
	// happen next already sees this commit counted.
	if f := c.s.opts.OnCommit; f != nil {
		st := CommitStats{Entries: len(group), Files: files, Sync: synced}
		for _, p := range group {
			st.Bytes += int64(p.hdr.Size)
		}
		f(st)
	}
	c.publish(group, failed)
	c.step(fsys.StepPublished)
}

func (c *committer) step(s fsys.Step) {
	if c.stepper != nil {
		c.stepper.Step(s)
	}
}

// syncFiles fdatasyncs every file the group touched, concurrently, and
// returns the logs whose sync (or earlier write) failed and how many
// files it synced.
func (c *committer) syncFiles(group []*Pending) (map[*logState]error, int) {
	failed := make(map[*logState]error)
	files := make(map[File]*logState)
	for _, p := range group {
		if _, seen := failed[p.log]; seen {
			continue
		}
		p.log.mu.Lock()
		err := p.log.mu.failed
		p.log.mu.Unlock()
		if err != nil {
			// Never acknowledge an entry after a failed one (D2, D3).
			failed[p.log] = err
			continue
		}
		files[p.file] = p.log
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for f, l := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f.Sync(); err != nil {
				c.s.logger.Error("storage-sync-failed", zap.Stringer("log", l.id), zap.Error(err))
				l.fail(err)
				mu.Lock()
				failed[l] = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failed, len(files)
}

// publish advances each log's durable end (D5) and wakes the waiters.
func (c *committer) publish(group []*Pending, failed map[*logState]error) {
	for _, p := range group {
		l := p.log
		if err := failed[l]; err != nil {
			l.fail(err)
			p.err = fmt.Errorf("%w: %v: %w", ErrFailed, l.id, err)
			continue
		}
		l.mu.Lock()
		l.mu.end = p.hdr.End()
		if n := len(l.mu.ledgers); n > 0 && l.mu.ledgers[n-1].id == p.hdr.Ledger {
			m := &l.mu.ledgers[n-1].meta
			m.Entries = int64(p.hdr.Entry) + 1
			m.Bytes = p.hdr.Pos + frameHeaderLen + int64(p.hdr.Size)
		}
		l.mu.Unlock()
	}
	for _, p := range group {
		close(p.done)
	}
}
