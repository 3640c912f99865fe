package librdkafka

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// txnProducer is a librdkafka transactional producer, initialized.
func txnProducer(t *testing.T, addr, id string) *kafka.Producer {
	t.Helper()
	p := newProducer(t, addr, kafka.ConfigMap{"transactional.id": id, "transaction.timeout.ms": 60000})
	if err := p.InitTransactions(testCtx(t)); err != nil {
		t.Fatalf("init transactions %s: %v", id, err)
	}
	return p
}

// readN reads n records with c (subscribed in its group) and returns
// their values and the offset to commit after them on each partition.
func readN(t *testing.T, c *kafka.Consumer, n int) ([]string, []kafka.TopicPartition) {
	t.Helper()
	var vs []string
	next := map[int32]kafka.TopicPartition{}
	deadline := time.Now().Add(testDeadline)
	for len(vs) < n {
		if time.Now().After(deadline) {
			t.Fatalf("read %d of %d input records", len(vs), n)
		}
		m, err := c.ReadMessage(time.Second)
		if err != nil {
			if err.(kafka.Error).IsTimeout() {
				continue
			}
			t.Fatalf("read input: %v", err)
		}
		vs = append(vs, string(m.Value))
		tp := m.TopicPartition
		tp.Offset++
		next[tp.Partition] = tp
	}
	var offs []kafka.TopicPartition
	for _, tp := range next {
		offs = append(offs, tp)
	}
	return vs, offs
}

// committedOffset is group's committed offset of topic's partition 0
// (require_stable: a pending transactional commit is waited out,
// UNSTABLE_OFFSET_COMMIT retried, as EndTxn answers before the offsets
// of its transaction are committed), -1001 (librdkafka's OffsetInvalid)
// when there is none.
func committedOffset(t *testing.T, addr, group, topic string) kafka.Offset {
	t.Helper()
	ad, err := kafka.NewAdminClient(config(addr, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer ad.Close()
	ctx := testCtx(t)
	for {
		res, err := ad.ListConsumerGroupOffsets(ctx, []kafka.ConsumerGroupTopicPartitions{{
			Group: group, Partitions: []kafka.TopicPartition{{Topic: &topic, Partition: 0}}}},
			kafka.SetAdminRequireStableOffsets(true))
		if err != nil {
			t.Fatalf("list group offsets: %v", err)
		}
		tp := res.ConsumerGroupsTopicPartitions[0].Partitions[0]
		var kerr kafka.Error
		if errors.As(tp.Error, &kerr) && kerr.Code() == kafka.ErrUnstableOffsetCommit && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond) // polling a condition, bounded by ctx
			continue
		}
		if tp.Error != nil {
			t.Fatalf("group offset: %v", tp.Error)
		}
		return tp.Offset
	}
}

func transform(in []string) []string {
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = "out-" + v
	}
	return out
}

// A librdkafka consume-transform-produce loop: a consumer in group "g"
// reads "in", a transactional producer writes the transformed records to
// "out" and sends the consumer's offsets with the group's metadata
// (KIP-447) into the transaction. Three transactions: commit, abort,
// commit. read_committed consumers see exactly the committed records,
// read_uncommitted ones all of them, both skip the markers; the group's
// offsets move with the commits only.
func TestTxnLibrdkafkaCommitAbort(t *testing.T) {
	addr := startGateway(t)
	createTopic(t, addr, "in", 1)
	createTopic(t, addr, "out", 2)
	produce(t, newProducer(t, addr, nil), "in", 1, values("r", 12))

	c := newConsumer(t, addr, kafka.ConfigMap{"group.id": "g", "enable.auto.commit": false,
		"auto.offset.reset": "earliest", "isolation.level": "read_committed"})
	if err := c.Subscribe("in", nil); err != nil {
		t.Fatal(err)
	}
	p := txnProducer(t, addr, "rdk-txn")
	want := map[string][]string{"read_committed": nil, "read_uncommitted": nil}
	wantOffset := kafka.OffsetInvalid // nothing committed yet
	for i, commit := range []bool{true, false, true} {
		ctx := testCtx(t)
		in, offs := readN(t, c, 4)
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		produce(t, p, "out", 2, transform(in))
		meta, err := c.GetConsumerGroupMetadata()
		if err != nil {
			t.Fatal(err)
		}
		if err := p.SendOffsetsToTransaction(ctx, offs, meta); err != nil {
			t.Fatalf("transaction %d: send offsets: %v", i, err)
		}
		if commit {
			err = p.CommitTransaction(ctx)
		} else {
			err = p.AbortTransaction(ctx)
		}
		if err != nil {
			t.Fatalf("transaction %d (commit %v): %v", i, commit, err)
		}
		if commit {
			wantOffset = offs[0].Offset
			want["read_committed"] = append(want["read_committed"], transform(in)...)
		}
		want["read_uncommitted"] = append(want["read_uncommitted"], transform(in)...)
		if got := committedOffset(t, addr, "g", "in"); got != wantOffset {
			t.Fatalf("transaction %d (commit %v): group offset %v, want %v", i, commit, got, wantOffset)
		}
	}
	if got := committedOffset(t, addr, "g", "in"); got != 12 {
		t.Fatalf("group offset %v after the last commit, want 12", got)
	}
	// Each partition's sentinel comes after the last marker: a consumer
	// that reaches it skipped every control record on the way.
	for iso, w := range want {
		got := consumeAll(t, addr, "out", 2, iso)
		slices.Sort(got)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("%s consumer saw %v, want %v", iso, got, w)
		}
	}
}

// A second librdkafka producer with the same transactional id fences the
// first (a zombie): the zombie's open transaction is aborted, its commit
// fails with a fatal fencing error, and read_committed consumers see only
// the new producer's records.
func TestTxnLibrdkafkaZombieFenced(t *testing.T) {
	addr := startGateway(t)
	createTopic(t, addr, "z", 2)
	ctx := testCtx(t)
	zombie := txnProducer(t, addr, "rdk-z")
	if err := zombie.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, zombie, "z", 2, values("zombie", 4))

	fresh := txnProducer(t, addr, "rdk-z")
	if err := fresh.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, fresh, "z", 2, values("fresh", 4))
	if err := fresh.CommitTransaction(ctx); err != nil {
		t.Fatalf("fresh commit: %v", err)
	}

	err := zombie.CommitTransaction(ctx)
	kerr, ok := err.(kafka.Error)
	if !ok || !kerr.IsFatal() {
		t.Fatalf("zombie commit: %v, want a fatal error", err)
	}
	switch kerr.Code() {
	case kafka.ErrFenced, kafka.ErrProducerFenced, kafka.ErrInvalidProducerEpoch:
	default:
		t.Fatalf("zombie commit: %v (code %d), want fenced", err, kerr.Code())
	}
	if zombie.GetFatalError() == nil {
		t.Fatal("zombie has no fatal error")
	}
	got := consumeAll(t, addr, "z", 2, "read_committed")
	slices.Sort(got)
	if want := values("fresh", 4); !slices.Equal(got, want) {
		t.Fatalf("read_committed saw %v, want %v", got, want)
	}
}
