package librdkafka

import (
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
