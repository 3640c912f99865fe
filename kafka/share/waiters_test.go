package share

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets"
)

// woken reports, without waiting, which of ws were signalled.
func woken(ws ...*waiter) []bool {
	out := make([]bool, len(ws))
	for i, w := range ws {
		select {
		case <-w.ch:
			out[i] = true
		default:
		}
	}
	return out
}

// fullWindow is a partition whose window of 8 is full: a holds 0..3, b
// 4..7; three fetches of 4 records wait in its queue, in order.
func fullWindow(t *testing.T, now time.Time) (*partition, []*waiter) {
	t.Helper()
	p := newPartition(0)
	sp := spans(t, batchHeader(0, 3, false), batchHeader(4, 3, false))
	p.acquireLocked(sp[:1], args("a", 4, 8, now))
	p.acquireLocked(sp[1:], args("b", 4, 8, now))
	var ws []*waiter
	for range 3 {
		w := &waiter{ch: make(chan struct{}, 1), want: 4}
		p.queueLocked(w)
		ws = append(ws, w)
	}
	return p, ws
}

// Wake one fetch per freed range: accepting 4 records at the window's
// start makes room for 4, which the first waiting fetch (wanting 4)
// takes; waking the other two only made each read the log and find the
// window full again. A release of 4 more then wakes the next one.
func TestAckWakesOneFetchPerFreedRange(t *testing.T) {
	now := time.Unix(1000, 0)
	p, ws := fullWindow(t, now)
	if n := p.ackLocked([]ackBatch{{0, 3, []int8{ackAccept}}}, 3, now); n != 1 {
		t.Fatalf("the acknowledgement woke %d fetches, want 1", n)
	}
	if got := woken(ws...); !got[0] || got[1] || got[2] {
		t.Fatalf("woken %v, want only the first waiting fetch", got)
	}
	if n := p.ackLocked([]ackBatch{{4, 7, []int8{ackRelease}}}, 3, now); n != 1 {
		t.Fatalf("the release woke %d fetches, want 1", n)
	}
	if got := woken(ws[1:]...); !got[0] || got[1] {
		t.Fatalf("woken %v, want the second waiting fetch only", got)
	}
	// An expiry, or a member's leaving, may free records anywhere: every
	// waiting fetch looks.
	p.queueLocked(ws[0])
	p.wakeLocked()
	if got := woken(ws[0], ws[2]); !got[0] || !got[1] {
		t.Fatalf("woken %v by a release of everything, want all", got)
	}
}

// A woken fetch that ends without using its wake (it filled its answer
// from another partition, or its connection closed) passes it on: the
// records it was woken for are still there, and the fetch behind it would
// otherwise sleep on them until its MaxWaitMillis. One that used its wake
// and left records acquirable wakes the next one for them.
func TestUnusedWakePassesOn(t *testing.T) {
	now := time.Unix(1000, 0)
	p, ws := fullWindow(t, now)
	tp := offsets.TopicPartition{Topic: "t"}
	first := newFetchWaits()
	first.by[tp] = ws[0]
	ws[0].p = p
	sw := newStateWriter(func([]offsets.ShareWrite) error { return nil })
	sw.owe(p.ackLocked([]ackBatch{{0, 3, []int8{ackAccept}}}, 3, now))
	if got := woken(ws...); !got[0] || got[1] || got[2] {
		t.Fatalf("woken %v, want the first waiting fetch", got)
	}
	leaveWaits(first, sw)
	if got := woken(ws[1:]...); !got[0] || got[1] {
		t.Fatalf("after the first fetch left with its wake: woken %v, want the second only", got)
	}
	if sw.owed != 1 {
		t.Fatalf("owed %d after the wake passed on, want 1 (the second fetch's)", sw.owed)
	}
	// The second takes 2 of the 4 records of room: the third is woken
	// for the 2 it left.
	p.mu.Lock()
	used, owing := p.useWakeLocked(ws[1])
	p.acquireLocked(spans(t, batchHeader(8, 1, false)), args("c", 2, 8, now))
	n := p.passOnLocked(8, 1<<40)
	p.mu.Unlock()
	if !used || !owing || n != 1 {
		t.Fatalf("used %v owing %v, passed on to %d; want true, true, 1", used, owing, n)
	}
	if got := woken(ws[2]); !got[0] {
		t.Fatal("records left acquirable after an acquisition woke no waiting fetch")
	}
}

// Records an acknowledgement freed are promised to the fetch it woke: a
// fetch that was not woken (a new one) waits in the queue instead of
// reading the log for them, and the woken one, back, finds them
// unpromised; what it does not take is the next waiter's.
func TestFreedRecordsPromisedToWokenFetch(t *testing.T) {
	now := time.Unix(1000, 0)
	p, ws := fullWindow(t, now)
	p.ackLocked([]ackBatch{{0, 3, []int8{ackAccept}}}, 3, now)
	if !p.promisedAwayLocked(8, 1<<40) {
		t.Fatal("the 4 slots the acknowledgement freed for the woken fetch are open to any fetch")
	}
	p.useWakeLocked(ws[0])
	if p.promisedAwayLocked(8, 1<<40) {
		t.Fatal("the woken fetch, back, finds its records promised away")
	}
}

// heldReadLog is fakeLog whose first read is reported on reading and
// waits for hold.
type heldReadLog struct {
	fakeLog
	reads   *atomic.Int32
	reading chan struct{}
	hold    chan struct{}
}

func (l heldReadLog) Read(topic string, p int32, off int64, max int, into Wire) ([][]byte, error) {
	if l.reads.Add(1) == 1 {
		l.reading <- struct{}{}
		<-l.hold
	}
	return l.fakeLog.Read(topic, p, off, max, into)
}

// A fetch reading the log claims the records it reads for: another fetch
// meanwhile waits instead of reading the same records and racing it for
// them (all but one of such readers took nothing).
func TestReadingFetchClaimsWhatItReads(t *testing.T) {
	log := heldReadLog{reads: new(atomic.Int32), reading: make(chan struct{}), hold: make(chan struct{})}
	c := heldCoordinator(t, &gate{}, log)
	for _, m := range []string{"a", "b"} {
		if resp := join(c, m); resp.ErrorCode != 0 {
			t.Fatalf("join %s: error %d", m, resp.ErrorCode)
		}
	}
	got := make(chan map[int64]int16, 1)
	go func() {
		_, a := leaderFetch(t, c, "a", 0)
		got <- a
	}()
	select {
	case <-log.reading:
	case <-within(t, "a's read"):
		t.Fatal("a's fetch never read")
	}
	if _, b := leaderFetch(t, c, "b", 0); len(b) != 0 {
		t.Fatalf("b acquired %v while a was reading the records it claimed", b)
	}
	close(log.hold)
	select {
	case a := <-got:
		if len(a) != 10 {
			t.Fatalf("a acquired %v, want offsets 0..9", a)
		}
	case <-within(t, "a's answer"):
		t.Fatal("a's fetch never answered")
	}
}
