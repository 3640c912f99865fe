package share

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fourLog is fakeLog with four partitions, each offsets 0..9.
type fourLog struct{ fakeLog }

func (fourLog) Partitions(string) (int32, bool) { return 4, true }

// heldCoordinator is a single node's coordinator over a real offset store
// and log, whose state writes all go through hook.
func heldCoordinator(t *testing.T, hook *gate, log Log) *Coordinator {
	t.Helper()
	store, err := offsets.Open(t.TempDir(), offsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	c, err := NewCoordinator(store, log, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	hook.next = store.PutShareStates
	c.writer.write = hook.write
	c.mu.configs["g"] = map[string]string{ConfigAutoOffsetReset: "earliest"}
	return c
}

func join(c *Coordinator, member string) *kmsg.ShareGroupHeartbeatResponse {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.SubscribedTopicNames = "g", member, []string{"t"}
	return c.Heartbeat(Client{}, req)
}

// pendingStates is how many states wait for the writer's next write.
func pendingStates(w *stateWriter) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

// A fetch of several partitions shares one write among them (the durable
// share-partition state): the partitions new to the group are initialized
// in one write, and every partition's acquisition is submitted before any
// of them is waited for, instead of one synced write per partition in
// turn. Nothing is answered before the writes holding its states
// returned, and a partition whose write failed answers the failure with
// no records.
func TestShareFetchWaitsOnceForItsPartitions(t *testing.T) {
	hook := &gate{}
	c := heldCoordinator(t, hook, fourLog{})
	if resp := join(c, "m"); resp.ErrorCode != 0 || len(resp.Assignment.TopicPartitions[0].Partitions) != 4 {
		t.Fatalf("join: error %d", resp.ErrorCode)
	}
	hook.mu.Lock()
	hook.calls, hook.release = make(chan []offsets.ShareWrite, 1), make(chan struct{})
	hook.mu.Unlock()

	req := kmsg.NewPtrShareFetchRequest()
	group, member := "g", "m"
	req.GroupID, req.MemberID, req.MaxRecords, req.MaxBytes = &group, &member, 100, 1<<20
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = topicID
	for p := range int32(4) {
		rp := kmsg.NewShareFetchRequestTopicPartition()
		rp.Partition = p
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	answered := make(chan *kmsg.ShareFetchResponse, 1)
	go func() { answered <- c.Fetch(context.Background(), req, "", nil) }()

	next := func(what string) []offsets.ShareWrite {
		t.Helper()
		select {
		case ws := <-hook.calls:
			return ws
		case resp := <-answered:
			t.Fatalf("fetch answered (%d topics) before its %s", len(resp.Topics), what)
		case <-within(t, what):
			t.Fatalf("no %s", what)
		}
		return nil
	}
	if ws := next("initial states' write"); len(ws) != 4 {
		t.Fatalf("initial states written %v, want the four partitions in one write", ws)
	}
	hook.release <- struct{}{}
	first := next("first acquisition's write")
	hook.mu.Lock()
	hook.fail = errors.New("disk")
	hook.mu.Unlock()
	// While the first acquisition's write is held, the other partitions'
	// acquisitions are submitted: they wait for the next write together.
	// (On a loaded machine the writer may not have looked for more work
	// after the initial write before all four were submitted: then the
	// first write holds all four.)
	if len(first) < 4 {
		deadline := time.Now().Add(10 * time.Second)
		for pendingStates(c.writer) < 4-len(first) {
			if time.Now().After(deadline) {
				t.Fatalf("%d states pending behind the held write, want the other %d partitions'", pendingStates(c.writer), 4-len(first))
			}
			time.Sleep(time.Millisecond)
		}
		hook.release <- struct{}{}
		if ws := next("second acquisition write"); len(first)+len(ws) != 4 {
			t.Fatalf("acquisitions written in %v and %v, want four states in two writes", first, ws)
		}
		select {
		case resp := <-answered:
			t.Fatalf("fetch answered (%d topics) while its second write is held", len(resp.Topics))
		default:
		}
	}
	hook.release <- struct{}{}
	var resp *kmsg.ShareFetchResponse
	select {
	case resp = <-answered:
	case <-within(t, "the answer"):
		t.Fatal("fetch never answered")
	}
	n := 0
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			n++
			if p.ErrorCode != kerr.CoordinatorNotAvailable.Code || len(p.AcquiredRecords) != 0 || len(p.Records) != 0 {
				t.Fatalf("partition %d answered %d with %d ranges, want COORDINATOR_NOT_AVAILABLE and nothing", p.Partition, p.ErrorCode, len(p.AcquiredRecords))
			}
		}
	}
	if n != 4 {
		t.Fatalf("%d partitions answered, want 4", n)
	}
}

// A join's epoch is answered only once it is durable (share member
// epochs): the heartbeat waits for the write of the group record, which it
// shares with the joins and state writes submitted meanwhile (one write,
// the latest epoch); one whose write failed answers
// COORDINATOR_NOT_AVAILABLE, and the next heartbeat writes the epoch
// again.
func TestShareJoinAnsweredAfterEpochWrite(t *testing.T) {
	hook := &gate{calls: make(chan []offsets.ShareWrite, 1), release: make(chan struct{})}
	c := heldCoordinator(t, hook, fourLog{})
	answered := make(chan *kmsg.ShareGroupHeartbeatResponse, 3)
	go func() { answered <- join(c, "a") }()
	var ws []offsets.ShareWrite
	select {
	case ws = <-hook.calls:
	case <-within(t, "epoch write"):
		t.Fatal("the join's epoch was never written")
	}
	if len(ws) != 1 || !ws[0].Record || ws[0].Epoch != 1 {
		t.Fatalf("first write %+v, want the group record at epoch 1", ws)
	}
	go func() { answered <- join(c, "b") }()
	go func() { answered <- join(c, "c") }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.writer.mu.Lock()
		n := len(c.writer.pending)
		epoch := int32(0)
		if n == 1 {
			epoch = c.writer.pending[0].Epoch
		}
		c.writer.mu.Unlock()
		if epoch == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pending behind the held write: %d writes, epoch %d; want the group record at epoch 3 alone", n, epoch)
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case resp := <-answered:
		t.Fatalf("a join answered (error %d, epoch %d) before its epoch was written", resp.ErrorCode, resp.MemberEpoch)
	default:
	}
	hook.mu.Lock()
	hook.fail = errors.New("disk")
	hook.mu.Unlock()
	hook.release <- struct{}{} // epoch 1 fails
	<-hook.calls
	hook.mu.Lock()
	hook.fail = nil
	hook.mu.Unlock()
	hook.release <- struct{}{} // epoch 3 is written
	failed, ok := 0, 0
	for range 3 {
		resp := <-answered
		switch {
		case resp.ErrorCode == kerr.CoordinatorNotAvailable.Code && resp.MemberEpoch == 0:
			failed++
		case resp.ErrorCode == 0 && (resp.MemberEpoch == 2 || resp.MemberEpoch == 3):
			ok++ // b's epoch 2, or 3: the write of 3 made both durable
		default:
			t.Fatalf("join answered error %d epoch %d", resp.ErrorCode, resp.MemberEpoch)
		}
	}
	if failed != 1 || ok != 2 {
		t.Fatalf("%d joins failed and %d answered, want 1 and 2", failed, ok)
	}
	groups, err := c.store.ShareGroups()
	if err != nil || len(groups) != 1 || groups[0].Epoch != 3 {
		t.Fatalf("durable groups %+v (%v), want g at epoch 3", groups, err)
	}

	// A lone join whose write failed: its retry writes the epoch again.
	hook.mu.Lock()
	hook.fail = errors.New("disk")
	hook.mu.Unlock()
	go func() { answered <- join(c, "d") }()
	if ws := <-hook.calls; len(ws) != 1 || ws[0].Epoch != 4 {
		t.Fatalf("write %+v, want the group record at epoch 4", ws)
	}
	hook.release <- struct{}{}
	// The write may fail before the join has looked at it (the writer
	// runs as soon as the record is submitted): the join then writes its
	// epoch again itself (epochWriteLocked), and that write fails too.
	var failedResp *kmsg.ShareGroupHeartbeatResponse
	for failedResp == nil {
		select {
		case failedResp = <-answered:
		case ws := <-hook.calls:
			if len(ws) != 1 || ws[0].Epoch != 4 {
				t.Fatalf("rewrite %+v, want the group record at epoch 4", ws)
			}
			hook.release <- struct{}{}
		case <-within(t, "the failed join's answer"):
			t.Fatal("the join whose epoch write failed was never answered")
		}
	}
	if failedResp.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("join whose epoch write failed answered error %d", failedResp.ErrorCode)
	}
	hook.mu.Lock()
	hook.fail = nil
	hook.mu.Unlock()
	go func() { answered <- join(c, "d") }()
	if ws := <-hook.calls; len(ws) != 1 || ws[0].Epoch != 4 {
		t.Fatalf("retry wrote %+v, want the group record at epoch 4 again", ws)
	}
	hook.release <- struct{}{}
	if resp := <-answered; resp.ErrorCode != 0 || resp.MemberEpoch != 4 {
		t.Fatalf("retried join answered error %d epoch %d, want epoch 4", resp.ErrorCode, resp.MemberEpoch)
	}
	if groups, err = c.store.ShareGroups(); err != nil || groups[0].Epoch != 4 {
		t.Fatalf("durable groups %+v (%v), want g at epoch 4", groups, err)
	}
}

// clockedCoordinator is a coordinator over a fresh store and log, with
// PartitionMaxRecordLocks locks, the clock now, and group g reading from
// the earliest offset.
func clockedCoordinator(t *testing.T, log Log, locks int, now func() time.Time) *Coordinator {
	t.Helper()
	store, err := offsets.Open(t.TempDir(), offsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	c, err := NewCoordinator(store, log, nil, Config{PartitionMaxRecordLocks: locks, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	c.mu.configs["g"] = map[string]string{ConfigAutoOffsetReset: "earliest"}
	return c
}

// waitLog is fakeLog recording the end of each long-poll wait.
type waitLog struct {
	fakeLog
	until *[]time.Time
}

func (l waitLog) Wait(_ context.Context, _ []offsets.TopicPartition, _ []<-chan struct{}, until time.Time) bool {
	*l.until = append(*l.until, until)
	return false
}

// A fetch that finds the in-flight window full (the in-flight window
// bound) long-polls up to MaxWaitMillis, unless its member holds records
// in that window: then it waits ownBlockWait at most, since a client that
// sends its acknowledgements only after the fetch is answered would hold
// the whole window until MaxWaitMillis.
func TestShareFetchOnOwnFullWindowWaitsBriefly(t *testing.T) {
	now := time.Unix(1000, 0)
	var until []time.Time
	c := clockedCoordinator(t, waitLog{until: &until}, 10, func() time.Time { return now })
	for _, m := range []string{"m", "o"} {
		if resp := join(c, m); resp.ErrorCode != 0 {
			t.Fatalf("join %s: error %d", m, resp.ErrorCode)
		}
	}
	if _, got := leaderFetch(t, c, "m", 0); len(got) != 10 {
		t.Fatalf("acquired %v, want 0..9", got)
	}
	fetch := func(member string, epoch int32) {
		t.Helper()
		req := kmsg.NewPtrShareFetchRequest()
		group := "g"
		req.GroupID, req.MemberID, req.ShareSessionEpoch, req.MaxRecords, req.MaxBytes, req.MaxWaitMillis = &group, &member, epoch, 100, 1<<20, 10_000
		if epoch == 0 {
			rt := kmsg.NewShareFetchRequestTopic()
			rt.TopicID = topicID
			rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
			req.Topics = append(req.Topics, rt)
		}
		if resp := c.Fetch(context.Background(), req, "", nil); resp.ErrorCode != 0 || len(resp.Topics) > 0 && len(resp.Topics[0].Partitions[0].AcquiredRecords) > 0 {
			t.Fatalf("fetch of %s on a full window: error %d or records", member, resp.ErrorCode)
		}
	}
	fetch("o", 0)
	fetch("m", 1) // the holder's first fetch since it was given records: answered at once
	fetch("m", 2)
	want := []time.Time{now.Add(10 * time.Second), now.Add(ownBlockWait)}
	if len(until) != 2 || !until[0].Equal(want[0]) || !until[1].Equal(want[1]) {
		t.Fatalf("waits until %v, want %v (another member's long poll, none for the holder's first fetch, then the holder's short one)", until, want)
	}
}

// A fetch whose member holds records in a partition it can acquire
// nothing more from, the window not full (here: at the high watermark),
// is answered at once the first time after its member was given records
// there and polls ownBlockWait at most after that (answerHolderLocked):
// franz-go's acknowledgements wait behind that fetch, and a long poll
// would hold them, and every member behind the window, for MaxWaitMillis.
func TestShareHolderFetchAtHighWatermarkAnswersAtOnce(t *testing.T) {
	now := time.Unix(1000, 0)
	var until []time.Time
	c := clockedCoordinator(t, waitLog{until: &until}, 100, func() time.Time { return now })
	if resp := join(c, "m"); resp.ErrorCode != 0 {
		t.Fatalf("join: error %d", resp.ErrorCode)
	}
	if _, got := leaderFetch(t, c, "m", 0); len(got) != 10 {
		t.Fatalf("acquired %v, want 0..9 (the high watermark is 10)", got)
	}
	for epoch := int32(1); epoch <= 2; epoch++ {
		req := kmsg.NewPtrShareFetchRequest()
		group, member := "g", "m"
		req.GroupID, req.MemberID, req.ShareSessionEpoch, req.MaxRecords, req.MaxBytes, req.MaxWaitMillis = &group, &member, epoch, 100, 1<<20, 10_000
		if resp := c.Fetch(context.Background(), req, "", nil); resp.ErrorCode != 0 {
			t.Fatalf("fetch %d: error %d", epoch, resp.ErrorCode)
		}
		if epoch == 1 && len(until) != 0 {
			t.Fatalf("the holder's first fetch after its records waited until %v, want an answer at once", until)
		}
	}
	if len(until) != 1 || !until[0].Equal(now.Add(ownBlockWait)) {
		t.Fatalf("the holder's second fetch waited until %v, want %v (ownBlockWait, not MaxWaitMillis)", until, now.Add(ownBlockWait))
	}
}

// boundsLog is fourLog reporting each Bounds call on bounds, once set.
type boundsLog struct {
	fourLog
	bounds *chan int32
}

func (l boundsLog) Bounds(topic string, p int32) (int64, int64, error) {
	if ch := *l.bounds; ch != nil {
		ch <- p
	}
	return l.fourLog.Bounds(topic, p)
}

// fetchParts fetches partitions ps in a new session of member.
func fetchParts(c *Coordinator, member string, ps ...int32) *kmsg.ShareFetchResponse {
	req := kmsg.NewPtrShareFetchRequest()
	group := "g"
	req.GroupID, req.MemberID, req.MaxRecords, req.MaxBytes = &group, &member, 100, 1<<20
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = topicID
	for _, p := range ps {
		rp := kmsg.NewShareFetchRequestTopicPartition()
		rp.Partition = p
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return c.Fetch(context.Background(), req, "", nil)
}

// Initializing a partition's state (the share-partition start offset)
// holds only the requests that need that partition, not the group's
// lock: a heartbeat is answered while the initial write is held, and
// another member's fetch of one of those partitions waits for that write
// and then reads the state it made, instead of failing or making another.
func TestSharePartitionInitHoldsOnlyItsPartitions(t *testing.T) {
	hook := &gate{}
	var bounds chan int32
	c := heldCoordinator(t, hook, boundsLog{bounds: &bounds})
	for _, m := range []string{"m", "o"} {
		if resp := join(c, m); resp.ErrorCode != 0 {
			t.Fatalf("join %s: error %d", m, resp.ErrorCode)
		}
	}
	hook.mu.Lock()
	hook.calls, hook.release = make(chan []offsets.ShareWrite, 1), make(chan struct{})
	hook.mu.Unlock()
	first := make(chan *kmsg.ShareFetchResponse, 1)
	go func() { first <- fetchParts(c, "m", 0, 1, 2, 3) }()
	select {
	case ws := <-hook.calls:
		if len(ws) != 4 {
			t.Fatalf("initial write %v, want four states", ws)
		}
	case <-within(t, "initial write"):
		t.Fatal("no initial write")
	}
	beat := make(chan int16, 1)
	go func() {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID, req.MemberEpoch = "g", "m", 1
		beat <- c.Heartbeat(Client{}, req).ErrorCode
	}()
	select {
	case code := <-beat:
		if code != 0 {
			t.Fatalf("heartbeat: error %d", code)
		}
	case <-within(t, "heartbeat"):
		t.Fatal("a heartbeat waits for a partition's initial write")
	}
	bounds = make(chan int32, 1)
	second := make(chan *kmsg.ShareFetchResponse, 1)
	go func() { second <- fetchParts(c, "o", 0) }()
	select {
	case <-bounds: // o's fetch is at partition 0, which m's fetch initializes
	case <-within(t, "o's fetch"):
		t.Fatal("o's fetch never reached its partition")
	}
	select {
	case resp := <-second:
		t.Fatalf("o's fetch answered (error %d) before the initial write returned", resp.Topics[0].Partitions[0].ErrorCode)
	default:
	}
	bounds = nil
	hook.mu.Lock()
	hook.calls = nil
	hook.mu.Unlock()
	close(hook.release)
	for _, ch := range []chan *kmsg.ShareFetchResponse{first, second} {
		resp := <-ch
		for _, p := range resp.Topics[0].Partitions {
			if p.ErrorCode != 0 {
				t.Fatalf("partition %d answered %d", p.Partition, p.ErrorCode)
			}
		}
	}
	if got := len(c.lookup("g").mu.parts); got != 4 {
		t.Fatalf("%d partitions known, want 4", got)
	}
}

// A partition whose initial write failed is not used (the share-partition
// start offset): the fetch answers the failure, and the group keeps no
// state of it until a write of one returns.
func TestSharePartitionInitFailedLeavesNoState(t *testing.T) {
	hook := &gate{}
	c := heldCoordinator(t, hook, fourLog{})
	if resp := join(c, "m"); resp.ErrorCode != 0 {
		t.Fatalf("join: error %d", resp.ErrorCode)
	}
	hook.mu.Lock()
	hook.fail = errors.New("disk")
	hook.mu.Unlock()
	for _, p := range fetchParts(c, "m", 0, 1, 2, 3).Topics[0].Partitions {
		if p.ErrorCode != kerr.CoordinatorNotAvailable.Code || len(p.AcquiredRecords) > 0 {
			t.Fatalf("partition %d answered %d with %d ranges, want COORDINATOR_NOT_AVAILABLE and nothing", p.Partition, p.ErrorCode, len(p.AcquiredRecords))
		}
	}
	g := c.lookup("g")
	g.mu.Lock()
	n := len(g.mu.parts)
	g.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d partitions kept after their initial write failed", n)
	}
}

// Acknowledgements carried by a ShareFetch are written with what the
// fetch acquires, one wait for all before the answer (the durable
// share-partition state): one whose write failed answers the failure as
// its partition's acknowledgement error.
func TestShareFetchAckWriteFailureAnswered(t *testing.T) {
	hook := &gate{}
	c := newStoreCoordinator(t, hook)
	if _, got := leaderFetch(t, c, "m", 0); len(got) != 10 {
		t.Fatalf("acquired %v, want 0..9", got)
	}
	hook.mu.Lock()
	hook.fail = errors.New("disk")
	hook.mu.Unlock()
	req := kmsg.NewPtrShareFetchRequest()
	group, member := "g", "m"
	req.GroupID, req.MemberID, req.ShareSessionEpoch, req.MaxRecords, req.MaxBytes = &group, &member, 1, 100, 1<<20
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = topicID
	rp := kmsg.NewShareFetchRequestTopicPartition()
	b := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
	b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = 0, 4, []int8{ackAccept}
	rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := c.Fetch(context.Background(), req, "", nil)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch: error %d, %d topics", resp.ErrorCode, len(resp.Topics))
	}
	if code := resp.Topics[0].Partitions[0].AcknowledgeErrorCode; code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("acknowledgement whose write failed answered %d, want COORDINATOR_NOT_AVAILABLE", code)
	}
}
