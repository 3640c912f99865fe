package storage

import (
	"fmt"
	"sync"
	"sync/atomic"
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
	// payload is the entry's bytes as written (after Stamp), kept only
	// with a Replicator, for Replicate (I10), or a journal, with frame
	// its frame header (I15); dropped once answered.
	payload []byte
	frame   [frameHeaderLen]byte
	// holds: the store keeps payload until p is answered (HoldsPayload);
	// set before Write returns, never changed after.
	holds bool
	// noReplicate: written with AppendOptions.NoReplicate (I12).
	noReplicate bool
	// bulk: queued in the bulk lane; after: the log's entry before it,
	// in the other lane and unanswered when it was queued: it is taken
	// only once after is answered, and after is cleared then
	// (committer.inBulk; after and answered are guarded by the
	// committer's mu).
	bulk     bool
	after    *Pending
	answered bool
	done     chan struct{}
	err      error // valid once done is closed
}

// Header is the entry's descriptor (offset, position) as assigned by Write.
func (p *Pending) Header() EntryHeader { return p.hdr }

// HoldsPayload says whether the store keeps the payload Write was given
// until the entry is answered: for Options.Replicator (I10), or for the
// journal (I15) when the entry went to the main lane. When false the
// store read the payload for the last time before Write returned, and
// the caller may reuse its bytes at once (a pooled request frame goes
// back to the pool before the fdatasync). The tail cache is not counted:
// it holds the entry's Backing itself (AppendOptions.Backing).
func (p *Pending) HoldsPayload() bool { return p.holds }

// Wait blocks until the entry is durable (with a Replicator: replicated,
// I10) and indexed, or its group commit failed (then the log is failed:
// ErrFailed until reopened, or deleted, I11).
func (p *Pending) Wait() error {
	<-p.done
	return p.err
}

// committer is the group committer (doc.go "Group commit"). Writers enqueue
// pendings in per-log offset order; one goroutine takes everything queued
// (up to MaxGroupBytes), fdatasyncs each touched file once (or, with a
// Replicator, hands the entries to it, I10), commits one pebble batch,
// publishes the new durable ends and wakes the waiters.
type committer struct {
	s *Store
	// stepper, when the FS implements it, is told each step of every group
	// commit (crash tests stop the machine there; fsys.Stepper).
	stepper fsys.Stepper
	// interval is the least time between the starts of two group commits
	// (Options.CommitInterval, with a Replicator only; I13).
	interval time.Duration
	// pipe, with a ReplicateDepth above 1, is the Replicator as a
	// Pipeliner (I14); slots holds a token per group in flight, and
	// flights the groups started, in order, for the finisher.
	pipe     Pipeliner
	slots    chan struct{}
	flights  chan *flight
	finished chan struct{} // closed when the finisher returns
	// took is how long the latest finished group took, from its start
	// to its outcome (ns), and kick (capacity 1) ends a pause early when
	// the finisher frees a slot: pipelined, the pause then may be
	// shorter (nextStart, I13).
	took atomic.Int64
	kick chan struct{}
	wake chan struct{} // capacity 1: "the queue may be non-empty"
	quit chan struct{} // closed by stop: no more waiting for the interval
	done chan struct{} // closed when run returns
	// bulkBytes is Options.BulkEntryBytes without a Replicator (0: one
	// lane); bulkWake and bulkDone are the bulk lane's wake and done.
	bulkBytes int
	bulkWake  chan struct{}
	bulkDone  chan struct{}
	// stepBytes is Options.BulkStepBytes with the bulk lane (0: a burst
	// is written in one go); mainQueued counts the entries ever queued
	// in the main lane, changed under mu (doc.go "Burst steps").
	stepBytes  int
	mainQueued atomic.Uint64
	dirMu      sync.Mutex // held across syncDir (both lanes)
	mu         struct {
		sync.Mutex
		queue   []*Pending
		bulk    []*Pending // the bulk lane's queue
		stopped bool
	}
}

func newCommitter(s *Store) *committer {
	c := &committer{s: s, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	if s.opts.Replicator != nil {
		c.interval = s.opts.CommitInterval
	} else if s.opts.BulkEntryBytes > 0 {
		c.bulkBytes = s.opts.BulkEntryBytes
		c.stepBytes = max(s.opts.BulkStepBytes, 0)
		c.bulkWake, c.bulkDone = make(chan struct{}, 1), make(chan struct{})
	}
	if p, ok := s.opts.Replicator.(Pipeliner); ok && s.opts.ReplicateDepth > 1 {
		c.pipe = p
		c.slots = make(chan struct{}, s.opts.ReplicateDepth)
		c.flights = make(chan *flight, s.opts.ReplicateDepth)
		c.finished = make(chan struct{})
		c.kick = make(chan struct{}, 1)
		go c.finish()
	}
	return c
}

// enqueue hands p to the committer, in its log's lane (inBulk). The
// caller holds the log's appendMu, so each log's pendings are queued in
// offset order.
func (c *committer) enqueue(p *Pending) {
	c.mu.Lock()
	wake := c.wake
	if c.inBulk(p) {
		// A bulk lane's groups are never journaled (commit), and the
		// bulk lane runs only without a Replicator: the payload is not
		// needed past Write.
		p.payload, p.holds = nil, false
		c.mu.bulk = append(c.mu.bulk, p)
		wake = c.bulkWake
	} else {
		c.mu.queue = append(c.mu.queue, p)
		c.mainQueued.Add(1)
	}
	p.log.lane.seen = c.mainQueued.Load()
	c.mu.Unlock()
	signal(wake)
}

// burstStep is how many bytes at a time a Write of an n-byte entry to l
// writes (doc.go "Burst steps"): the step (Options.BulkStepBytes) when
// the entry is larger than a step and another log has queued an entry in
// the main lane since l's latest entry was queued; 0 (in one go)
// otherwise, so a log written alone loses nothing. Needs l.appendMu.
func (c *committer) burstStep(l *logState, n int) int {
	if c.stepBytes == 0 || n <= c.stepBytes || c.mainQueued.Load() == l.lane.seen {
		return 0
	}
	return c.stepBytes
}

func signal(wake chan struct{}) {
	select {
	case wake <- struct{}{}:
	default:
	}
}

// inBulk says whether p goes to the bulk lane (doc.go "Bulk lane"): when
// its log's running average entry size (the newest entry weighing a
// quarter) reaches bulkBytes. When the log's newest unanswered entry is
// in the other lane, p is taken only after it (p.after), so that a log's
// entries are published in offset order whichever lane commits them.
// Needs c.mu.
func (c *committer) inBulk(p *Pending) bool {
	if c.bulkBytes == 0 {
		return false
	}
	ln := &p.log.lane
	ln.avg += (int64(p.hdr.Size) - ln.avg) / 4
	p.bulk = ln.avg >= int64(c.bulkBytes)
	if q := ln.last; q != nil && q.bulk != p.bulk {
		p.after = q
	}
	ln.last = p
	return p.bulk
}

// published marks a published group's entries answered (inBulk) and
// wakes the other lane, which may hold entries queued after them. publish
// calls it once their waiters are woken, so that the other lane answers
// none of a log's later entries before them: a log's entries are
// answered (done closed) in offset order across the lanes too. A waiter
// that writes to the log at once meanwhile finds its entry held behind
// them (p.after) only until this marks them.
func (c *committer) published(group []*Pending) {
	if c.bulkBytes == 0 || len(group) == 0 {
		return
	}
	c.mu.Lock()
	for _, p := range group {
		p.answered = true
		if p.log.lane.last == p {
			p.log.lane.last = nil
		}
	}
	c.mu.Unlock()
	if group[0].bulk {
		signal(c.wake)
	} else {
		signal(c.bulkWake)
	}
}

// stop drains the queue and waits for the committer to exit. It ends a
// wait for the commit interval at once (I13).
func (c *committer) stop() {
	c.mu.Lock()
	c.mu.stopped = true
	c.mu.Unlock()
	close(c.quit)
	signal(c.wake)
	if c.bulkWake != nil {
		signal(c.bulkWake)
	}
	<-c.done
}

func (c *committer) run() {
	defer close(c.done)
	if c.bulkWake != nil {
		go c.runBulk()
		defer func() { <-c.bulkDone }()
	}
	if c.pipe != nil {
		defer func() {
			close(c.flights)
			<-c.finished
		}()
	}
	var last time.Time // start of the previous group commit
	for {
		if c.pipe != nil {
			// A slot first (I14): what arrives while every slot is
			// taken joins the next group.
			c.slots <- struct{}{}
		}
		if c.interval > 0 && !last.IsZero() {
			c.pause(last)
		}
		var group []*Pending
		var stopped bool
		if c.bulkWake != nil {
			group, stopped = c.takeLane(&c.mu.queue)
		} else {
			group, stopped = c.take()
		}
		if len(group) == 0 {
			if c.pipe != nil {
				<-c.slots
			}
			if stopped {
				return
			}
			<-c.wake
			continue
		}
		last = time.Now()
		if c.pipe != nil {
			c.start(group)
			continue
		}
		c.commit(group)
	}
}

// runBulk is the bulk lane's committer (doc.go "Bulk lane"): it commits
// the groups takeLane gives, one at a time, as run does without a
// Replicator, beside run's groups.
func (c *committer) runBulk() {
	defer close(c.bulkDone)
	for {
		group, drained := c.takeLane(&c.mu.bulk)
		if len(group) == 0 {
			if drained {
				return
			}
			<-c.bulkWake
			continue
		}
		c.commit(group)
	}
}

// takeLane removes a group from a lane's queue (c.mu.queue or
// c.mu.bulk), in queue order, up to MaxGroupBytes (at least one
// pending), leaving out an entry whose log's earlier entry in the other
// lane is not answered yet (p.after), and every later entry of its log.
// drained: stopped with nothing left queued.
func (c *committer) takeLane(queue *[]*Pending) (group []*Pending, drained bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := *queue
	var rest []*Pending
	var held map[*logState]bool
	bytes := 0
	for i, p := range q {
		if len(group) > 0 && bytes+int(p.hdr.Size) > c.s.opts.MaxGroupBytes {
			rest = append(rest, q[i:]...) // full: the rest keeps its order
			break
		}
		if held[p.log] || (p.after != nil && !p.after.answered) {
			if held == nil {
				held = make(map[*logState]bool)
			}
			held[p.log] = true
			rest = append(rest, p)
			continue
		}
		p.after = nil // answered: nothing to keep alive
		group = append(group, p)
		bytes += int(p.hdr.Size)
	}
	*queue = rest
	return group, c.mu.stopped && len(rest) == 0
}

// flight is a group handed to the Pipeliner and not finished yet (I14).
type flight struct {
	group   []*Pending
	failed  map[*logState]error
	logs    map[LogID]*logState
	wait    func() map[LogID]error // nil: nothing of the group replicates
	started time.Time
}

// start hands group to the Pipeliner and queues it for the finisher
// (I14). Its logs already failed are left out, as in commit.
func (c *committer) start(group []*Pending) {
	c.step(fsys.StepWritten)
	failed, _ := c.liveFiles(group)
	f := &flight{group: group, failed: failed, started: time.Now()}
	var entries []Replicated
	entries, f.logs = replicable(group, failed)
	if len(entries) > 0 {
		f.wait = c.pipe.BeginReplicate(entries)
	}
	c.flights <- f
}

// finish completes the started groups in the order they were started
// (I14): a group's outcome, then a re-check for logs an earlier group
// failed meanwhile, then index, durable ends and waiters, as commit.
func (c *committer) finish() {
	defer close(c.finished)
	for f := range c.flights {
		st := CommitStats{Entries: len(f.group)}
		if f.wait != nil {
			errs := f.wait()
			st.Replicate = time.Since(f.started)
			c.took.Store(int64(st.Replicate))
			c.replicated(errs, f.logs, f.failed)
		}
		// Entries taken while an earlier group that failed their log was
		// in flight: never acknowledged after the failure (D2, D3).
		failedSince(f.group, f.failed)
		c.step(fsys.StepSynced)
		c.complete(f.group, f.failed, st)
		<-c.slots
		signal(c.kick) // maybe none in flight now: the pause may end (I13)
	}
}

// failedSince adds to failed the group's logs that failed since the
// group was taken.
func failedSince(group []*Pending, failed map[*logState]error) {
	for _, p := range group {
		if failed[p.log] != nil {
			continue
		}
		p.log.mu.Lock()
		err := p.log.mu.failed
		p.log.mu.Unlock()
		if err != nil {
			failed[p.log] = err
		}
	}
}

// pause waits until the next group commit may start after the one
// started at last (nextStart), or until stop (I13): what is queued
// meanwhile shares the next group commit. A timer, so an idle store costs
// nothing; a kick (a group finished) looks again.
func (c *committer) pause(last time.Time) {
	var t *time.Timer
	for {
		select {
		case <-c.kick: // consumed before nextStart looks: a later kick is new
		default:
		}
		d := time.Until(c.nextStart(last))
		if d <= 0 {
			return
		}
		if t == nil {
			t = time.NewTimer(d)
			defer t.Stop()
		} else {
			t.Reset(d)
		}
		select {
		case <-t.C:
			return
		case <-c.quit:
			return
		case <-c.kick:
		}
	}
}

// nextStart is when a group commit may start after one started at last
// (I13): the interval after it; pipelined, with no group in flight (the
// committer holds one slot, its own), twice the latest group's time
// after it when that is sooner. Where a commit takes well under the
// interval, waiting out the interval for an idle store only adds to
// every acknowledgement; starting at most every two commit times still
// gathers what arrives during one and leaves the store idle at least
// half the time. Where a commit takes half the interval or more, the
// interval paces every start, as without a Pipeliner.
func (c *committer) nextStart(last time.Time) time.Time {
	gap := c.interval
	if c.pipe != nil && len(c.slots) == 1 {
		gap = min(gap, 2*time.Duration(c.took.Load()))
	}
	return last.Add(gap)
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

// commit makes one group durable: sync files (or replicate, I10), then
// index, then publish. Order matters (doc.go I2, I10): the index never
// names bytes that are not durable, and no waiter is woken before every
// step succeeded for its log.
func (c *committer) commit(group []*Pending) {
	c.step(fsys.StepWritten)
	failed, files := c.liveFiles(group)
	c.syncDir(group, failed)
	st := CommitStats{Entries: len(group), Files: len(files), Bulk: group[0].bulk}
	switch r := c.s.opts.Replicator; {
	case r != nil:
		// I10: the local files are a cache of the replicated copy; they
		// are not synced.
		st.Replicate = c.replicate(r, group, failed)
	case !group[0].bulk && c.s.j.wants(group, len(files)):
		// I15: one journal record, synced, instead of the files' syncs.
		// Not a bulk lane's group: its entries' payloads were let go at
		// Write (enqueue, Pending.HoldsPayload), and its large entries
		// would be written twice.
		st.Journaled = true
		start := time.Now()
		c.s.j.write(group, failed)
		st.Sync = time.Since(start)
	default:
		start := time.Now()
		c.syncFiles(files, failed)
		st.Sync = time.Since(start)
	}
	c.step(fsys.StepSynced)
	c.complete(group, failed, st)
}

// syncDir syncs segments/ when a ledger file was created since the last
// sync without one (I1, openLedgerFile): every group entry's file was
// created before the entry was queued, so before this. A failed sync
// fails the group's logs. The lanes sync one at a time (dirMu): a lane
// that finds the flag cleared by the other lane's sync in progress
// waits for that sync to end before it goes on.
func (c *committer) syncDir(group []*Pending, failed map[*logState]error) {
	c.dirMu.Lock()
	defer c.dirMu.Unlock()
	if !c.s.dirUnsynced.Swap(false) {
		return
	}
	err := c.s.fs.SyncDir(c.s.segDir)
	if err == nil {
		return
	}
	c.s.dirUnsynced.Store(true)
	c.s.logger.Error("storage-sync-dir-failed", zap.Error(err))
	for _, p := range group {
		if failed[p.log] == nil {
			p.log.fail(err)
			failed[p.log] = err
		}
	}
}

// complete indexes the group's live logs, then publishes their durable
// ends and wakes the waiters (I10).
func (c *committer) complete(group []*Pending, failed map[*logState]error, st CommitStats) {
	c.index(group, failed)
	c.step(fsys.StepIndexed)
	// Before the waiters wake, so that whatever an acknowledgement lets
	// happen next already sees this commit counted.
	if f := c.s.opts.OnCommit; f != nil {
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

// liveFiles returns the group's logs that are already failed, with their
// errors, and the files the group wrote to on the other logs.
func (c *committer) liveFiles(group []*Pending) (map[*logState]error, map[File]*logState) {
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
			// Never acknowledge an entry after a failed one (D2, D3), nor
			// replicate it (I11).
			failed[p.log] = err
			continue
		}
		files[p.file] = p.log
	}
	return failed, files
}

// syncFiles fdatasyncs the files, concurrently, and adds the logs whose
// sync failed to failed. The committer syncs one file itself and starts a
// goroutine for each other one: a group on one file (one busy partition)
// costs no goroutine and no wake-up beyond the fdatasync.
func (c *committer) syncFiles(files map[File]*logState, failed map[*logState]error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	sync1 := func(f File, l *logState) {
		if err := f.Sync(); err != nil {
			c.s.logger.Error("storage-sync-failed", zap.Stringer("log", l.id), zap.Error(err))
			l.fail(err)
			mu.Lock()
			failed[l] = err
			mu.Unlock()
		}
	}
	var (
		ownF File
		ownL *logState
	)
	for f, l := range files {
		if ownF == nil {
			ownF, ownL = f, l
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sync1(f, l)
		}()
	}
	if ownF != nil {
		sync1(ownF, ownL)
	}
	wg.Wait()
}

// replicate hands the group's entries to the Replicator (I10): those of
// logs not failed and not written with NoReplicate (I12), in queue order,
// which is per-log offset order. A log it returns an error for is failed
// at once (I11), so that later writes to it are refused, and added to
// failed, so that none of its entries is indexed or published. It returns
// how long Replicate took.
func (c *committer) replicate(r Replicator, group []*Pending, failed map[*logState]error) time.Duration {
	entries, logs := replicable(group, failed)
	if len(entries) == 0 {
		return 0
	}
	start := time.Now()
	errs := r.Replicate(entries)
	took := time.Since(start)
	c.replicated(errs, logs, failed)
	return took
}

// replicable is the group's entries to replicate: those of logs not
// failed and not written with NoReplicate (I12), in queue order (per-log
// offset order), and their logs.
func replicable(group []*Pending, failed map[*logState]error) ([]Replicated, map[LogID]*logState) {
	var entries []Replicated
	logs := make(map[LogID]*logState)
	for _, p := range group {
		if p.noReplicate || failed[p.log] != nil {
			continue
		}
		entries = append(entries, Replicated{Log: p.log.id, Header: p.hdr, Payload: p.payload})
		logs[p.log.id] = p.log
	}
	return entries, logs
}

// replicated applies a Replicator's outcome (I11): a log with an error is
// failed at once and added to failed.
func (c *committer) replicated(errs map[LogID]error, logs map[LogID]*logState, failed map[*logState]error) {
	for id, err := range errs {
		l := logs[id]
		if err == nil || l == nil {
			continue // a log not replicated in this group has nothing to fail
		}
		c.s.logger.Warn("storage-replicate-failed", zap.Stringer("log", id), zap.Error(err))
		l.fail(err)
		failed[l] = err
	}
}

// index commits the entry and time index keys of the group's live logs in
// one pebble batch; if the commit fails, every live log of the group fails.
func (c *committer) index(group []*Pending, failed map[*logState]error) {
	b := c.s.db.NewBatch()
	defer b.Close()
	for _, p := range group {
		if failed[p.log] != nil {
			continue
		}
		// Encoded in place in the batch: no allocation per entry.
		op := b.SetDeferred(indexKeyLen, indexValueLen)
		putIndexKey(op.Key, p.log.id, p.hdr.Offset)
		putIndexValue(op.Value, p.hdr)
		_ = op.Finish()
		if p.timeKey {
			op = b.SetDeferred(timeKeyLen, 0)
			putTimeKey(op.Key, p.log.id, p.runMax, p.hdr.Offset)
			_ = op.Finish()
		}
	}
	// NoSync is enough (doc.go I3): the segment bytes are durable (or
	// replicated, I10, or journaled, I15) and recovery re-indexes the
	// newest ledger's tail from them (after writing the journal back).
	if err := b.Commit(pebble.NoSync); err != nil {
		c.s.logger.Error("storage-index-commit-failed", zap.Error(err))
		for _, p := range group {
			if failed[p.log] == nil {
				failed[p.log] = err
			}
		}
	}
}

// publish advances each log's durable end (D5) and wakes the waiters.
func (c *committer) publish(group []*Pending, failed map[*logState]error) {
	for _, p := range group {
		l := p.log
		p.payload = nil // answered: the store keeps it no longer
		if err := failed[l]; err != nil {
			l.fail(err)
			// Both ErrFailed and the cause match errors.Is (I11).
			p.err = fmt.Errorf("%w: %v: %w", ErrFailed, l.id, err)
			continue
		}
		l.mu.Lock()
		l.mu.end = p.hdr.End()
		l.changes.Add(1)
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
	c.published(group)
}
