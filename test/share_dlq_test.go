package test

import (
	"context"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kgateway/kgateway/kafka/share"
)

// dlqEnd is the end offset of partition 0 of the DLQ topic.
func dlqEnd(t *testing.T, g *gateway, topic string) int64 {
	t.Helper()
	ends, err := g.admin().ListEndOffsets(testCtx(t), topic)
	if err != nil {
		t.Fatalf("list end offsets: %v", err)
	}
	o, _ := ends.Lookup(topic, 0)
	return o.Offset
}

// TestShareGroupDeadLetterQueue (KIP-1191): a share group with a DLQ
// topic gets a copy of each record its member rejects and of each whose
// delivery count limit is reached, with Kafka's headers and (copy.record
// on) the original value; the copies are durable before the records are
// archived, so after a restart the DLQ holds each exactly once and the
// group does not deliver them again.
func TestShareGroupDeadLetterQueue(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{share: share.Config{DeliveryCountLimit: 2}})
	const topic, dlq, group, n = "dq", "dlq.dq", "dq-group", 10
	g.createTopic(topic, 1)
	g.createTopicWith(dlq, map[string]*string{share.TopicConfigDLQEnable: kmsg.StringPtr("true")})
	produceNumbered(t, g.addr, topic, n)
	setGroupConfigs(t, g.addr, group, share.ConfigAutoOffsetReset, "earliest",
		share.ConfigDLQTopic, dlq, share.ConfigDLQCopyRecord, "true")

	l := newShareLedger()
	ctx, cancel := context.WithCancel(context.Background())
	wg := runShareMember(ctx, t, g.addr, group, topic, "m", l, func(v int, _ *kgo.Record) kgo.AckStatus {
		switch {
		case v < 3:
			return kgo.AckReject
		case v < 5:
			return kgo.AckRelease // twice: the limit
		}
		return kgo.AckAccept
	})
	waitFor(t, "every record finished", func() bool { return shareOffset(t, g.addr, group, topic) == n })
	cancel()
	wg.Wait()

	// Archived only once written: the DLQ already holds all five.
	if end := dlqEnd(t, g, dlq); end != 5 {
		t.Fatalf("DLQ end offset %d once the records were archived, want 5", end)
	}
	cons := g.client(kgo.ConsumeTopics(dlq), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []*kgo.Record
	for len(got) < 5 {
		fs := cons.PollFetches(testCtx(t))
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume DLQ: %v", err)
		}
		got = append(got, fs.Records()...)
	}
	for _, r := range got {
		h := map[string]string{}
		for _, x := range r.Headers {
			h[x.Key] = string(x.Value)
		}
		v, _ := strconv.Atoi(string(r.Value))
		cause, count := "Offset rejected by client.", "1"
		if v >= 3 {
			cause, count = "Offset delivery count exceeded the threshold.", "2"
		}
		want := map[string]string{"__dlq.errors.topic": topic, "__dlq.errors.partition": "0",
			"__dlq.errors.offset": strconv.Itoa(v), "__dlq.errors.group": group,
			"__dlq.errors.delivery.count": count, "__dlq.errors.message": cause}
		if v >= 5 || len(h) != len(want) {
			t.Errorf("DLQ record value %q headers %v, want %v", r.Value, h, want)
			continue
		}
		for k, w := range want {
			if h[k] != w {
				t.Errorf("DLQ record of %d: header %s = %q, want %q", v, k, h[k], w)
			}
		}
	}

	g.restart()
	if off := shareOffset(t, g.addr, group, topic); off != n {
		t.Errorf("SPSO %d after restart, want %d", off, n)
	}
	if end := dlqEnd(t, g, dlq); end != 5 {
		t.Errorf("DLQ end offset %d after restart, want 5 (written once)", end)
	}
}
