package kafka

import (
	"testing"
	"time"

	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/resolvertest"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// openResolver opens real storage and a resolver on a temp dir.
func openResolver(t *testing.T) *resolver.Resolver {
	t.Helper()
	return resolvertest.Open(t, resolver.Config{NumPartitions: 1, AutoCreate: true})
}

// waitFor waits until cond holds, failing after testDeadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not before the deadline", what)
		}
		time.Sleep(time.Millisecond) // polling a condition, bounded by the deadline
	}
}

// A long-poll fetch ends when its client goes away: the handler waits on
// the connection too, not only on appends and the timer.
func TestLongPollEndsWhenClientCloses(t *testing.T) {
	res := openResolver(t)
	if _, err := res.CreateTopic("lp", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, Config{Resolver: res, ShutdownTimeout: time.Hour})
	c := dialRaw(t, s.Addr())
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	req.MaxWaitMillis, req.MinBytes = int32(time.Hour/time.Millisecond), 1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "lp"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	c.send(1, req)
	waitFor(t, "fetch in flight", func() bool { return s.handling.Load() == 1 })
	c.nc.Close()
	waitFor(t, "fetch ended", func() bool { return s.handling.Load() == 0 })
}
