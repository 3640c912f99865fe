package group

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/offsets/offsetstest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeClock drives every coordinator timer from the test: Advance fires
// due callbacks synchronously, in deadline order, so timeouts need no
// sleeps.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c     *fakeClock
	at    time.Time
	f     func()
	done  bool
	order int
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.UnixMilli(1_700_000_000_000)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc keeps f for Advance; with d ≤ 0 it calls f at once on a
// goroutine of its own, unless stopped first (the clock.Clock contract).
func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f, order: len(c.timers)}
	if d <= 0 {
		go t.fire()
		return t
	}
	c.timers = append(c.timers, t)
	return t
}

// fire calls a timer of no delay's f unless it was stopped.
func (t *fakeTimer) fire() {
	t.c.mu.Lock()
	was := t.done
	t.done = true
	t.c.mu.Unlock()
	if !was {
		t.f()
	}
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.done
	t.done = true
	return was
}

// Advance moves time forward by d in steps, firing what falls due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		live := c.timers[:0]
		for _, t := range c.timers {
			if !t.done {
				live = append(live, t)
			}
		}
		c.timers = live
		var next *fakeTimer
		for _, t := range c.timers {
			if !t.done && !t.at.After(end) && (next == nil || t.at.Before(next.at) || (t.at.Equal(next.at) && t.order < next.order)) {
				next = t
			}
		}
		if next == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		next.done = true
		if next.at.After(c.now) {
			c.now = next.at
		}
		c.mu.Unlock()
		next.f()
	}
}

const (
	testSession   = 10 * time.Second
	testRebalance = 30 * time.Second
	waitFor       = 10 * time.Second
)

type harness struct {
	t     *testing.T
	c     *Coordinator
	clock *fakeClock
	store *offsets.Store
	dir   string
	// fs holds the offsets store's pebble (nil: the real file system);
	// cfg adds to the coordinator's test config.
	fs  *offsetstest.Crashable
	cfg Config
	// writeHook, when set, is called before every synced write of the
	// store is applied, and can hold or fail it.
	writeHook func() error
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir()}
	h.open()
	return h
}

func (h *harness) open() {
	h.t.Helper()
	opts := offsets.Options{Now: h.clock.Now, Retention: 24 * time.Hour}
	if h.fs != nil {
		opts = h.fs.Options(opts)
	}
	if h.writeHook != nil {
		opts = offsetstest.WithWriteHook(opts, h.writeHook)
	}
	st, err := offsets.Open(h.dir, opts)
	if err != nil {
		h.t.Fatal(err)
	}
	cfg := h.cfg
	cfg.Clock, cfg.MinSessionTimeout, cfg.MaxSessionTimeout = h.clock, time.Millisecond, 100*time.Hour
	c, err := NewCoordinator(st, cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	h.c, h.store = c, st
	h.t.Cleanup(h.close)
}

func (h *harness) close() {
	if h.c != nil {
		h.c.Close()
		_ = h.store.Close()
		h.c = nil
	}
}

func (h *harness) restart() {
	h.close()
	h.open()
}

func consumerMeta(topics ...string) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Topics = topics
	return m.AppendTo(nil)
}

func newJoin(group, member string, protocols ...string) *kmsg.JoinGroupRequest {
	r := kmsg.NewPtrJoinGroupRequest()
	r.Version = 9
	r.Group, r.MemberID, r.ProtocolType = group, member, "consumer"
	r.SessionTimeoutMillis = int32(testSession / time.Millisecond)
	r.RebalanceTimeoutMillis = int32(testRebalance / time.Millisecond)
	if len(protocols) == 0 {
		protocols = []string{"range"}
	}
	for _, p := range protocols {
		jp := kmsg.NewJoinGroupRequestProtocol()
		jp.Name, jp.Metadata = p, consumerMeta("t")
		r.Protocols = append(r.Protocols, jp)
	}
	return r
}

type joinOut struct {
	resp *kmsg.JoinGroupResponse
	err  error
}

// joinAsync sends a JoinGroup that may block; the result arrives on the
// returned channel.
func (h *harness) joinAsync(req *kmsg.JoinGroupRequest) <-chan joinOut {
	ch := make(chan joinOut, 1)
	c := h.c
	go func() {
		resp, err := c.JoinGroup(context.Background(), Client{ID: "cl", Host: "/127.0.0.1"}, req)
		ch <- joinOut{resp, err}
	}()
	return ch
}

func (h *harness) await(ch <-chan joinOut) *kmsg.JoinGroupResponse {
	h.t.Helper()
	select {
	case o := <-ch:
		if o.err != nil {
			h.t.Fatalf("join: %v", o.err)
		}
		return o.resp
	case <-time.After(waitFor):
		h.t.Fatal("join did not complete")
		return nil
	}
}

// blocked asserts ch has no answer yet (the join is parked); it checks
// after the coordinator has had the chance to answer synchronously, which
// it always does before JoinGroup starts waiting.
func (h *harness) blocked(ch <-chan joinOut, what string) {
	h.t.Helper()
	select {
	case o := <-ch:
		h.t.Fatalf("%s: expected to block, got %+v %v", what, o.resp, o.err)
	default:
	}
}

// join does the full KIP-394 handshake and waits for the answer.
func (h *harness) join(group string, protocols ...string) *kmsg.JoinGroupResponse {
	h.t.Helper()
	first := h.await(h.joinAsync(newJoin(group, "", protocols...)))
	if first.ErrorCode != kerr.MemberIDRequired.Code {
		h.t.Fatalf("first join: code %d", first.ErrorCode)
	}
	return h.await(h.joinAsync(newJoin(group, first.MemberID, protocols...)))
}

// joinStart does the handshake and returns the parked second join.
func (h *harness) joinStart(group string) (string, <-chan joinOut) {
	h.t.Helper()
	first := h.await(h.joinAsync(newJoin(group, "")))
	if first.ErrorCode != kerr.MemberIDRequired.Code {
		h.t.Fatalf("first join: code %d", first.ErrorCode)
	}
	ch := h.joinAsync(newJoin(group, first.MemberID))
	h.waitParked(group, first.MemberID, ch)
	return first.MemberID, ch
}

// waitSyncParked waits until member's SyncGroup is registered.
func (h *harness) waitSyncParked(group, member string, ch <-chan syncOut) {
	h.t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		if len(ch) > 0 {
			return
		}
		g := h.c.lookup(group)
		g.mu.Lock()
		m := g.mu.members[member]
		parked := m != nil && m.awaitingSync()
		g.mu.Unlock()
		if parked {
			return
		}
		time.Sleep(time.Millisecond) // polling a condition, bounded by the deadline
	}
	h.t.Fatalf("sync of %s never parked", member)
}

// waitParked waits until member's JoinGroup is registered with the group
// (or already answered, which ch then holds).
func (h *harness) waitParked(group, member string, ch <-chan joinOut) {
	h.t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		if len(ch) > 0 {
			return
		}
		if g := h.c.lookup(group); g != nil {
			g.mu.Lock()
			m := g.mu.members[member]
			parked := m != nil && m.awaitingJoin()
			g.mu.Unlock()
			if parked {
				return
			}
		}
		time.Sleep(time.Millisecond) // polling a condition, bounded by the deadline
	}
	h.t.Fatalf("join of %s never parked", member)
}

type syncOut struct {
	resp *kmsg.SyncGroupResponse
	err  error
}

func (h *harness) syncAsync(group, member string, gen int32, assign map[string]string) <-chan syncOut {
	r := kmsg.NewPtrSyncGroupRequest()
	r.Version = 5
	r.Group, r.MemberID, r.Generation = group, member, gen
	// v5 must name the protocol type and name: the group's.
	pt, pn := "consumer", "range"
	if g := h.c.lookup(group); g != nil {
		g.mu.Lock()
		if g.mu.protocol != "" {
			pt, pn = g.mu.protocolType, g.mu.protocol
		}
		g.mu.Unlock()
	}
	r.ProtocolType, r.Protocol = &pt, &pn
	ids := make([]string, 0, len(assign))
	for id := range assign {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = id, []byte(assign[id])
		r.GroupAssignment = append(r.GroupAssignment, a)
	}
	ch := make(chan syncOut, 1)
	c := h.c
	go func() {
		resp, err := c.SyncGroup(context.Background(), r)
		ch <- syncOut{resp, err}
	}()
	return ch
}

func (h *harness) awaitSync(ch <-chan syncOut) *kmsg.SyncGroupResponse {
	h.t.Helper()
	select {
	case o := <-ch:
		if o.err != nil {
			h.t.Fatalf("sync: %v", o.err)
		}
		return o.resp
	case <-time.After(waitFor):
		h.t.Fatal("sync did not complete")
		return nil
	}
}

func (h *harness) heartbeat(group, member string, gen int32) int16 {
	r := kmsg.NewPtrHeartbeatRequest()
	r.Version = 4
	r.Group, r.MemberID, r.Generation = group, member, gen
	return h.c.Heartbeat(r).ErrorCode
}

func (h *harness) describe(group string) kmsg.DescribeGroupsResponseGroup {
	r := kmsg.NewPtrDescribeGroupsRequest()
	r.Version = 5
	r.Groups = []string{group}
	return h.c.DescribeGroups(r).Groups[0]
}

func (h *harness) state(group string) string { return h.describe(group).State }

// stableGroup forms a Stable group of n members and returns their ids
// (leader first) and the generation.
func (h *harness) stableGroup(group string, n int) ([]string, int32) {
	h.t.Helper()
	var ids []string
	var chans []<-chan joinOut
	id, ch := h.joinStart(group)
	// The first member completes alone unless others are pending: add the
	// others while the group is still forming via their own handshakes.
	ids, chans = append(ids, id), append(chans, ch)
	resp := h.await(ch)
	gen := resp.Generation
	for i := 1; i < n; i++ {
		id, ch := h.joinStart(group)
		// Everyone else must rejoin for the rebalance to complete.
		var rejoins []<-chan joinOut
		for _, old := range ids {
			rejoins = append(rejoins, h.joinAsync(newJoin(group, old)))
		}
		ids = append(ids, id)
		h.await(ch)
		for _, r := range rejoins {
			gen = h.await(r).Generation
		}
	}
	_ = chans
	leader := h.describeLeader(group, ids, gen)
	assign := map[string]string{}
	for _, id := range ids {
		assign[id] = "a-" + id
	}
	var syncs []<-chan syncOut
	for _, id := range ids {
		if id != leader {
			syncs = append(syncs, h.syncAsync(group, id, gen, nil))
		}
	}
	if r := h.awaitSync(h.syncAsync(group, leader, gen, assign)); r.ErrorCode != 0 {
		h.t.Fatalf("leader sync: %d", r.ErrorCode)
	}
	for _, s := range syncs {
		if r := h.awaitSync(s); r.ErrorCode != 0 {
			h.t.Fatalf("follower sync: %d", r.ErrorCode)
		}
	}
	ordered := []string{leader}
	for _, id := range ids {
		if id != leader {
			ordered = append(ordered, id)
		}
	}
	return ordered, gen
}

// describeLeader reads the leader from the coordinator's state directly.
func (h *harness) describeLeader(group string, _ []string, _ int32) string {
	g := h.c.lookup(group)
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.leader
}

func code(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	wantCode := int16(0)
	if want != nil {
		wantCode = want.Code
	}
	if got != wantCode {
		t.Fatalf("%s: got %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}
