package test

import (
	"fmt"
	"testing"

	"github.com/kgateway/kgateway/kafka/share"
)

// TestShareGroupKillWithLocksHeld runs the real binary and SIGKILLs it
// while a member holds locks on every record (locked for an hour): after
// each restart the next member acquires all of them at once, each with
// its delivery count one higher (locks released at restart, acquisitions persisted as available: acquisitions are
// durable before records are sent, and never persisted as held). After
// group.share.delivery.count.limit kills the records are archived and the
// start offset passes them (the delivery count limit).
func TestShareGroupKillWithLocksHeld(t *testing.T) {
	dir := t.TempDir()
	const topic, group, n, limit = "sk", "sk-group", 20, 3
	flags := []string{"--group-share-record-lock-duration-ms", "3600000", "--group-share-delivery-count-limit", fmt.Sprint(limit)}
	p := startBinary(t, dir, flags...)
	(&gateway{t: t, addr: p.addr}).createTopic(topic, 1)
	produceNumbered(t, p.addr, topic, n)
	setGroupConfigs(t, p.addr, group, share.ConfigAutoOffsetReset, "earliest")

	for round := 1; round <= limit; round++ {
		m := joinRaw(t, p.addr, group, topic, fmt.Sprintf("member-of-round-%06d", round))
		got := m.fetch(testDeadline / 3)
		if len(got) != n {
			t.Fatalf("round %d: acquired %d records, want %d", round, len(got), n)
		}
		for off, c := range got {
			if int(c) != round {
				t.Fatalf("round %d: offset %d delivered with count %d, want %d", round, off, c, round)
			}
		}
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-p.done
		p = startBinary(t, dir, flags...)
	}
	m := joinRaw(t, p.addr, group, topic, "member-after-the-limit")
	if got := m.fetch(0); len(got) != 0 {
		t.Errorf("records delivered past the delivery count limit: %v", got)
	}
	if got := shareOffset(t, p.addr, group, topic); got != n {
		t.Errorf("start offset %d after every record reached the limit, want %d", got, n)
	}
	p.stop(t)
}
