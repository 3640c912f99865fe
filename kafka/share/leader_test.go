package share

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The leader side of cluster mode (share groups in cluster mode) over fakes of the partition
// (one topic "t", one partition holding offsets 0..9, one record per
// batch) and of the durable states.

var topicID = [16]byte{1}

var errRefused = errors.New("refused")

type fakeLog struct{}

func (fakeLog) Partitions(string) (int32, bool)      { return 1, true }
func (fakeLog) TopicID(string) ([16]byte, bool)      { return topicID, true }
func (fakeLog) TopicName(id [16]byte) (string, bool) { return "t", id == topicID }
func (fakeLog) Bounds(string, int32) (int64, int64, error) {
	return 0, 10, nil
}
func (fakeLog) Read(_ string, _ int32, offset int64, _ int, _ Wire) ([][]byte, error) {
	var out [][]byte
	for o := offset; o < 10; o++ {
		out = append(out, batchHeader(o, 0, false))
	}
	return out, nil
}
func (l fakeLog) ReadCommitted(topic string, partition int32, offset int64, maxBytes int, into Wire) ([][]byte, int64, []AbortedTxn, error) {
	b, err := l.Read(topic, partition, offset, maxBytes, into)
	return b, 10, nil, err
}
func (fakeLog) MaxBytes() int { return 1 << 20 }
func (fakeLog) Wait(context.Context, []offsets.TopicPartition, []<-chan struct{}, time.Time) bool {
	return false
}
func (fakeLog) Code(error) int16 { return kerr.UnknownServerError.Code }

// fakeStates is States in memory: the durable record of each partition
// with its version, the epoch this node leads at, and a switch that
// refuses every Put (a fenced leader).
type fakeStates struct {
	mu      sync.Mutex
	recs    map[offsets.TopicPartition]offsets.SharePartition
	vers    map[offsets.TopicPartition]int64
	next    int64
	epoch   int32
	refuse  bool
	loads   int
	configs map[string]string
	// afterLoad, when set, runs once after a Load has read and before it
	// returns: what the node does while its read is on the wire.
	afterLoad func()
}

func newFakeStates() *fakeStates {
	return &fakeStates{recs: map[offsets.TopicPartition]offsets.SharePartition{}, vers: map[offsets.TopicPartition]int64{},
		epoch: 1, configs: map[string]string{ConfigAutoOffsetReset: "earliest"}}
}

func (f *fakeStates) Serving(offsets.TopicPartition) (int32, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.epoch, true
}

func (f *fakeStates) Load(_ string, tp offsets.TopicPartition) (offsets.SharePartition, int64, error) {
	f.mu.Lock()
	f.loads++
	sp, v, hook := f.recs[tp], f.vers[tp], f.afterLoad
	f.afterLoad = nil
	f.mu.Unlock()
	if hook != nil {
		hook()
	}
	return sp, v, nil
}

func (f *fakeStates) Put(_ string, sp offsets.SharePartition, epoch int32, version int64) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse || epoch != f.epoch || version != f.vers[sp.TopicPartition] {
		return 0, errRefused
	}
	return f.setLocked(sp), nil
}

// set writes sp as another node would.
func (f *fakeStates) set(sp offsets.SharePartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(sp)
}

func (f *fakeStates) setLocked(sp offsets.SharePartition) int64 {
	f.next++
	f.recs[sp.TopicPartition], f.vers[sp.TopicPartition] = sp, f.next
	return f.next
}

func (f *fakeStates) Reset(string, []offsets.SharePartition, []offsets.TopicPartition) error {
	return nil
}
func (f *fakeStates) List(string) ([]offsets.SharePartition, error) { return nil, nil }
func (f *fakeStates) DeleteGroup(string) error                      { return nil }
func (f *fakeStates) GroupConfigs(string) map[string]string         { return f.configs }

var tp0 = offsets.TopicPartition{Topic: "t", Partition: 0}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newTestLeader(states *fakeStates, clk *clock) *Coordinator {
	return NewLeader(states, fakeLog{}, Config{Now: clk.Now, SessionTimeout: time.Second})
}

// leaderFetch sends a ShareFetch of partition 0 at session epoch epoch and
// returns the partition's error and the acquired offsets with counts.
func leaderFetch(t *testing.T, c *Coordinator, member string, epoch int32) (int16, map[int64]int16) {
	t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	group := "g"
	req.GroupID, req.MemberID, req.ShareSessionEpoch, req.MaxRecords, req.MaxBytes = &group, &member, epoch, 100, 1<<20
	if epoch == 0 {
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = topicID
		rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
	}
	resp := c.Fetch(context.Background(), req, "", nil)
	if resp.ErrorCode != 0 {
		t.Fatalf("share fetch: error %d", resp.ErrorCode)
	}
	got := map[int64]int16{}
	var code int16
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			code = p.ErrorCode
			for _, ar := range p.AcquiredRecords {
				for o := ar.FirstOffset; o <= ar.LastOffset; o++ {
					got[o] = ar.DeliveryCount
				}
			}
		}
	}
	return code, got
}

func leaderAccept(t *testing.T, c *Coordinator, member string, epoch int32, first, last int64) int16 {
	t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	group := "g"
	req.GroupID, req.MemberID, req.ShareSessionEpoch = &group, &member, epoch
	rt := kmsg.NewShareAcknowledgeRequestTopic()
	rt.TopicID = topicID
	rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
	b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
	b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = first, last, []int8{ackAccept}
	rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := c.Acknowledge(req, "", nil)
	if resp.ErrorCode != 0 {
		t.Fatalf("share acknowledge: error %d", resp.ErrorCode)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

func wantOffsets(t *testing.T, what string, got map[int64]int16, first, last int64, count int16) {
	t.Helper()
	if int64(len(got)) != last-first+1 {
		t.Fatalf("%s: acquired %v, want %d..%d", what, got, first, last)
	}
	for o := first; o <= last; o++ {
		if got[o] != count {
			t.Fatalf("%s: acquired %v, want %d..%d with count %d", what, got, first, last, count)
		}
	}
}

// TestLeaderRereadsAfterEpochChange (re-reading after a leader change): once the leader epoch changed,
// the leader's cached acquisitions are not honoured: an acknowledgement
// of them is INVALID_RECORD_STATE, and the durable state (here advanced
// by another leader meanwhile) is served, its available records with
// their counts one higher.
func TestLeaderRereadsAfterEpochChange(t *testing.T) {
	st, clk := newFakeStates(), &clock{now: time.Unix(1000, 0)}
	c := newTestLeader(st, clk)
	_, got := leaderFetch(t, c, "a", 0)
	wantOffsets(t, "first fetch", got, 0, 9, 1)
	// Another node led meanwhile and finished 0..2; this node leads again.
	st.set(offsets.SharePartition{TopicPartition: tp0, StartOffset: 3,
		Runs: []offsets.ShareRun{{First: 3, Last: 9, State: offsets.ShareAvailable, DeliveryCount: 1}}})
	st.mu.Lock()
	st.epoch = 3
	st.mu.Unlock()
	if code := leaderAccept(t, c, "a", 1, 3, 4); code != kerr.InvalidRecordState.Code {
		t.Fatalf("acknowledging records acquired under another leadership: error %d, want INVALID_RECORD_STATE", code)
	}
	_, got = leaderFetch(t, c, "a", 2)
	wantOffsets(t, "fetch after the epoch change", got, 3, 9, 2)
}

// TestLeaderRefusedWriteRereads (leader writes before answers): a refused write answers
// NOT_LEADER_OR_FOLLOWER and leaves nothing of the request in force: the
// next fetch reads the durable state and acquires from it.
func TestLeaderRefusedWriteRereads(t *testing.T) {
	st, clk := newFakeStates(), &clock{now: time.Unix(1000, 0)}
	c := newTestLeader(st, clk)
	if _, got := leaderFetch(t, c, "a", 0); len(got) != 10 {
		t.Fatalf("first fetch acquired %v", got)
	}
	if code := leaderAccept(t, c, "a", 1, 0, 4); code != 0 {
		t.Fatalf("accept: error %d", code)
	}
	st.mu.Lock()
	st.refuse = true
	st.mu.Unlock()
	if code := leaderAccept(t, c, "a", 2, 5, 9); code != kerr.NotLeaderForPartition.Code {
		t.Fatalf("accept with the write refused: error %d, want NOT_LEADER_OR_FOLLOWER", code)
	}
	st.mu.Lock()
	st.refuse = false
	loads := st.loads
	st.mu.Unlock()
	// 5..9 are durable as available, delivered once: delivered again.
	_, got := leaderFetch(t, c, "b", 0)
	wantOffsets(t, "fetch after the refused write", got, 5, 9, 2)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.loads == loads {
		t.Fatalf("the durable state was not read again after the refused write")
	}
}

// TestLeaderEvictsIdleSessions (releases at the leader): a member whose share session on
// this node has been idle past the session timeout has its records
// released when another session opens, though its locks have not expired.
func TestLeaderEvictsIdleSessions(t *testing.T) {
	st, clk := newFakeStates(), &clock{now: time.Unix(1000, 0)}
	c := newTestLeader(st, clk)
	_, got := leaderFetch(t, c, "a", 0)
	wantOffsets(t, "first fetch", got, 0, 9, 1)
	if _, got := leaderFetch(t, c, "b", 0); len(got) != 0 {
		t.Fatalf("b acquired %v while a's session is live", got)
	}
	clk.advance(2 * time.Second) // past the session timeout, within the lock
	_, got = leaderFetch(t, c, "b", 0)
	wantOffsets(t, "fetch after a's session idled out", got, 0, 9, 2)
	if n := c.Sessions(); n != 1 {
		t.Fatalf("%d sessions open, want b's only", n)
	}
}

// TestLeaderAcknowledgeWithoutSession (the leader side): an acknowledgement at a
// leader that never saw the group (the partition moved here) is
// SHARE_SESSION_NOT_FOUND, so the client opens a session, not
// GROUP_ID_NOT_FOUND, which would end it.
func TestLeaderAcknowledgeWithoutSession(t *testing.T) {
	c := newTestLeader(newFakeStates(), &clock{now: time.Unix(1000, 0)})
	req := kmsg.NewPtrShareAcknowledgeRequest()
	group, member := "g", "a"
	req.GroupID, req.MemberID, req.ShareSessionEpoch = &group, &member, 3
	if resp := c.Acknowledge(req, "", nil); resp.ErrorCode != kerr.ShareSessionNotFound.Code {
		t.Fatalf("acknowledge without a session: error %d, want SHARE_SESSION_NOT_FOUND", resp.ErrorCode)
	}
}

// TestLeaderKeepsStateNewerThanItsRead (leader writes before answers): a
// revalidating read that this node's own acknowledgement overtakes
// returns a version older than the cached state; the leader keeps its
// cache. Nothing is refused or delivered again: the member still holds
// what it acquired and acknowledges it, and nothing is left to acquire.
// Taking the older read would serve records already accepted, have the
// next write refused on its stale version, and then redeliver everything
// in flight though no leadership changed.
func TestLeaderKeepsStateNewerThanItsRead(t *testing.T) {
	st, clk := newFakeStates(), &clock{now: time.Unix(1000, 0)}
	c := newTestLeader(st, clk)
	_, got := leaderFetch(t, c, "a", 0)
	wantOffsets(t, "first fetch", got, 0, 9, 1)
	clk.advance(revalidateEvery + time.Millisecond) // the next fetch reads the state again
	st.mu.Lock()
	st.afterLoad = func() {
		if code := leaderAccept(t, c, "a", 2, 0, 4); code != 0 {
			t.Errorf("accept during the read: error %d", code)
		}
	}
	st.mu.Unlock()
	code, got := leaderFetch(t, c, "a", 1)
	if code != 0 || len(got) != 0 {
		t.Fatalf("fetch whose read the accept overtook: error %d, acquired %v; want nothing, no error", code, got)
	}
	if code := leaderAccept(t, c, "a", 3, 5, 9); code != 0 {
		t.Fatalf("accepting the rest of what a holds: error %d", code)
	}
	if code, got := leaderFetch(t, c, "a", 4); code != 0 || len(got) != 0 {
		t.Fatalf("fetch after everything was accepted: error %d, acquired %v", code, got)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if sp := st.recs[tp0]; sp.StartOffset != 10 {
		t.Fatalf("durable state %+v, want every record done (start offset 10)", sp)
	}
}
