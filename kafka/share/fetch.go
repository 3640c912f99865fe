package share

import (
	"context"
	"errors"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Allowed says whether the principal may READ a topic (per-API authorization); nil allows
// everything.
type Allowed func(topic string) bool

// partResult is one partition's answer in a ShareFetch.
type partResult struct {
	code, ackCode int16
	acked         bool     // carried acknowledgements: answered even when empty
	batches       [][]byte // the acquired batches (batchesIn), size bytes
	size          int
	ranges        []acquiredRange
}

// Fetch handles ShareFetch: acknowledgements first, then acquisition from
// the session's partitions, long-polling up to MaxWaitMillis while nothing
// can be acquired.
//
// principal is the caller's with authorization on ("" else), allowed
// its topic READ (nil: everything).
//
// ctx is the connection's: a share session belongs to the connection that
// opened it, and when that connection closes the session closes and the
// member's records are released (releases on lock expiry), as Kafka does.
func (c *Coordinator) Fetch(ctx context.Context, req *kmsg.ShareFetchRequest, principal string, allowed Allowed) *kmsg.ShareFetchResponse {
	return c.FetchInto(ctx, req, principal, allowed, nil)
}

// FetchInto is Fetch with the records read into w and answered by
// reference (wire.go); nil w reads unleased and copies.
func (c *Coordinator) FetchInto(ctx context.Context, req *kmsg.ShareFetchRequest, principal string, allowed Allowed, w Wire) *kmsg.ShareFetchResponse {
	resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
	groupID, memberID := deref(req.GroupID), deref(req.MemberID)
	resp.AcquisitionLockTimeoutMillis = int32(c.lockDuration(groupID).Milliseconds())
	g, code := c.fetchGroup(req, groupID, memberID, principal)
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	k := sessKey{groupID, memberID}
	// Every write of the request, acknowledgements' and acquisitions',
	// is waited for once, before the answer (the durable share-partition
	// state): a fetch that carries acknowledgements shares one sync
	// between them and what it acquires instead of waiting for each.
	f := &fetchAcks{c: c, g: g, member: memberID, allowed: allowed, results: map[sessPart]*partResult{}, maxType: ackReject}
	if req.IsRenewAck {
		f.maxType = ackRenew
	}
	var parts []sessPart
	var fresh map[sessPart]bool
	switch req.ShareSessionEpoch {
	case -1:
		if !c.closeSession(k) {
			resp.ErrorCode = kerr.ShareSessionNotFound.Code
			return resp
		}
		c.forEachAck(req.Topics, f.ack)
		g.mu.Lock()
		c.releaseMemberLocked(g, memberID)
		g.mu.Unlock()
		f.writes.settle(c, f.results)
		resp.Topics = c.answer(f.results, nil, nil, w)
		return resp
	case 0:
		var e *kerr.Error
		if parts, fresh, e = c.openFetchSession(ctx, g, k, req, principal); e != nil {
			resp.ErrorCode = e.Code
			return resp
		}
	default:
		var e *kerr.Error
		if parts, fresh, e = c.useSession(k, req.ShareSessionEpoch, req); e != nil {
			resp.ErrorCode = e.Code
			return resp
		}
		c.forEachAck(req.Topics, f.ack)
	}
	results, writes := f.results, &f.writes
	if !req.IsRenewAck {
		c.acquireAll(ctx, req, g, memberID, parts, allowed, results, writes, w)
	}
	writes.settle(c, results)
	resp.Topics = c.answer(results, parts, fresh, w)
	return resp
}

// fetchGroup checks a ShareFetch (checkFetch, mayActAs: UNKNOWN_MEMBER_ID
// for another's member id) and finds its group, made on first use
// (GROUP_ID_NOT_FOUND for another type's group id, COORDINATOR_NOT_AVAILABLE
// when it cannot be loaded).
func (c *Coordinator) fetchGroup(req *kmsg.ShareFetchRequest, groupID, memberID, principal string) (*group, int16) {
	if e := c.checkFetch(req, groupID, memberID); e != nil {
		return nil, e.Code
	}
	if !c.mayActAs(groupID, memberID, principal, req.ShareSessionEpoch == -1) {
		return nil, kerr.UnknownMemberID.Code
	}
	g, err := c.getOrCreate(groupID, true)
	switch {
	case err != nil:
		return nil, kerr.CoordinatorNotAvailable.Code
	case g == nil:
		return nil, kerr.GroupIDNotFound.Code
	}
	return g, 0
}

// fetchAcks applies a ShareFetch's acknowledgements, keeping each
// partition's result and the write each waits for.
type fetchAcks struct {
	c       *Coordinator
	g       *group
	member  string
	allowed Allowed
	maxType int8 // the highest acknowledge type the request may carry
	results map[sessPart]*partResult
	writes  pendingWrites
}

// ack acknowledges batches of sp.
func (f *fetchAcks) ack(sp sessPart, batches []kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) {
	conv := make([]ackBatch, len(batches))
	for i, b := range batches {
		conv[i] = ackBatch{b.FirstOffset, b.LastOffset, b.AcknowledgeTypes}
	}
	code, written := f.c.acknowledge(f.g, f.member, sp, conv, f.maxType, f.allowed)
	f.results[sp] = &partResult{ackCode: code, acked: true}
	f.writes.addAck(sp, written)
}

// openFetchSession opens the share session a ShareFetch of epoch 0 asks
// for (INVALID_REQUEST if it acknowledges anything), closed with its
// connection; its partitions, all of them fresh (answered even empty).
func (c *Coordinator) openFetchSession(ctx context.Context, g *group, k sessKey, req *kmsg.ShareFetchRequest, principal string) ([]sessPart, map[sessPart]bool, *kerr.Error) {
	c.evictIdle()
	for i := range req.Topics {
		for _, p := range req.Topics[i].Partitions {
			if len(p.AcknowledgementBatches) > 0 {
				return nil, nil, kerr.InvalidRequest
			}
		}
	}
	s, e := c.openSession(k, req.Topics, principal, ctx.Done())
	if e != nil {
		return nil, nil, e
	}
	go c.closeWithConn(ctx, g, k, s)
	parts := append([]sessPart(nil), s.parts...)
	fresh := make(map[sessPart]bool, len(parts))
	for _, sp := range parts {
		fresh[sp] = true
	}
	return parts, fresh, nil
}

// mayActAs reports whether the caller (principal) may fetch or
// acknowledge as memberID: it is a live member of the share group (it
// joined through ShareGroupHeartbeat and has not left or timed out),
// joined by the same principal. Kafka answers a ShareFetch of an unknown
// member id UNKNOWN_MEMBER_ID; binding the member to its principal
// further keeps a user with READ on the group, who learnt a member id,
// from opening a session under it and acknowledging (rejecting) the
// member's records. closing (epoch -1) lets an unknown member id
// through: a member that left has had its session dropped and its
// records released already, so the close can only find nothing.
//
// A cluster's leader side does not know the membership (the
// coordinator node does, the leader side): there every member id is taken on
// trust, as before.
func (c *Coordinator) mayActAs(groupID, memberID, principal string, closing bool) bool {
	if c.leaderSide() {
		return true
	}
	g := c.lookup(groupID)
	if g == nil {
		return closing
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c.expireMembersLocked(g, c.cfg.Now())
	m := g.mu.members[memberID]
	if m == nil {
		return closing
	}
	return m.principal == principal
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// checkFetch validates what does not depend on state.
func (c *Coordinator) checkFetch(req *kmsg.ShareFetchRequest, groupID, memberID string) *kerr.Error {
	switch {
	case groupID == "" || memberID == "" || len(memberID) > maxMemberIDLen:
		return kerr.InvalidRequest
	case req.IsRenewAck && (req.MaxBytes != 0 || req.MinBytes != 0 || req.MaxRecords != 0 || req.MaxWaitMillis != 0):
		return kerr.InvalidRequest
	case c.ns != nil && !c.IsShareGroup(groupID) && c.ns.OtherGroup(groupID):
		return kerr.GroupIDNotFound
	}
	return nil
}

// forEachAck calls fn for every partition of the request that carries
// acknowledgements.
func (c *Coordinator) forEachAck(topics []kmsg.ShareFetchRequestTopic, fn func(sessPart, []kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch)) {
	for i := range topics {
		for _, p := range topics[i].Partitions {
			if len(p.AcknowledgementBatches) > 0 {
				fn(sessPart{topics[i].TopicID, p.Partition}, p.AcknowledgementBatches)
			}
		}
	}
}

// acquireAll acquires from parts, starting at a rotating partition so
// every partition gets its turn, until MaxRecords; while nothing was
// acquired it waits for an append, a release or a lock expiry (one acquirer per record).
func (c *Coordinator) acquireAll(ctx context.Context, req *kmsg.ShareFetchRequest, g *group, memberID string, parts []sessPart, allowed Allowed, results map[sessPart]*partResult, writes *pendingWrites, into Wire) {
	f := &acquireFetch{g: g, member: memberID, parts: parts, shift: int(req.ShareSessionEpoch), allowed: allowed,
		results: results, writes: writes, into: into, waits: newFetchWaits()}
	f.limits(req, c.log.MaxBytes())
	deadline := c.cfg.Now().Add(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	c.initPartitions(g, parts)
	defer leaveWaits(f.waits, c.writer)
	for {
		pass := c.acquirePass(f, deadline)
		if pass.got > 0 || pass.failed || len(pass.waitOn) == 0 {
			return
		}
		if pass.moved {
			continue // read on past what was archived before waiting
		}
		answerNow, ownBlock, next := pass.answerNow, pass.ownBlock, pass.next
		if answerNow {
			return // the member's acknowledgements may be behind it (answerHolderLocked)
		}
		if ownBlock {
			// The member waits on a partition where it holds
			// unacknowledged records: a client that sends its
			// acknowledgements only after this fetch is answered
			// (franz-go's share consumer, one request at a time per
			// broker) would hold them, and every member behind the
			// window, until MaxWaitMillis. The wait is cut to
			// ownBlockWait: short for such a client's
			// acknowledgements, long enough that a client fetching
			// in the background while it holds its records does not
			// spin on empty answers.
			deadline = minTime(deadline, c.cfg.Now().Add(ownBlockWait))
			next = minTime(next, deadline)
		}
		if !c.cfg.Now().Before(deadline) {
			return
		}
		if !c.log.Wait(ctx, pass.waitOn, []<-chan struct{}{f.waits.ch}, next) {
			return
		}
	}
}

// acquireFetch is what acquireAll's passes share: the fetch's member,
// partitions and bounds, and where their results and writes go.
type acquireFetch struct {
	g          *group
	member     string
	parts      []sessPart
	shift      int // the first partition of a pass: the session epoch's turn
	allowed    Allowed
	results    map[sessPart]*partResult
	writes     *pendingWrites
	into       Wire
	waits      *fetchWaits
	maxRecords int
	maxBytes   int
	whole      bool // whole batches only
}

// limits sets the fetch's bounds from the request: MaxRecords, which
// "can be exceeded for alignment of batch boundaries" (batch-optimized,
// ShareAcquireMode 0, and every v0–v1 fetch) while record-limit mode (1)
// is a hard bound (partition.acquireLocked); and the response's record
// bytes, MaxBytes at most the log's bound (fetch.max.bytes), a first
// batch read whole past it (KIP-74).
func (f *acquireFetch) limits(req *kmsg.ShareFetchRequest, logMax int) {
	f.maxRecords = int(req.MaxRecords)
	if f.maxRecords <= 0 {
		f.maxRecords = defaultMaxRecords
	}
	f.whole = req.ShareAcquireMode == 0
	f.maxBytes = min(int(req.MaxBytes), logMax)
	if f.maxBytes <= 0 {
		f.maxBytes = logMax
	}
}

// acquirePass is one pass of acquireAll over the fetch's partitions:
// what it took, whether a partition failed (an error answers at once,
// as Fetch's), and what a wait after it would wait on.
type acquirePass struct {
	got, bytes                         int
	failed, moved, ownBlock, answerNow bool
	waitOn                             []offsets.TopicPartition
	next                               time.Time // the earliest lock expiry, or the deadline
}

// acquirePass acquires from each partition in turn, until the fetch's
// bounds, into f's results.
func (c *Coordinator) acquirePass(f *acquireFetch, deadline time.Time) acquirePass {
	pass := acquirePass{next: deadline}
	for i := range f.parts {
		sp := f.parts[(i+f.shift)%len(f.parts)]
		r := f.results[sp]
		if r == nil {
			r = &partResult{}
			f.results[sp] = r
		}
		if r.code != 0 || pass.got >= f.maxRecords || pass.bytes >= f.maxBytes {
			continue
		}
		tp, ok := c.resolve(sp)
		switch {
		case !ok:
			r.code, pass.failed = kerr.UnknownTopicID.Code, true
			continue
		case f.allowed != nil && !f.allowed(tp.Topic):
			r.code, pass.failed = kerr.TopicAuthorizationFailed.Code, true
			continue
		}
		a := c.acquire(f.g, f.member, tp, f.maxRecords-pass.got, f.maxBytes-pass.bytes, f.whole, f.waits.at(tp), f.into)
		if a.owing {
			c.writer.arrive() // after its state was submitted
		}
		r.code, r.batches, r.size, r.ranges = a.code, a.batches, a.size, a.ranges
		f.writes.add(sp, a.written)
		pass.bytes += a.size
		if a.code != 0 {
			pass.failed = true
			continue
		}
		for _, rg := range a.ranges {
			pass.got += int(rg.last - rg.first + 1)
		}
		pass.moved = pass.moved || a.moved
		pass.ownBlock = pass.ownBlock || a.ownBlock
		pass.answerNow = pass.answerNow || a.answerNow
		pass.waitOn = append(pass.waitOn, tp)
		if !a.nextExpiry.IsZero() && a.nextExpiry.Before(pass.next) {
			pass.next = a.nextExpiry
		}
	}
	return pass
}

// ownBlockWait bounds a fetch's long poll on a full in-flight window its
// own member's records are in (acquireAll).
const ownBlockWait = 5 * time.Millisecond

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// acquisition is one partition's acquire: what was acquired, and what a
// long poll waits on when nothing was.
type acquisition struct {
	code       int16
	ranges     []acquiredRange
	batches    [][]byte // the acquired batches (batchesIn), size bytes
	size       int
	nextExpiry time.Time
	moved      bool // nothing acquired, but the window advanced past archived records
	// written waits for the write of the state the acquisition changed
	// (nil: nothing changed); nothing of it is answered before.
	written func() error
	// ownBlock: nothing acquirable, and the member itself holds records
	// in the partition; answerNow: and its fetch is answered at once
	// (answerHolderLocked).
	ownBlock, answerNow bool
	// owing: the acquisition used a wake owed to the state writer, which
	// the caller pays back (stateWriter.arrive) now that the state was
	// submitted.
	owing bool
}

// acquire acquires up to max records of tp for member: it reads from the
// first acquirable offset with a cursorless read (cursorless share reads)
// and locks what the read returned. The new state is submitted for
// writing and not waited for: the acquisition's written is the wait,
// which acquireAll calls for every partition of the fetch before it
// answers (the durable share-partition state), so the partitions of one
// fetch share one group commit instead of waiting for one each in turn.
//
// w is the fetch's waiter on tp: queued on the partition when nothing can
// be acquired (under p.mu, as it sees that), off the queue while the
// acquisition reads, and its wake used here (waiters.go).
func (c *Coordinator) acquire(g *group, member string, tp offsets.TopicPartition, maxRecords, maxBytes int, whole bool, w *waiter, into Wire) acquisition {
	logStart, hwm, err := c.log.Bounds(tp.Topic, tp.Partition)
	if err != nil {
		return acquisition{code: c.log.Code(err)}
	}
	p, err := c.partitionOf(g, tp, logStart, hwm)
	if err != nil {
		return acquisition{code: c.failCode(err)}
	}
	t := &acquireTry{
		group: g.id, member: member, tp: tp, p: p, w: w, maxRecords: maxRecords, whole: whole, hwm: hwm,
		now: c.cfg.Now(), limit: c.deliveryLimit(),
		lockFor: c.lockDuration(g.id), // before p.mu: a leader may read it from etcd (share states outside the offsets store)
		dlq:     c.dlqOn(g.id),
	}
	if a, wait := c.look(t, logStart); wait {
		return a
	}
	committed := c.groupConfig(g.id, ConfigIsolationLevel) == isolationCommitted
	rd, err := c.readSpans(tp, t.from, min(t.reach, hwm-1), maxBytes, committed, into)
	if err == nil && committed && t.from >= min(hwm, rd.lso) {
		c.nothingStable(t)
		return acquisition{nextExpiry: t.next, owing: t.owing}
	}
	if err == nil && rd.corrupt {
		err = errCorruptBatch
	}
	if err != nil {
		return c.readFailed(t, err)
	}
	if committed {
		t.hwm = min(hwm, rd.lso)
	}
	return c.take(t, rd)
}

// acquireTry is one acquisition of a partition, carried from its first
// look under the partition's lock (look), through its read without the
// lock, to what it takes of what it read (take).
type acquireTry struct {
	group, member string
	tp            offsets.TopicPartition
	p             *partition
	w             *waiter
	maxRecords    int
	whole         bool  // whole batches only (ShareAcquireMode 0)
	hwm           int64 // the high watermark, or the LSO at read_committed once read
	now           time.Time
	limit         int32 // delivery count limit
	lockFor       time.Duration
	dlq           bool
	// Set by look.
	next        time.Time // the partition's next lock expiry
	used, owing bool      // useWakeLocked's
	from, reach int64     // where it reads, and how far
	claim       int       // what it was promised (partition.promised) until it is back
}

// look is an acquisition's first look at its partition, under its lock:
// it expires locks and finds where to read and how far. With nothing to
// read it queues the fetch's waiter and returns its answer (wait true);
// else it promises the acquisition what it reads for (claim) until it is
// back, as another fetch meanwhile would read the same records and find
// them taken.
func (c *Coordinator) look(t *acquireTry, logStart int64) (a acquisition, wait bool) {
	p, w, maxLocks := t.p, t.w, c.cfg.PartitionMaxRecordLocks
	w.moveTo(p)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dlq = t.dlq
	t.used, t.owing = p.useWakeLocked(w)
	w.want = t.maxRecords
	p.trimLocked(logStart)
	next, expired := p.expireLocked(t.now, t.limit)
	t.next = next
	if expired && t.dlq {
		c.kickDLQ() // records out of deliveries may be archiving now
	}
	from, ok := p.readFromLocked(maxLocks)
	t.from, t.reach = from, p.reachLocked(from, t.maxRecords, maxLocks)
	if !ok || from >= t.hwm || p.promisedAwayLocked(maxLocks, t.hwm) {
		p.queueLocked(w)
		holds, now := p.answerHolderLocked(t.member)
		return acquisition{nextExpiry: next, ownBlock: holds, answerNow: now, owing: t.owing}, true
	}
	p.unqueueLocked(w) // it reads: a wake goes to a fetch that waits
	t.claim = max(min(t.maxRecords, p.acquirableLocked(maxLocks, t.hwm)-p.promised), 0)
	p.promised += t.claim
	return acquisition{}, false
}

// nothingStable gives back the claim of a read that found nothing stable
// (read_committed below an open transaction): the fetch looks again at
// once if records were released meanwhile, else it waits for the
// transaction's end, or a change, queued as look queues it.
func (c *Coordinator) nothingStable(t *acquireTry) {
	p := t.p
	p.mu.Lock()
	defer p.mu.Unlock()
	p.promised = max(p.promised-t.claim, 0)
	if f, ok := p.readFromLocked(c.cfg.PartitionMaxRecordLocks); ok && f < t.from {
		t.w.poke() // released meanwhile: it looks again
	} else {
		p.queueLocked(t.w)
	}
}

// readFailed gives back the claim of a read that failed, and the wake
// it took and cannot use, and answers the error's code.
func (c *Coordinator) readFailed(t *acquireTry, err error) acquisition {
	p := t.p
	p.mu.Lock()
	p.promised = max(p.promised-t.claim, 0)
	if t.used {
		p.wakeLocked() // it took a wake it cannot use: the others look
	}
	p.mu.Unlock()
	if errors.Is(err, errCorruptBatch) {
		return acquisition{code: kerr.CorruptMessage.Code, owing: t.owing}
	}
	return acquisition{code: c.log.Code(err), owing: t.owing}
}

// take locks what the read found still acquirable, under the partition's
// lock, and submits the partition's new state for writing (written).
// Having taken nothing, the fetch looks again at once when others left
// records past what it read, else waits queued.
func (c *Coordinator) take(t *acquireTry, rd shareRead) acquisition {
	p, member, maxLocks := t.p, t.member, c.cfg.PartitionMaxRecordLocks
	batches, spans := rd.batches, rd.spans
	p.mu.Lock()
	p.promised = max(p.promised-t.claim, 0)
	p.dlq = t.dlq
	before := p.persistedLocked(t.tp)
	ranges := p.acquireLocked(spans, acquireArgs{
		member: member, hwm: t.hwm, max: t.maxRecords, wholeBatches: t.whole, maxLocks: maxLocks,
		limit: t.limit, deadline: t.now.Add(t.lockFor),
	})
	changed := len(ranges) > 0 || !samePersisted(before, p.persistedLocked(t.tp))
	if len(ranges) > 0 {
		p.fedLocked(member)
	}
	if changed {
		// What it left acquirable (or made room for, archiving) goes
		// to the fetches behind it, whose acquisitions its write
		// lingers for.
		c.writer.owe(p.passOnLocked(maxLocks, t.hwm))
	}
	var holds, answerNow bool
	if !changed {
		if f, ok := p.readFromLocked(maxLocks); ok && f > t.from && f < t.hwm {
			// Others took what it read, and left records past it:
			// it looks again at once.
			t.w.poke()
		} else {
			// Others took what it read, or the window cannot
			// hold its next batch whole (fitsLocked): it waits, as
			// a holder's fetch does when it holds records here.
			p.queueLocked(t.w)
			holds, answerNow = p.answerHolderLocked(member)
		}
	}
	var written func() error
	if changed {
		written = c.persistLocked(t.group, t.tp, p)
	}
	p.mu.Unlock()
	if len(ranges) == 0 {
		// Records were archived (control batches, aborted
		// transactions): the window moved, and the next read may find
		// records to acquire at once (readSpans reads only so far).
		return acquisition{nextExpiry: t.next, moved: changed, written: written, owing: t.owing, ownBlock: holds, answerNow: answerNow}
	}
	held, size := batchesIn(batches, spans, ranges)
	return acquisition{ranges: ranges, batches: held, size: size, written: written, owing: t.owing}
}

// errCorruptBatch: a read batch's header could not be read.
var errCorruptBatch = errors.New("share: corrupt record batch")

// pendingWrites are the state writes of one request's acquisitions and
// acknowledgements, by partition, not yet waited for.
type pendingWrites []pendingWrite

type pendingWrite struct {
	sp   sessPart
	ack  bool // an acknowledgement's: a failure is the partition's ackCode
	wait func() error
}

func (w *pendingWrites) add(sp sessPart, wait func() error) {
	if wait != nil {
		*w = append(*w, pendingWrite{sp, false, wait})
	}
}

func (w *pendingWrites) addAck(sp sessPart, wait func() error) {
	if wait != nil {
		*w = append(*w, pendingWrite{sp, true, wait})
	}
}

// settle waits for every write and answers a partition whose write
// failed with the failure (the durable share-partition state): an
// acquisition's with nothing acquired (its records stay locked to the
// member in memory until their locks expire, as a lone failed write left
// them), an acknowledgement's in its ackCode. Writes complete in
// submission order, so the waits after the first cost nothing more.
func (w pendingWrites) settle(c *Coordinator, results map[sessPart]*partResult) {
	for _, x := range w {
		err := x.wait()
		switch r := results[x.sp]; {
		case err == nil:
		case x.ack:
			r.ackCode = c.failCode(err)
		default:
			r.code, r.batches, r.size, r.ranges = c.failCode(err), nil, 0, nil
		}
	}
}

// persistLocked starts writing p's state (the durable share-partition
// state) and returns the wait for it, to be called after p.mu is
// released and before anything that depends on the state is answered.
// On a single node the write joins the next group commit (stateWriter);
// on a cluster's leader side it is done under p.mu, a conditional write
// that marks p dead when refused (putClusterLocked). Needs p.mu.
func (c *Coordinator) persistLocked(group string, tp offsets.TopicPartition, p *partition) (wait func() error) {
	if c.leaderSide() {
		err := c.putClusterLocked(group, tp, p)
		return func() error { return err }
	}
	part := p.persistedLocked(tp)
	f := c.writer.submit(offsets.ShareWrite{Group: group, Part: part})
	for _, run := range part.Runs {
		if run.State == offsets.ShareArchiving {
			c.kickDLQ() // step 2 of dlq.go, once this state is durable
			break
		}
	}
	return func() error {
		err := f.wait()
		if err != nil {
			c.cfg.Logger.Warn("share-state-write-failed")
		}
		return err
	}
}

func samePersisted(a, b offsets.SharePartition) bool {
	if a.StartOffset != b.StartOffset || len(a.Runs) != len(b.Runs) {
		return false
	}
	for i := range a.Runs {
		if a.Runs[i] != b.Runs[i] {
			return false
		}
	}
	return true
}

// failCode answers a partition whose state could not be read or written:
// on a cluster's leader side the state is another leader's now, or was
// changed under it (leader writes before answers), and the client goes back to Metadata;
// otherwise the offset store failed.
func (c *Coordinator) failCode(error) int16 {
	if c.leaderSide() {
		return kerr.NotLeaderForPartition.Code
	}
	return kerr.CoordinatorNotAvailable.Code
}

// partitionOf returns g's state of tp, initializing a partition the group
// has never read at share.auto.offset.reset (latest: the high watermark;
// earliest: the log start) and persisting it (the share-partition start offset). A state that runs past
// the high watermark belongs to a deleted topic of the same name and is
// started over the same way.
func (c *Coordinator) partitionOf(g *group, tp offsets.TopicPartition, logStart, hwm int64) (*partition, error) {
	if c.leaderSide() {
		return c.clusterPartition(g, tp, logStart, hwm)
	}
	for range 3 {
		g.mu.Lock()
		p := g.mu.parts[tp]
		g.mu.Unlock()
		if p != nil && !p.beyond(hwm) {
			return p, nil
		}
		if err := c.initParts(g, []freshPart{{tp, logStart, hwm}}); err != nil {
			return nil, err
		}
	}
	return nil, errInitRaced
}

// errInitRaced: a partition's state was dropped (DeleteShareGroupOffsets)
// each time it was initialized.
var errInitRaced = errors.New("share: partition state dropped while initialized")

// freshPart is a partition to initialize, with its log's bounds.
type freshPart struct {
	tp            offsets.TopicPartition
	logStart, hwm int64
}

// initParts initializes the partitions of todo that the group has no
// state of (or one past the high watermark) at share.auto.offset.reset
// (the share-partition start offset), in one write, without holding the
// group's lock through it: only those partitions wait, not every request
// of the group. A partition is initialized by one request at a time
// (g.mu.initing); another that needs it waits for that write and looks
// again. The state is used, and answered, only once its write returned.
func (c *Coordinator) initParts(g *group, todo []freshPart) error {
	earliest := c.groupConfig(g.id, ConfigAutoOffsetReset) == "earliest"
	for {
		made, busy, written := c.startInitLocked(g, todo, earliest)
		if written != nil {
			err := written.wait()
			g.mu.Lock()
			for tp, m := range made {
				delete(g.mu.initing, tp)
				// A state set meanwhile (an admin write, submitted
				// after this one) is newer: it stays.
				if err == nil && g.mu.parts[tp] == m.old {
					g.mu.parts[tp] = m.p
				}
			}
			g.mu.Unlock()
			if err != nil {
				return err
			}
		}
		if busy == nil {
			return nil
		}
		_ = busy.wait() // another request's initialization: look again
	}
}

// initing is a partition initParts is initializing and the state it
// replaces.
type initing struct{ p, old *partition }

// startInitLocked submits the initial states of todo's partitions that
// need one and no other request is initializing, and marks them; busy is
// the write of one another request is initializing (nil: none). Takes
// g.mu.
func (c *Coordinator) startInitLocked(g *group, todo []freshPart, earliest bool) (made map[offsets.TopicPartition]initing, busy, written *flight) {
	g.mu.Lock()
	defer g.mu.Unlock()
	made = map[offsets.TopicPartition]initing{}
	if g.mu.deleted {
		return made, nil, nil // no state is written for a deleted group
	}
	var ws []offsets.ShareWrite
	for _, f := range todo {
		p := g.mu.parts[f.tp]
		if _, dup := made[f.tp]; dup || p != nil && !p.beyond(f.hwm) {
			continue
		}
		if fl := g.mu.initing[f.tp]; fl != nil {
			busy = fl
			continue
		}
		start := f.hwm
		if earliest {
			start = f.logStart
		}
		made[f.tp] = initing{newPartition(start), p}
		ws = append(ws, offsets.ShareWrite{Group: g.id, Part: offsets.SharePartition{TopicPartition: f.tp, StartOffset: start}})
	}
	if len(ws) == 0 {
		return made, busy, nil
	}
	written = c.writer.submit(ws...)
	if g.mu.initing == nil {
		g.mu.initing = map[offsets.TopicPartition]*flight{}
	}
	for tp := range made {
		g.mu.initing[tp] = written
	}
	return made, busy, written
}

// initPartitions initializes, in one write, every partition of parts the
// group has never read (initParts): a fetch of a member assigned many
// partitions waited for one synced write per partition in turn, each under
// the group's lock, which also held every other request of the group. On
// a cluster's leader side it does nothing: partitionOf does it, one
// partition at a time. A failure is left to partitionOf, which answers it.
func (c *Coordinator) initPartitions(g *group, parts []sessPart) {
	if c.leaderSide() || len(parts) < 2 {
		return
	}
	var todo []freshPart
	g.mu.Lock()
	for _, sp := range parts {
		if tp, ok := c.resolve(sp); ok && g.mu.parts[tp] == nil {
			todo = append(todo, freshPart{tp: tp})
		}
	}
	g.mu.Unlock()
	if len(todo) < 2 {
		return
	}
	known := todo[:0]
	for _, f := range todo {
		var err error
		if f.logStart, f.hwm, err = c.log.Bounds(f.tp.Topic, f.tp.Partition); err == nil {
			known = append(known, f)
		}
	}
	_ = c.initParts(g, known)
}

// answer builds the response topics: every partition with records, an
// error or an acknowledgement result, and those in show (a full fetch's,
// or those new to the session).
func (c *Coordinator) answer(results map[sessPart]*partResult, order []sessPart, show map[sessPart]bool, w Wire) []kmsg.ShareFetchResponseTopic {
	var topics []kmsg.ShareFetchResponseTopic
	idx := map[[16]byte]int{}
	add := func(sp sessPart, r *partResult) {
		i, ok := idx[sp.id]
		if !ok {
			i = len(topics)
			idx[sp.id] = i
			t := kmsg.NewShareFetchResponseTopic()
			t.TopicID = sp.id
			topics = append(topics, t)
		}
		p := kmsg.NewShareFetchResponseTopicPartition()
		p.Partition, p.ErrorCode, p.AcknowledgeErrorCode = sp.partition, r.code, r.ackCode
		p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = -1, -1 // no leader hint, as Kafka sends
		// Records is not nullable in Kafka's ShareFetchResponse: a
		// partition with nothing acquired carries empty records, never
		// null (the Java client fails the whole response on a null).
		p.Records = recordsOf(w, r.batches, r.size)
		for _, rg := range r.ranges {
			ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
			ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = rg.first, rg.last, int16(min(rg.count, 32767))
			p.AcquiredRecords = append(p.AcquiredRecords, ar)
		}
		topics[i].Partitions = append(topics[i].Partitions, p)
	}
	want := func(sp sessPart, r *partResult) bool {
		return show[sp] || r.code != 0 || r.acked || len(r.ranges) > 0
	}
	done := map[sessPart]bool{}
	for _, sp := range order {
		r := results[sp]
		if r == nil {
			r = &partResult{}
		}
		if want(sp, r) {
			add(sp, r)
			done[sp] = true
		}
	}
	for sp, r := range results {
		if !done[sp] && want(sp, r) {
			add(sp, r)
		}
	}
	return topics
}

// closeWithConn closes session s when its connection ends, unless it was
// replaced or closed before, and releases what the member holds (releases on lock expiry).
func (c *Coordinator) closeWithConn(ctx context.Context, g *group, k sessKey, s *session) {
	select {
	case <-ctx.Done():
	case <-s.done:
		return
	}
	c.mu.Lock()
	mine := c.mu.sessions[k] == s
	if mine {
		c.dropSessionLocked(k)
	}
	c.mu.Unlock()
	if !mine {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c.releaseMemberLocked(g, k.member)
}
