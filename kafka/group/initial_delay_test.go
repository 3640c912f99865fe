package group

import (
	"testing"
	"time"
)

// Rebalance completion, group.initial.rebalance.delay.ms: the first rebalance of an Empty
// group waits the delay, again while members keep joining, and never
// past the rebalance timeout, as Kafka's InitialDelayedJoin does.
func TestInitialRebalanceDelay(t *testing.T) {
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{InitialRebalanceDelay: 3 * time.Second}}
	h.open()

	_, cha := h.joinStart("g")
	h.clock.Advance(2 * time.Second)
	h.blocked(cha, "the first member inside the delay")
	_, chb := h.joinStart("g") // joins during the delay: one more wait
	h.clock.Advance(time.Second)
	h.blocked(cha, "after the first delay, a member having joined in it")
	h.clock.Advance(2 * time.Second)
	h.blocked(cha, "inside the second delay")
	h.clock.Advance(time.Second) // the second delay passes with no new member
	ra, rb := h.await(cha), h.await(chb)
	if ra.ErrorCode != 0 || rb.ErrorCode != 0 || ra.Generation != 1 || rb.Generation != 1 {
		t.Fatalf("joins: %+v %+v", ra, rb)
	}
	if len(ra.Members)+len(rb.Members) != 2 {
		t.Fatalf("the leader got %d+%d members, want both", len(ra.Members), len(rb.Members))
	}

	// The waits stop at the rebalance timeout (30 s here): ten more 3 s
	// waits would be needed for members joining every 2 s.
	_, first := h.joinStart("g2")
	var chans = []<-chan joinOut{first}
	start := h.clock.Now()
	for h.clock.Now().Sub(start) < testRebalance-2*time.Second {
		h.clock.Advance(2 * time.Second)
		if len(first) > 0 {
			t.Fatalf("completed after %v, before the rebalance timeout", h.clock.Now().Sub(start))
		}
		_, ch := h.joinStart("g2")
		chans = append(chans, ch)
	}
	h.clock.Advance(3 * time.Second)
	for _, ch := range chans {
		if r := h.await(ch); r.ErrorCode != 0 || r.Generation != 1 {
			t.Fatalf("g2 join: code %d generation %d", r.ErrorCode, r.Generation)
		}
	}

	// Without the delay (0, a zero Config's) the first member is answered at once.
	h.c.cfg.InitialRebalanceDelay = 0
	if r := h.join("g3"); r.ErrorCode != 0 || r.Generation != 1 {
		t.Fatalf("no delay: code %d generation %d", r.ErrorCode, r.Generation)
	}
}
