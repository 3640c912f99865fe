package main

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// max.incremental.fetch.session.cache.slots reaches the server: by default
// a fetch that asks for a session (epoch 0) gets one; with 0 slots, Kafka's
// way to disable sessions, it gets session id 0 and fetches stay full.
func TestFetchSessionSlotsConfig(t *testing.T) {
	for _, tc := range []struct {
		slots       int
		wantSession bool
	}{{1000, true}, {0, false}} {
		g := startTestWith(t, t.TempDir(), func(c *Config) { c.FetchSessionSlots = tc.slots })
		cl := newClient(t, g)
		produce(t, cl, "sessions", "a")
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.SessionEpoch, req.MaxWaitMillis = 12, 0, 0
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "sessions"
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		raw, err := cl.Request(testCtx(t), req)
		if err != nil {
			t.Fatal(err)
		}
		resp := raw.(*kmsg.FetchResponse)
		if got := resp.SessionID != 0; got != tc.wantSession || resp.ErrorCode != 0 {
			t.Fatalf("slots %d: session id %d, error %d; want a session: %v", tc.slots, resp.SessionID, resp.ErrorCode, tc.wantSession)
		}
	}
}
