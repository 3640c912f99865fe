package test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Compaction of a transactional topic (compaction of transactions) through real
// clients: a franz-go transactional producer commits and aborts rounds
// of keyed records interleaved with plain ones; after the cleaner's
// passes a read_committed and a read_uncommitted consumer both rebuild
// exactly the latest committed value per key, and neither sees a record
// of an aborted transaction (they are removed, not only filtered).
func TestCompactedTopicTransactions(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{cleaner: resolver.CleanerConfig{Threads: -1}})
	ctx := testCtx(t)
	const topic = "changelog"
	resp, err := g.admin().CreateTopic(ctx, 1, 1, map[string]*string{
		"cleanup.policy": ptr("compact"), "segment.bytes": ptr("2048"),
		"min.cleanable.dirty.ratio": ptr("0.01"), "delete.retention.ms": ptr("0"),
	}, topic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	tx := g.txnProducer("changelog-writer", kgo.DefaultProduceTopic(topic))
	plain := g.client(kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
	// A record no other supersedes: every fetch from the start starts
	// before the transactions' markers.
	if err := plain.ProduceSync(ctx, &kgo.Record{Key: []byte("anchor"), Value: []byte("first")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"anchor": "first"}
	for round := range 12 {
		commit := round%3 != 1
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var pending [][2]string
		for k := range 5 {
			// An aborted transaction writes keys of its own too, which
			// no later record supersedes.
			key, v := fmt.Sprintf("a%d-%d", round, k), fmt.Sprintf("aborted-%d-%d", round, k)
			if commit {
				v = fmt.Sprintf("committed-%d-%d", round, k)
			}
			if commit || k%2 == 0 {
				key = fmt.Sprintf("k%d", k)
			}
			if err := tx.ProduceSync(ctx, &kgo.Record{Key: []byte(key), Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			pending = append(pending, [2]string{key, v})
			// A plain record between the transaction's.
			pk, pv := fmt.Sprintf("p%d", (round+k)%4), fmt.Sprintf("plain-%d-%d", round, k)
			if err := plain.ProduceSync(ctx, &kgo.Record{Key: []byte(pk), Value: []byte(pv)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			want[pk] = pv
		}
		if err := tx.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
		if commit {
			for _, kv := range pending {
				want[kv[0]] = kv[1]
			}
		}
	}
	// Padding seals every ledger holding a transaction (the open one is
	// never cleaned) and makes the log dirty again for the next pass.
	pad := func() {
		for i := range 60 {
			pk := fmt.Sprintf("pad%d", i%3)
			if err := plain.ProduceSync(ctx, &kgo.Record{Key: []byte(pk), Value: []byte(strings.Repeat("x", 64))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			want[pk] = strings.Repeat("x", 64)
		}
	}
	// The first pass removes the aborted batches, the second gives their
	// markers a delete horizon, the third removes them (aborted batches dropped, markers kept while needed and marker removal).
	for range 3 {
		pad()
		if err := g.res.Passes().RunCleaner(time.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if s := g.res.Passes().CleanerStats(); s.Passes == 0 {
		t.Fatalf("no pass ran: %+v", s)
	}
	for _, committed := range []bool{true, false} {
		state := rebuild(t, g, topic, committed)
		if fmt.Sprint(state) != fmt.Sprint(want) {
			t.Fatalf("read_committed=%v rebuilt\n%v\nwant\n%v", committed, state, want)
		}
	}
}

// rebuild reads topic from the start to its end under the isolation
// level and returns the latest value per key; it fails on a record of an
// aborted transaction.
func rebuild(t *testing.T, g *gateway, topic string, committed bool) map[string]string {
	t.Helper()
	ctx := testCtx(t)
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	_, hwm, lso, err := g.res.Bounds(topic, 0)
	if err != nil || lso != hwm {
		t.Fatalf("bounds: hwm %d lso %d %v", hwm, lso, err)
	}
	cl := g.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(iso))
	state := map[string]string{}
	for last := int64(-1); last < int64(hwm)-1; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consume: at %d of %d", last, hwm)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) {
			if strings.HasPrefix(string(r.Value), "aborted-") {
				t.Fatalf("read_committed=%v read %s at %d of an aborted transaction", committed, r.Value, r.Offset)
			}
			last = r.Offset
			if r.Value == nil {
				delete(state, string(r.Key))
			} else {
				state[string(r.Key)] = string(r.Value)
			}
		})
	}
	return state
}
