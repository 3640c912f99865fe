package test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A Kafka Connect / Schema Registry start (the key requirement, the latest-record rewrite, the tombstone horizon): create
// the compacted topic, confirm cleanup.policy=compact through
// DescribeConfigs, write keyed records and tombstones, clean, and rebuild
// the state from offset 0 with a real consumer.
func TestCompactedTopicStateRebuild(t *testing.T) {
	// No background cleaner: the test runs the pass itself.
	g := newGatewayWith(t, gatewayOptions{cleaner: resolver.CleanerConfig{Threads: -1}})
	adm := g.admin()
	ctx := testCtx(t)
	const topic = "_schemas"
	resp, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{
		"cleanup.policy": ptr("compact"), "segment.bytes": ptr("2048"), "min.cleanable.dirty.ratio": ptr("0.01"),
	}, topic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range rc.Configs {
		if c.Key == "cleanup.policy" {
			found = true
			if c.MaybeValue() != "compact" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
				t.Fatalf("cleanup.policy described as %q from %v", c.MaybeValue(), c.Source)
			}
		}
	}
	if !found {
		t.Fatal("cleanup.policy not described")
	}

	prod := g.client(kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
	// The key requirement: a keyless record is INVALID_RECORD.
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("no key")}).FirstErr(); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("keyless record: %v, want INVALID_RECORD", err)
	}
	want := map[string]string{}
	produced := 0
	for round := range 30 {
		var recs []*kgo.Record
		for k := range 10 {
			key := fmt.Sprintf("subject-%d", k)
			if round%7 == 6 && k%3 == 0 {
				recs = append(recs, &kgo.Record{Key: []byte(key)}) // tombstone
				delete(want, key)
				continue
			}
			v := fmt.Sprintf("schema-%d-%d", k, round)
			recs = append(recs, &kgo.Record{Key: []byte(key), Value: []byte(v)})
			want[key] = v
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		produced += len(recs)
	}
	if err := g.res.Passes().RunCleaner(time.Now()); err != nil {
		t.Fatal(err)
	}
	if s := g.res.Passes().CleanerStats(); s.Passes == 0 {
		t.Fatalf("no pass ran: %+v", s)
	}

	// A consumer rebuilds the state from offset 0.
	cons := g.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	state := map[string]string{}
	read, last := 0, int64(-1)
	_, hwm, _, err := g.res.Bounds(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	for last < int64(hwm)-1 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset <= last {
				t.Fatalf("offset %d after %d", r.Offset, last)
			}
			last = r.Offset
			read++
			if r.Value == nil {
				delete(state, string(r.Key))
			} else {
				state[string(r.Key)] = string(r.Value)
			}
		})
	}
	if fmt.Sprint(state) != fmt.Sprint(want) {
		t.Fatalf("rebuilt state\n%v\nwant\n%v", state, want)
	}
	if read >= produced {
		t.Fatalf("read %d of %d produced records: nothing was compacted", read, produced)
	}
	t.Logf("rebuilt %d keys from %d records (%d produced)", len(state), read, produced)
}
