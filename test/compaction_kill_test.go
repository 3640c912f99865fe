package test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// SIGKILL of the real binary while its cleaner rewrites a compacted topic
// under produce load (compacted generations): after each restart a consumer from
// offset 0 reads strictly increasing offsets and, for every key, a value
// at least as new as the last one acknowledged.
func TestKillDuringCompaction(t *testing.T) {
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	flags := []string{"--log-cleaner-backoff-ms", "5"}
	const topic, keys = "compacted", 40
	acked := map[string]int{} // key -> the newest acknowledged value's n
	n := 0
	for round := range 3 {
		p := startBinary(t, dir, flags...)
		ctx := testCtx(t)
		cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			resp, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": ptr("compact"),
				"segment.bytes": ptr("4096"), "min.cleanable.dirty.ratio": ptr("0.01")}, topic)
			if err != nil || resp.Err != nil {
				t.Fatalf("create: %v %v", err, resp.Err)
			}
		}
		// Produce until a cleaned generation exists, then a while more,
		// and kill the binary in the middle of it.
		gens := cleanedGenerations(t, dir)
		deadline := time.Now().Add(time.Duration(50+rng.IntN(300)) * time.Millisecond)
		for cleanedGenerations(t, dir) <= gens || time.Now().Before(deadline) {
			if ctx.Err() != nil {
				t.Fatal("no pass ran before the deadline")
			}
			var rs []*kgo.Record
			for range 20 {
				rs = append(rs, &kgo.Record{Key: fmt.Appendf(nil, "key-%d", rng.IntN(keys)), Value: fmt.Appendf(nil, "%d", n)})
				n++
			}
			if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				v, _ := strconv.Atoi(string(r.Value))
				acked[string(r.Key)] = max(acked[string(r.Key)], v)
			}
		}
		cl.Close()
		p.cmd.Process.Kill()
		<-p.done
		p = startBinary(t, dir, flags...)
		verifyCompacted(t, p.addr, topic, acked)
		p.stop(t)
		t.Logf("round %d: killed after %d records, verified", round, n)
	}
}

// cleanedGenerations is the highest ledger generation in the data
// directory, read without a lock while the binary runs (0 while unreadable).
func cleanedGenerations(t *testing.T, dir string) uint64 {
	ro, err := storage.OpenReadOnly(dir)
	if err != nil {
		return 0
	}
	defer ro.Close()
	logs, err := ro.Logs()
	if err != nil {
		return 0
	}
	var gen uint64
	for _, l := range logs {
		for _, led := range l.Ledgers {
			gen = max(gen, led.Gen)
		}
	}
	return gen
}

// verifyCompacted consumes the topic from offset 0 to its end.
func verifyCompacted(t *testing.T, addr, topic string, acked map[string]int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testCtx(t)
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	state := map[string]int{}
	last := int64(-1)
	for last < end.Offset-1 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed up to %d of %d", last, end.Offset)
		}
		if err := fs.Err(); err != nil && err != context.Canceled {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset <= last {
				t.Fatalf("offset %d after %d", r.Offset, last)
			}
			last = r.Offset
			v, err := strconv.Atoi(string(r.Value))
			if err != nil || !strings.HasPrefix(string(r.Key), "key-") {
				t.Fatalf("record %q=%q", r.Key, r.Value)
			}
			state[string(r.Key)] = v
		})
	}
	for k, v := range acked {
		if state[k] < v {
			t.Fatalf("key %s: read %d, acknowledged %d", k, state[k], v)
		}
	}
}
