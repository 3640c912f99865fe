package main

import (
	"testing"

	"github.com/kgateway/kgateway/storage"
	"github.com/twmb/franz-go/pkg/kgo"
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

// tail.cache.bytes reaches the store: by default produced entries are
// cached; 0 disables the cache and fetches are served from the files.
func TestTailCacheConfig(t *testing.T) {
	for _, tc := range []struct {
		bytes      int64
		wantCached bool
	}{{storage.DefaultTailCacheBytes, true}, {0, false}} {
		g := startTestWith(t, t.TempDir(), func(c *Config) { c.TailCacheBytes = tc.bytes })
		cl := newClient(t, g)
		produce(t, cl, "tail", "a")
		if got := g.Store().TailCacheBytes() > 0; got != tc.wantCached {
			t.Fatalf("tail.cache.bytes %d: %d bytes cached; want cached: %v", tc.bytes, g.Store().TailCacheBytes(), tc.wantCached)
		}
		cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{"tail": {0: kgo.NewOffset().AtStart()}})
		fs := cl.PollFetches(testCtx(t))
		if err := fs.Err(); err != nil || fs.NumRecords() != 1 || string(fs.Records()[0].Value) != "a" {
			t.Fatalf("tail.cache.bytes %d: fetched %d records, err %v", tc.bytes, fs.NumRecords(), err)
		}
	}
}
