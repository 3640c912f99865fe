package librdkafka

import (
	"fmt"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// A consumer whose offset fell below the log start (after DeleteRecords,
// as after retention) gets OFFSET_OUT_OF_RANGE and resets by
// auto.offset.reset. librdkafka sees the error only when the partition
// carries an empty record set, as Kafka's does: it refuses a whole Fetch
// response with a null one ("invalid MessageSetSize -1") and retries it
// for ever.
func TestResetBelowLogStart(t *testing.T) {
	addr := startGateway(t)
	topic := "reset-below-start"
	createTopic(t, addr, topic, 1)
	produce(t, newProducer(t, addr, nil), topic, 1, values("v", 10))

	ad, err := kafka.NewAdminClient(config(addr, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer ad.Close()
	res, err := ad.DeleteRecords(testCtx(t), []kafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: 6}})
	if err != nil || res.DeleteRecordsResults[0].TopicPartition.Error != nil {
		t.Fatalf("delete records: %v %+v", err, res)
	}

	c := newConsumer(t, addr, kafka.ConfigMap{"group.id": "reset", "auto.offset.reset": "earliest", "enable.auto.commit": false})
	if err := c.Assign([]kafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: 2}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testDeadline)
	var got []string
	for len(got) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("consumed %v from below the log start: no reset", got)
		}
		m, err := c.ReadMessage(200 * time.Millisecond)
		if err != nil {
			if kerr, ok := err.(kafka.Error); ok && kerr.IsTimeout() {
				continue
			}
			t.Fatal(err)
		}
		got = append(got, string(m.Value))
		if want := int64(5 + len(got)); int64(m.TopicPartition.Offset) != want {
			t.Fatalf("message %d at offset %d, want %d", len(got), m.TopicPartition.Offset, want)
		}
	}
}

// A group consumer whose committed offset retention deleted (its
// ledgers expired, so the log start moved past it) gets
// OFFSET_OUT_OF_RANGE at that offset and, with auto.offset.reset
// earliest, resumes from the new log start, as from Kafka.
func TestGroupResetAfterRetention(t *testing.T) {
	s := startServer(t)
	addr := s.Addr().String()
	topic := "reset-after-retention"
	ad, err := kafka.NewAdminClient(config(addr, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer ad.Close()
	// segment.bytes 100: every batch gets a ledger of its own.
	res, err := ad.CreateTopics(testCtx(t), []kafka.TopicSpecification{{Topic: topic, NumPartitions: 1, ReplicationFactor: 1,
		Config: map[string]string{"segment.bytes": "100", "retention.ms": "60000"}}})
	if err != nil || res[0].Error.Code() != kafka.ErrNoError {
		t.Fatalf("create topic: %v %v", err, res)
	}
	p := newProducer(t, addr, kafka.ConfigMap{"linger.ms": 0})
	old := time.Now().Add(-time.Hour)
	for i := range 8 { // one batch each: five expired, three not
		m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: 0}, Value: fmt.Appendf(nil, "r-%d", i)}
		if i < 5 {
			m.Timestamp = old
		}
		dr := make(chan kafka.Event, 1)
		if err := p.Produce(m, dr); err != nil {
			t.Fatal(err)
		}
		if e := (<-dr).(*kafka.Message); e.TopicPartition.Error != nil || int64(e.TopicPartition.Offset) != int64(i) {
			t.Fatalf("record %d: %v at %v", i, e.TopicPartition.Error, e.TopicPartition.Offset)
		}
	}

	const group = "reset-after-retention-g"
	committer := newConsumer(t, addr, kafka.ConfigMap{"group.id": group, "enable.auto.commit": false})
	if _, err := committer.CommitOffsets([]kafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: 2}}); err != nil {
		t.Fatalf("commit: %v", err)
	}
	committer.Close()
	if err := s.Resolver().Passes().RunRetention(time.Now()); err != nil {
		t.Fatal(err)
	}
	lo, _, err := p.QueryWatermarkOffsets(topic, 0, int(testDeadline/time.Millisecond))
	if err != nil || lo != 5 {
		t.Fatalf("log start after retention: %d, %v", lo, err)
	}

	c := newConsumer(t, addr, kafka.ConfigMap{"group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": false})
	if err := c.Subscribe(topic, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testDeadline)
	for want := int64(5); want < 8; {
		if time.Now().After(deadline) {
			t.Fatalf("consumed up to offset %d after retention: no reset", want)
		}
		m, err := c.ReadMessage(200 * time.Millisecond)
		if err != nil {
			if kerr, ok := err.(kafka.Error); ok && kerr.IsTimeout() {
				continue
			}
			t.Fatal(err)
		}
		if int64(m.TopicPartition.Offset) != want {
			t.Fatalf("read offset %d, want %d (the new log start on)", m.TopicPartition.Offset, want)
		}
		want++
	}
}
