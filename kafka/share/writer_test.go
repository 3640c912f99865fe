package share

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// gate is a write hook: each write is reported on calls and waits for a
// receive on release (when set); it fails with fail when set.
type gate struct {
	mu      sync.Mutex
	calls   chan []offsets.ShareWrite
	release chan struct{}
	fail    error
	next    func([]offsets.ShareWrite) error
}

func (g *gate) write(ws []offsets.ShareWrite) error {
	g.mu.Lock()
	calls, release := g.calls, g.release
	g.mu.Unlock()
	if calls != nil {
		calls <- ws
	}
	if release != nil {
		<-release
	}
	g.mu.Lock()
	fail := g.fail
	g.mu.Unlock()
	if fail != nil {
		return fail
	}
	if g.next != nil {
		return g.next(ws)
	}
	return nil
}

func within(t *testing.T, what string) <-chan time.Time {
	t.Helper()
	return time.After(30 * time.Second) // a deadline for a hang, never a measurement
}

func part(group string, p int32, start int64) offsets.ShareWrite {
	return offsets.ShareWrite{Group: group, Part: offsets.SharePartition{TopicPartition: offsets.TopicPartition{Topic: "t", Partition: p}, StartOffset: start}}
}

// The group commit of share states: what is submitted while a write is
// under way waits for the next write, which carries all of it at once,
// the latest state of a partition only; no submitter's flight is done
// before the write holding its state returned, and a failed write fails
// every submitter of it.
func TestStateWriterGroupsAndWaits(t *testing.T) {
	g := &gate{calls: make(chan []offsets.ShareWrite, 4), release: make(chan struct{})}
	w := newStateWriter(g.write)
	first := w.submit(part("g", 0, 1))
	var ws []offsets.ShareWrite
	select {
	case ws = <-g.calls:
	case <-within(t, "first write"):
		t.Fatal("no write started")
	}
	if len(ws) != 1 {
		t.Fatalf("first write %v", ws)
	}
	second := w.submit(part("g", 0, 2))
	if w.submit(part("h", 3, 7)) != second || w.submit(part("g", 0, 5)) != second {
		t.Fatal("states submitted during a write are not in one next write")
	}
	if w.flush() != second {
		t.Fatal("flush does not wait for the pending write")
	}
	for _, f := range []*flight{first, second} {
		select {
		case <-f.done:
			t.Fatal("a flight is done while its write is blocked")
		default:
		}
	}
	g.mu.Lock()
	g.fail = errors.New("disk")
	g.mu.Unlock()
	g.release <- struct{}{}
	if err := first.wait(); err == nil {
		t.Fatal("a failed write answered its submitter without an error")
	}
	select {
	case ws = <-g.calls:
	case <-within(t, "second write"):
		t.Fatal("the pending states were never written")
	}
	if len(ws) != 2 || ws[0].Part.StartOffset != 5 || ws[1].Group != "h" {
		t.Fatalf("second write %v, want g/0 at its latest start 5 and h/3", ws)
	}
	select {
	case <-second.done:
		t.Fatal("the second flight is done while its write is blocked")
	default:
	}
	g.mu.Lock()
	g.fail = nil
	g.mu.Unlock()
	g.release <- struct{}{}
	if err := second.wait(); err != nil {
		t.Fatal(err)
	}
}

// newStoreCoordinator is a single node's coordinator over a real offset
// store and fakeLog, whose state writes go through hook, with member "m"
// of group "g" subscribed to "t" (partition 0, offsets 0..9).
func newStoreCoordinator(t *testing.T, hook *gate) *Coordinator {
	t.Helper()
	store, err := offsets.Open(t.TempDir(), offsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	c, err := NewCoordinator(store, fakeLog{}, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	hook.next = store.PutShareStates
	c.writer.write = hook.write
	c.mu.configs["g"] = map[string]string{ConfigAutoOffsetReset: "earliest"}
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.SubscribedTopicNames = "g", "m", []string{"t"}
	if resp := c.Heartbeat(Client{}, req); resp.ErrorCode != 0 {
		t.Fatalf("heartbeat: error %d", resp.ErrorCode)
	}
	return c
}

// An acknowledgement is answered only after its state is durable (the
// durable share-partition state): one whose write fails is answered with
// an error, and one in flight is not answered while its write is held.
// (The failed one's change stays in memory, as after a lone failed
// write, and the next write carries it.)
func TestShareAckAnsweredAfterItsWrite(t *testing.T) {
	hook := &gate{}
	c := newStoreCoordinator(t, hook)
	if _, got := leaderFetch(t, c, "m", 0); len(got) != 10 {
		t.Fatalf("acquired %v, want 0..9", got)
	}

	hook.mu.Lock()
	hook.fail = errors.New("disk")
	hook.mu.Unlock()
	if code := leaderAccept(t, c, "m", 1, 0, 4); code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("acknowledgement whose write failed answered %d, want COORDINATOR_NOT_AVAILABLE", code)
	}

	hook.mu.Lock()
	hook.fail, hook.calls, hook.release = nil, make(chan []offsets.ShareWrite, 1), make(chan struct{})
	hook.mu.Unlock()
	answered := make(chan int16, 1)
	go func() { answered <- leaderAccept(t, c, "m", 2, 5, 9) }()
	select {
	case <-hook.calls:
	case <-within(t, "acknowledgement write"):
		t.Fatal("the acknowledgement was never written")
	}
	select {
	case code := <-answered:
		t.Fatalf("acknowledgement answered %d before its write returned", code)
	default:
	}
	close(hook.release)
	if code := <-answered; code != 0 {
		t.Fatalf("acknowledgement answered %d", code)
	}
	parts, err := c.store.ShareState("g")
	if err != nil || len(parts) != 1 || parts[0].StartOffset != 10 {
		t.Fatalf("durable state %v (%v), want start offset 10", parts, err)
	}
}

// A state change that woke fetches owes the writer their acquisitions:
// its write waits (at most linger) until they were submitted, and then
// carries them too, one sync for an acknowledgement and the acquisition
// it made room for where there were two. Nothing owed, nothing waits; a
// woken fetch that never comes back holds the write up to linger only.
func TestStateWriterLingersForWokenFetches(t *testing.T) {
	g := &gate{calls: make(chan []offsets.ShareWrite)}
	w := newStateWriter(g.write)
	w.linger = time.Hour // only the arrival ends it here
	w.owe(1)
	acked := w.submit(part("g", 0, 4))
	waitUntil(t, "the writer lingers or writes", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.lingering || w.current != nil
	})
	w.mu.Lock()
	started := w.current != nil
	w.mu.Unlock()
	if started {
		t.Fatal("the write started while the acquisition of the fetch its state woke was owed")
	}
	acquired := w.submit(part("g", 1, 0))
	w.arrive()
	select {
	case ws := <-g.calls:
		if len(ws) != 2 || acked != acquired {
			t.Fatalf("write %v, want the acknowledgement's and the woken acquisition's states in one", ws)
		}
	case <-within(t, "the write"):
		t.Fatal("the write never started after the woken fetch came back")
	}
	if err := acked.wait(); err != nil {
		t.Fatal(err)
	}
	alone := w.submit(part("g", 2, 0)) // nothing owed: an hour's linger never starts
	select {
	case <-g.calls:
	case <-within(t, "a write with nothing owed"):
		t.Fatal("a write with nothing owed waited")
	}
	if err := alone.wait(); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	w.linger = time.Millisecond
	w.mu.Unlock()
	w.owe(1) // never paid back
	gone := w.submit(part("g", 3, 0))
	select {
	case <-g.calls:
	case <-within(t, "a write whose woken fetch never came back"):
		t.Fatal("a write waited past its linger for a fetch that never came back")
	}
	if err := gone.wait(); err != nil {
		t.Fatal(err)
	}
}
