package node

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/cluster/diskless"
	"github.com/kgateway/kgateway/cluster/owner"
	"github.com/kgateway/kgateway/resolver"
	"go.uber.org/zap"
)

// PKey is a partition's key in etcd: "<topic id>-<partition>".
func PKey(id resolver.TopicID, idx int32) string {
	return fmt.Sprintf("%x-%d", id[:], idx)
}

// score is the rendezvous weight of node for pkey (rendezvous placement): the node with the
// highest score is preferred.
func score(pkey string, node int32) uint64 {
	h := fnv.New64a()
	h.Write([]byte(pkey))
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(node))
	h.Write(b[:])
	x := h.Sum64()
	// fnv's low bits mix poorly over small inputs: finish with splitmix64.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// preferred is the live node that should own pkey (rendezvous placement), -1 with none.
func preferred(pkey string, live []int32) int32 {
	best, bestScore := int32(-1), uint64(0)
	for _, id := range live {
		if s := score(pkey, id); best < 0 || s > bestScore {
			best, bestScore = id, s
		}
	}
	return best
}

// slot is one thing to own: a partition or the coordinator role.
type slot struct {
	pkey  string
	topic string
	idx   int32
}

func (n *Node) slots() []slot {
	out := []slot{{pkey: CoordinatorKey}}
	for _, t := range n.p.Resolver.Topics() {
		if resolver.IsInternalTopic(t.Name) || t.Companion {
			continue
		}
		for i := range t.Partitions {
			out = append(out, slot{pkey: PKey(t.ID, i), topic: t.Name, idx: i})
		}
	}
	return out
}

// run places partitions until Leave: on every change the watches see,
// and every Tick.
func (n *Node) run() {
	t := time.NewTicker(n.cfg.Tick)
	defer t.Stop()
	defer n.acquiring.Wait() // Leave cancelled them (bg): they end soon
	for {
		n.round()
		select {
		case <-n.stop:
			return
		case <-n.kick:
		case <-t.C:
		}
	}
}

// round is one placement pass: releases, then acquisitions (upkeep runs
// apart, upkeepLoop).
func (n *Node) round() {
	if n.sessionLost() || !n.ensureRegistered() {
		return
	}
	n.mu.Lock()
	live := make([]int32, 0, len(n.mu.brokers))
	for id := range n.mu.brokers {
		live = append(live, id)
	}
	registered := n.mu.brokers[n.cfg.NodeID].Port != 0
	n.mu.Unlock()
	if !registered {
		return // not yet seen by the watch, or deregistered: place nothing
	}
	slots := n.slots()
	v := placeView{self: n.cfg.NodeID, name: n.name, live: live, slots: make([]string, len(slots)),
		held: map[string]heldView{}, owners: map[string]string{}}
	bySlot := make(map[string]slot, len(slots))
	for i, s := range slots {
		v.slots[i] = s.pkey
		bySlot[s.pkey] = s
	}
	n.mu.Lock()
	for k, h := range n.mu.held {
		v.held[k] = heldView{broken: h.broken}
	}
	for k, r := range n.mu.owners {
		v.owners[k] = r.Node
	}
	n.mu.Unlock()
	p := place(v)
	// A slot being acquired and rebuilt is left alone until that is
	// done: its release waits for the next round.
	for _, r := range p.release {
		if n.isAcquiring(r.pkey) {
			if r.why == releaseHandover {
				// Preferred elsewhere again before it served (the node
				// it moved from is back): its rebuild is wasted, and
				// would hold the slot from that node.
				n.abandonAcquire(r.pkey)
			}
			continue
		}
		n.releaseKey(r.pkey)
		if n.stopping() {
			return
		}
	}
	if n.stopping() {
		return
	}
	for _, pkey := range n.retries.due(p.acquire, time.Now()) {
		n.startAcquire(bySlot[pkey])
	}
	for _, pkey := range p.gone {
		if !n.isAcquiring(pkey) {
			n.releaseKey(pkey)
		}
	}
}

// releaseKey releases this node's ownership of pkey, if it still holds
// one.
func (n *Node) releaseKey(pkey string) {
	n.mu.Lock()
	h := n.mu.held[pkey]
	n.mu.Unlock()
	if h != nil {
		n.release(context.Background(), h)
	}
}

// sessionLost notices an ended session (the node was cut off or paused
// past its lease): every ownership is gone, so nothing is served, and a
// new session registers again.
func (n *Node) sessionLost() bool {
	n.mu.Lock()
	sess := n.mu.sess
	n.mu.Unlock()
	select {
	case <-sess.Done():
	default:
		return false
	}
	n.log.Warn("cluster-session-lost")
	n.mu.Lock()
	for k, h := range n.mu.held {
		h.serving = false
		delete(n.mu.byLog, h.log)
		delete(n.mu.held, k)
	}
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.newSession(ctx); err != nil {
		n.log.Warn("cluster-session-failed", zap.Error(err))
		return true
	}
	if err := n.register(ctx, false); err != nil {
		n.log.Warn("cluster-register-failed", zap.Error(err))
	}
	return true
}

// acquireConcurrency bounds the acquisitions (each an etcd transaction,
// then a rebuild reading the partition's objects) that run at once: a
// failover moves many partitions, and they rebuild in parallel.
const acquireConcurrency = 8

// acquisitions are the acquisitions in flight. They run apart from the
// placement rounds: a round starts them and goes on, so that a slot
// freed while others rebuild (a handover back to a restarted node frees
// them one by one) is acquired at once, not after the slowest rebuild of
// the round before. A slot is acquired by one acquisition at a time, and
// a round does not release a slot while it is being acquired.
type acquisitions struct {
	sync.WaitGroup
	sem chan struct{} // capacity acquireConcurrency
	mu  sync.Mutex
	in  map[string]*acquisition // pkey: being acquired
}

// acquisition is one acquisition in flight.
type acquisition struct {
	cancel    context.CancelFunc
	abandoned atomic.Bool // cancelled for a handover: no failure
}

func (n *Node) isAcquiring(pkey string) bool {
	n.acquiring.mu.Lock()
	defer n.acquiring.mu.Unlock()
	return n.acquiring.in[pkey] != nil
}

// abandonAcquire cancels the acquisition of pkey: its rebuild stops at
// its next object-store or etcd call and the ownership is released,
// without counting as a failed rebuild (retries).
func (n *Node) abandonAcquire(pkey string) {
	n.acquiring.mu.Lock()
	defer n.acquiring.mu.Unlock()
	if a := n.acquiring.in[pkey]; a != nil && !a.abandoned.Swap(true) {
		n.log.Info("cluster-rebuild-abandoned", zap.String("pkey", pkey))
		a.cancel()
	}
}

// startAcquire acquires s in the background, unless it is being
// acquired already; the end of each acquisition asks for a new round.
func (n *Node) startAcquire(s slot) {
	a := &n.acquiring
	a.mu.Lock()
	if a.in[s.pkey] != nil {
		a.mu.Unlock()
		return
	}
	if a.in == nil {
		a.in = map[string]*acquisition{}
		a.sem = make(chan struct{}, acquireConcurrency)
	}
	ctx, cancel := context.WithCancel(n.bg)
	acq := &acquisition{cancel: cancel}
	a.in[s.pkey] = acq
	sem := a.sem
	a.mu.Unlock()
	a.Add(1)
	go func() {
		defer a.Done()
		defer cancel()
		defer func() {
			a.mu.Lock()
			delete(a.in, s.pkey)
			a.mu.Unlock()
			n.Kick()
		}()
		select {
		case <-n.stop:
			return
		case sem <- struct{}{}:
		}
		defer func() { <-sem }()
		if n.stopping() {
			return
		}
		n.acquire(ctx, s, &acq.abandoned)
	}()
}

// acquire takes s if it is free and rebuilds it before serving it (rebuild before serving);
// abandoned says the acquisition was cancelled for a handover.
func (n *Node) acquire(parent context.Context, s slot, abandoned *atomic.Bool) {
	ctx, cancel := context.WithTimeout(parent, 5*time.Minute)
	defer cancel()
	m := n.Owners()
	o, err := m.Acquire(ctx, s.pkey)
	if err != nil {
		if !errors.Is(err, owner.ErrOwned) {
			n.log.Warn("cluster-acquire-failed", zap.String("pkey", s.pkey), zap.Error(err))
		}
		return
	}
	h := &held{pkey: s.pkey, topic: s.topic, idx: s.idx, o: o, start: -1}
	n.mu.Lock()
	if n.mu.sess == nil || n.mu.sess.Lease() != o.Lease || n.mu.held[s.pkey] != nil {
		// The session this ownership was taken under ended meanwhile
		// (sessionLost let everything go): it is no ownership any more.
		n.mu.Unlock()
		return
	}
	n.mu.held[s.pkey] = h
	n.mu.Unlock()
	start := time.Now()
	err = n.rebuild(ctx, h)
	if err != nil && abandoned.Load() {
		n.release(context.WithoutCancel(ctx), h)
		return
	}
	if n.cfg.Observer != nil {
		n.cfg.Observer.ObserveRebuild(time.Since(start), err == nil)
	}
	if err != nil {
		wait := n.retries.failed(s.pkey, time.Now())
		n.log.Warn("cluster-rebuild-failed", zap.String("pkey", s.pkey), zap.Error(err), zap.Duration("retry-in", wait))
		n.release(context.WithoutCancel(ctx), h) // even when Leave cut the rebuild short
		return
	}
	n.retries.succeeded(s.pkey)
	n.mu.Lock()
	if n.mu.held[s.pkey] != h {
		// Let go meanwhile (the session ended, or the node leaves): the
		// ownership is gone, so is whatever could serve it.
		if n.mu.byLog[h.log] == h {
			delete(n.mu.byLog, h.log)
		}
		n.mu.Unlock()
		return
	}
	h.serving = true
	n.mu.Unlock()
	if n.p.Txn != nil {
		// The transaction relay: a partition's pending markers first; the
		// coordinator role's pending implicit adds (implicit adds across nodes).
		n.p.Txn.Kick()
	}
	n.log.Info("cluster-acquired", zap.String("pkey", s.pkey), zap.String("topic", s.topic),
		zap.Int32("partition", s.idx), zap.Uint64("epoch", o.Epoch), zap.Duration("took", time.Since(start)))
}

// rebuild makes h's local copy a cache of the published one (rebuild before serving, the coordinator role,
// the bounded rebuild): the newest ranges, at most CacheRebuildBytes of them, are copied;
// the older offsets are read from the object store (pinned reads below the cache), and the
// producer state is replayed from the published start (the local copy as a cache).
func (n *Node) rebuild(ctx context.Context, h *held) error {
	if h.pkey == CoordinatorKey {
		return n.p.BecomeCoordinator(ctx, h.o)
	}
	start, end, ranges, err := n.p.Diskless.Log(ctx, h.pkey)
	if err != nil {
		return err
	}
	plan := planRebuild(start, end, ranges, n.cfg.CacheRebuildBytes)
	n.mu.Lock()
	h.pubStart = start
	n.mu.Unlock()
	cache := resolver.Cache{Published: published{n: n, h: h}}
	// Periodic state export: the replay starts where the last exported state ends; without
	// one (or unreadable), at the published start.
	covered, state, err := n.p.Diskless.State(ctx, h.pkey)
	switch {
	case err == nil:
		cache.State, h.stateCovered = state, covered
	case !errors.Is(err, diskless.ErrNoState):
		n.log.Warn("cluster-state-unreadable", zap.String("pkey", h.pkey), zap.Error(err))
	}
	err = n.p.Resolver.Replicas().ReplacePartitionOver(h.topic, h.idx, resolver.Offset(plan.from), cache, func(appendBatch func([]byte) error) error {
		return readInOrder(ctx, plan.copy, n.p.Diskless.ReadRange, func(r diskless.Range, data []byte) error {
			if err := eachBatch(data, appendBatch); err != nil {
				return fmt.Errorf("range %d-%d of %s: %w", r.Base, r.End, r.Object, err)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	if plan.trimTo >= 0 {
		if _, err := n.p.Resolver.DeleteRecords(h.topic, h.idx, resolver.Offset(plan.trimTo)); err != nil {
			return err
		}
	}
	log, err := n.p.Resolver.Replicas().LogOf(h.topic, h.idx)
	if err != nil {
		return err
	}
	h.stated = time.Now() // the first export a StateInterval from now (periodic state export)
	n.mu.Lock()
	h.log, h.start = log, plan.localStart
	n.mu.byLog[log] = h
	n.mu.Unlock()
	return nil
}

// rebuildReads is how many ranges a rebuild reads ahead at once. A
// partition's ranges not merged yet are one object each (one per group
// commit): read one after the other, a rebuild waits for hundreds of
// object-store round trips.
const rebuildReads = 16

// readInOrder reads rs with read, at most rebuildReads of them ahead of
// fn, and calls fn with each range's bytes in rs's order. The first
// error (a read's, in order, or fn's) stops it and is returned; the reads
// still in flight are cancelled.
func readInOrder(ctx context.Context, rs []diskless.Range, read func(context.Context, diskless.Range) ([]byte, error),
	fn func(diskless.Range, []byte) error) error {
	type result struct {
		data []byte
		err  error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]chan result, len(rs))
	for i := range results {
		results[i] = make(chan result, 1)
	}
	window := make(chan struct{}, rebuildReads)
	go func() {
		for i, r := range rs {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go func() {
				data, err := read(ctx, r)
				results[i] <- result{data, err}
			}()
		}
	}()
	for i, r := range rs {
		var res result
		select {
		case res = <-results[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		if res.err != nil {
			return res.err
		}
		// The slot is freed once the range is consumed, not when its read
		// returns: at most rebuildReads ranges are held at once.
		err := fn(r, res.data)
		<-window
		if err != nil {
			return err
		}
	}
	return nil
}

// eachBatch calls fn with each Kafka record batch of data, in order.
func eachBatch(data []byte, fn func([]byte) error) error {
	for len(data) > 0 {
		if len(data) < 12 {
			return errors.New("truncated batch header")
		}
		size := 12 + int(int32(binary.BigEndian.Uint32(data[8:12])))
		if size < 12+49 || size > len(data) {
			return fmt.Errorf("bad batch length %d", size)
		}
		if err := fn(data[:size]); err != nil {
			return err
		}
		data = data[size:]
	}
	return nil
}

// release stops serving h and gives its ownership up.
func (n *Node) release(ctx context.Context, h *held) {
	n.mu.Lock()
	h.serving = false
	if n.mu.held[h.pkey] == h {
		delete(n.mu.held, h.pkey)
	}
	if n.mu.byLog[h.log] == h {
		delete(n.mu.byLog, h.log)
	}
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := n.Owners().Release(ctx, h.o); err != nil {
		// The owner record may still name this node (an etcd leader
		// election, a timeout: the outcome is unknown), and while it
		// does no other node acquires the partition. Keep the ownership
		// as broken and not serving, so that the next round releases it
		// again (a release that did commit makes the retry a no-op).
		n.log.Warn("cluster-release-failed", zap.String("pkey", h.pkey), zap.Error(err))
		n.mu.Lock()
		if _, taken := n.mu.held[h.pkey]; !taken {
			h.broken = true
			n.mu.held[h.pkey] = h
		}
		n.mu.Unlock()
		return
	}
	n.log.Info("cluster-released", zap.String("pkey", h.pkey), zap.Uint64("epoch", h.o.Epoch))
}

// upkeepLoop runs upkeep over the served partitions every Tick until
// Leave. It is a loop of its own so that merging, which can take a while
// under load, never holds back a placement round: a partition handed
// over is acquired as soon as its release is seen.
func (n *Node) upkeepLoop() {
	t := time.NewTicker(n.cfg.Tick)
	defer t.Stop()
	var stats PublishedStats
	var floored time.Time
	for {
		n.publishStats(&stats)
		if time.Since(floored) >= floorEvery*n.cfg.Tick {
			floored = time.Now()
			n.advanceFloor()
		}
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		n.mu.Lock()
		hs := make([]*held, 0, len(n.mu.held))
		for _, h := range n.mu.held {
			hs = append(hs, h)
		}
		n.mu.Unlock()
		for _, h := range hs {
			if n.stopping() {
				return
			}
			n.upkeep(h)
		}
	}
}

// floorEvery is how many Ticks apart upkeep advances the node's reader
// floor (floored reads): collection of the objects merged away waits for
// it, up to 10 s at the default Tick, and it costs one etcd write each
// time it moves.
const floorEvery = 10

// advanceFloor moves the node's reader floor (pinned reads below the cache) past the reads that
// ended: Collect then deletes the objects unreferenced since.
func (n *Node) advanceFloor() {
	n.mu.Lock()
	sess, d := n.mu.sess, n.p.Diskless
	n.mu.Unlock()
	if d == nil || sess == nil {
		return
	}
	ctx, cancel := context.WithTimeout(n.bg, 5*time.Second)
	defer cancel()
	if err := d.AdvanceFloor(ctx, sess.Lease()); err != nil {
		n.log.Debug("cluster-floor-not-advanced", zap.Error(err))
	}
}

func (n *Node) stopping() bool {
	select {
	case <-n.stop:
		return true
	default:
		return false
	}
}

// upkeep publishes what retention and DeleteRecords did to a served
// partition's start, and merges its small objects now and then.
func (n *Node) upkeep(h *held) {
	n.mu.Lock()
	serving, coordinator := h.serving, h.pkey == CoordinatorKey
	n.mu.Unlock()
	if !serving {
		return
	}
	ctx, cancel := context.WithTimeout(n.bg, 30*time.Second)
	defer cancel()
	if coordinator {
		if time.Since(h.merged) > 30*time.Second {
			h.merged = time.Now()
			if _, err := n.p.Diskless.Collect(ctx); err != nil {
				n.log.Warn("cluster-collect-failed", zap.Error(err))
			}
		}
		return
	}
	// The local start moves only by retention or DeleteRecords: not the
	// rebuild's tail (the bounded rebuild), which h.start begins at.
	if start, end, err := n.p.Resolver.Replicas().LocalBounds(h.topic, h.idx); err == nil {
		p := planUpkeep(upkeepView{localStart: int64(start), localEnd: int64(end), published: h.start,
			sinceExport: time.Since(h.stated), stateInterval: n.cfg.StateInterval, stateCovered: h.stateCovered})
		if p.exportState {
			n.exportState(ctx, h)
		}
		if p.publishStart >= 0 {
			if err := n.p.Diskless.SetStart(ctx, h.o, h.pkey, p.publishStart); err != nil {
				n.log.Warn("cluster-set-start-failed", zap.String("pkey", h.pkey), zap.Error(err))
			} else {
				n.mu.Lock()
				h.start = p.publishStart
				h.pubStart = max(h.pubStart, p.publishStart)
				n.mu.Unlock()
			}
		}
	}
	if time.Since(h.merged) < time.Second {
		return
	}
	h.merged = time.Now()
	// Every group commit adds a range: a busy partition adds hundreds a
	// second. One Merge takes as many as an etcd transaction holds, so
	// merge until nothing is left, within a bound per round.
	for range maxMergesPerRound {
		if n.stopping() {
			return
		}
		merged, err := n.p.Diskless.Merge(ctx, h.o, h.pkey)
		if err != nil && !errors.Is(err, owner.ErrFenced) {
			n.log.Warn("cluster-merge-failed", zap.String("pkey", h.pkey), zap.Error(err))
		}
		if err != nil || merged == 0 {
			return
		}
	}
}

// exportState publishes h's producer and transaction state (periodic state export); upkeep
// calls it at most every StateInterval and only when the log grew since
// the last (planUpkeep).
func (n *Node) exportState(ctx context.Context, h *held) {
	h.stated = time.Now()
	covered, state, ok, err := n.p.Resolver.Replicas().ExportState(h.topic, h.idx)
	if err != nil || !ok || int64(covered) <= h.stateCovered {
		if err != nil {
			n.log.Warn("cluster-export-state-failed", zap.String("pkey", h.pkey), zap.Error(err))
		}
		return
	}
	if err := n.p.Diskless.PutState(ctx, h.o, h.pkey, int64(covered), state); err != nil {
		if !errors.Is(err, owner.ErrFenced) {
			n.log.Warn("cluster-put-state-failed", zap.String("pkey", h.pkey), zap.Error(err))
		}
		return
	}
	h.stateCovered = int64(covered)
}

// maxMergesPerRound bounds the merges of one partition in one round, so
// that one busy partition does not hold the others' upkeep back.
const maxMergesPerRound = 32

// nodeOf parses an owner record's node name.
func nodeOf(name string) (int32, bool) {
	id, err := strconv.ParseInt(strings.TrimSpace(name), 10, 32)
	return int32(id), err == nil
}
