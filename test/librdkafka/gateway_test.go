// Package librdkafka tests kgateway with librdkafka, through
// confluent-kafka-go. It is a module of its own so that the server's
// module takes no cgo dependency; it starts a real server in-process on
// 127.0.0.1:0 over a temporary data dir, as the end-to-end tests in test/
// do.
package librdkafka

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/server"
)

// testDeadline bounds every wait: a failure bound, never a way to let
// something happen.
const testDeadline = 30 * time.Second

// startGateway serves a kgateway on an ephemeral port until the test ends
// and returns its address. Clients made after it are closed before it
// (t.Cleanup runs last-in first-out).
func startGateway(t *testing.T) string {
	t.Helper()
	return startServer(t).Addr().String()
}

// startServer starts a kgateway in-process, for the tests that drive it
// too (a retention pass).
func startServer(t *testing.T) *server.Server {
	t.Helper()
	s, err := server.Open(server.Config{
		DataDir:  t.TempDir(),
		Listen:   "127.0.0.1:0",
		Resolver: resolver.Config{NumPartitions: 1, AutoCreate: true},
	})
	if err != nil {
		t.Fatalf("open server: %v", err)
	}
	go func() {
		if err := s.Serve(); err != nil {
			t.Errorf("serve: %v", err) // Close waits for Serve: the test is still running
		}
	}()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close server: %v", err)
		}
	})
	return s
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	t.Cleanup(cancel)
	return ctx
}

// config is a librdkafka configuration for addr plus extra.
func config(addr string, extra kafka.ConfigMap) *kafka.ConfigMap {
	cm := kafka.ConfigMap{"bootstrap.servers": addr, "broker.address.family": "v4"}
	for k, v := range extra {
		cm[k] = v
	}
	return &cm
}

func createTopic(t *testing.T, addr, topic string, partitions int) {
	t.Helper()
	ad, err := kafka.NewAdminClient(config(addr, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer ad.Close()
	res, err := ad.CreateTopics(testCtx(t), []kafka.TopicSpecification{{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1}})
	if err != nil || res[0].Error.Code() != kafka.ErrNoError {
		t.Fatalf("create topic %s: %v %v", topic, err, res)
	}
}

func newProducer(t *testing.T, addr string, extra kafka.ConfigMap) *kafka.Producer {
	t.Helper()
	p, err := kafka.NewProducer(config(addr, extra))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func newConsumer(t *testing.T, addr string, extra kafka.ConfigMap) *kafka.Consumer {
	t.Helper()
	c, err := kafka.NewConsumer(config(addr, extra))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// produce sends each value to partition i%partitions of topic and waits
// until every one is acknowledged, so that what an abort throws away was
// written first.
func produce(t *testing.T, p *kafka.Producer, topic string, partitions int, values []string) {
	t.Helper()
	dr := make(chan kafka.Event, len(values))
	for i, v := range values {
		m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: int32(i % partitions)}, Value: []byte(v)}
		if err := p.Produce(m, dr); err != nil {
			t.Fatalf("produce %s: %v", v, err)
		}
	}
	timeout := time.After(testDeadline)
	for range values {
		select {
		case e := <-dr:
			if m, ok := e.(*kafka.Message); !ok || m.TopicPartition.Error != nil {
				t.Fatalf("delivery: %v", e)
			}
		case <-timeout:
			t.Fatal("delivery reports did not arrive")
		}
	}
}

func values(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

// consumeAll appends a plain sentinel record to each of topic's partitions,
// then reads topic from the start with a librdkafka consumer at the
// isolation level until every sentinel arrives: what came before them is
// everything that level shows. It returns the values, sentinels left out.
func consumeAll(t *testing.T, addr, topic string, partitions int, isolation string) []string {
	t.Helper()
	sentinel := fmt.Sprintf("sentinel-%d", time.Now().UnixNano())
	p := newProducer(t, addr, nil)
	var ss []string
	for range partitions {
		ss = append(ss, sentinel)
	}
	produce(t, p, topic, partitions, ss)
	c := newConsumer(t, addr, kafka.ConfigMap{"group.id": "reader-" + sentinel, "isolation.level": isolation,
		"enable.auto.commit": false})
	var tps []kafka.TopicPartition
	for i := range partitions {
		tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: int32(i), Offset: kafka.OffsetBeginning})
	}
	if err := c.Assign(tps); err != nil {
		t.Fatal(err)
	}
	var out []string
	seen := map[int32]bool{}
	deadline := time.Now().Add(testDeadline)
	for len(seen) < partitions {
		if time.Now().After(deadline) {
			t.Fatalf("consume %s (%s): sentinels of %v of %d partitions; got %v", topic, isolation, seen, partitions, out)
		}
		m, err := c.ReadMessage(time.Second)
		if err != nil {
			if err.(kafka.Error).IsTimeout() {
				continue
			}
			t.Fatalf("consume %s: %v", topic, err)
		}
		switch v := string(m.Value); {
		case v == sentinel:
			seen[m.TopicPartition.Partition] = true
		case strings.HasPrefix(v, "sentinel-"):
		default:
			out = append(out, v)
		}
	}
	return out
}
