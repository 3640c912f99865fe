package group

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

// The leader's JoinGroup is answered first when a generation completes:
// the generation waits for its SyncGroup, the followers' only wait for
// that. The members' answers are taken from unbuffered channels by one
// receiver, so the order received is the order the coordinator answered
// in; the leader is made the member with the largest id, the last in id
// order, so that answering in id order fails.
func TestLeaderJoinAnsweredFirst(t *testing.T) {
	h := newHarness(t)
	ids, _ := h.stableGroup("g", 4)
	g := h.c.lookup("g")
	leader := slices.Max(ids)

	g.mu.Lock()
	g.mu.leader = leader
	cases := make([]reflect.SelectCase, 0, len(ids))
	byCase := make([]string, 0, len(ids))
	for _, id := range ids {
		ch := make(chan joinResult) // unbuffered: the send waits for the receiver
		g.mu.members[id].joinWaiters = []chan joinResult{ch}
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
		byCase = append(byCase, id)
	}
	order := make(chan []string, 1)
	go func() {
		var got []string
		for range ids {
			i, _, _ := reflect.Select(cases)
			got = append(got, byCase[i])
			cases[i].Chan = reflect.Value{} // answered once
		}
		order <- got
	}()
	g.prepareRebalanceLocked()
	g.tryCompleteJoinLocked() // every member is waiting in a join: completes
	g.mu.Unlock()

	var got []string
	select {
	case got = <-order:
	case <-time.After(waitFor):
		t.Fatal("not every member's join was answered")
	}
	if got[0] != leader {
		t.Fatalf("join answers in the order %v; want the leader %s first", got, leader)
	}
}
