package test

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka/share"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceInTxn writes values to partition 0 of topic inside a
// transaction of cl (begun here) and flushes them; end ends it (commit
// or abort) unless left open.
func produceInTxn(t *testing.T, cl *kgo.Client, topic string, values []int, end *kgo.TransactionEndTry) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		cl.Produce(testCtx(t), &kgo.Record{Topic: topic, Partition: 0, Value: []byte(strconv.Itoa(v))}, nil)
	}
	if err := cl.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if end != nil {
		if err := cl.EndTransaction(testCtx(t), *end); err != nil {
			t.Fatal(err)
		}
	}
}

func offsetRange(from, to int64) []int64 {
	var out []int64
	for o := from; o <= to; o++ {
		out = append(out, o)
	}
	return out
}

// share.isolation.level=read_committed (a GROUP config): a share group
// so configured acquires nothing at or past the last stable offset (an
// open transaction holds back even the records after it) and never an
// aborted transaction's records or a transaction marker; once the open
// transaction commits, its records and those after it are acquired. A
// read_uncommitted group of the same topic acquires the aborted and the
// open transaction's records too. A franz-go share consumer of a
// read_committed group gets exactly the committed values.
func TestShareGroupReadCommitted(t *testing.T) {
	g := newGateway(t)
	const topic = "share-rc"
	g.createTopic(topic, 1)
	for _, group := range []string{"rc", "rc-franz"} {
		setGroupConfigs(t, g.addr, group, share.ConfigAutoOffsetReset, "earliest", share.ConfigIsolationLevel, "read_committed")
	}
	setGroupConfigs(t, g.addr, "ru", share.ConfigAutoOffsetReset, "earliest")
	txn := shareClient(t, g.addr, kgo.TransactionalID("share-rc-txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	commit, abort := kgo.TryCommit, kgo.TryAbort
	values := func(from, n int) []int {
		var out []int
		for i := range n {
			out = append(out, from+i)
		}
		return out
	}
	produceInTxn(t, txn, topic, values(0, 10), &commit) // offsets 0-9, marker 10
	produceInTxn(t, txn, topic, values(100, 5), &abort) // 11-15, marker 16
	produceInTxn(t, txn, topic, values(200, 5), nil)    // 17-21, open
	plain := shareClient(t, g.addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for _, v := range values(10, 5) { // 22-26, after the open transaction
		if err := plain.ProduceSync(testCtx(t), &kgo.Record{Topic: topic, Partition: 0, Value: []byte(strconv.Itoa(v))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	rc := joinRaw(t, g.addr, "rc", topic, "rc-member-00000000001")
	got := slices.Sorted(maps.Keys(rc.fetch(testDeadline)))
	if want := offsetRange(0, 9); !slices.Equal(got, want) {
		t.Fatalf("read_committed acquired %v, want %v (the committed transaction only)", got, want)
	}
	if more := rc.fetch(200 * time.Millisecond); len(more) != 0 {
		t.Fatalf("read_committed acquired %v past the last stable offset", more)
	}
	ru := joinRaw(t, g.addr, "ru", topic, "ru-member-00000000001")
	got = slices.Sorted(maps.Keys(ru.fetch(testDeadline)))
	if want := append(append(offsetRange(0, 9), offsetRange(11, 15)...), offsetRange(17, 26)...); !slices.Equal(got, want) {
		t.Fatalf("read_uncommitted acquired %v, want %v", got, want)
	}

	if err := txn.EndTransaction(testCtx(t), commit); err != nil { // marker 27
		t.Fatal(err)
	}
	got = slices.Sorted(maps.Keys(rc.fetch(testDeadline)))
	if want := offsetRange(17, 26); !slices.Equal(got, want) {
		t.Fatalf("after the commit read_committed acquired %v, want %v", got, want)
	}

	l := newShareLedger()
	ctx, cancel := context.WithCancel(context.Background())
	wg := runShareMember(ctx, t, g.addr, "rc-franz", topic, "franz", l, func(int, *kgo.Record) kgo.AckStatus { return kgo.AckAccept })
	committed := append(append(values(0, 10), values(200, 5)...), values(10, 5)...)
	waitFor(t, "every committed record accepted", func() bool { return l.acceptedAll(len(committed)) })
	cancel()
	wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range committed {
		if l.delivered[v] != 1 {
			t.Errorf("committed value %d delivered %d times", v, l.delivered[v])
		}
	}
	for _, v := range values(100, 5) {
		if l.delivered[v] != 0 {
			t.Errorf("aborted value %d delivered", v)
		}
	}
}
