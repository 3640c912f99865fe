package main

import (
	"math"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetch.max.bytes reaches the server: a fetch asking for everything gets
// at most that many record bytes.
func TestFetchMaxBytesConfig(t *testing.T) {
	g := startTestWith(t, t.TempDir(), func(c *Config) { c.FetchMaxBytes = 2048 })
	cl := newClient(t, g)
	value := strings.Repeat("x", 900)
	produce(t, cl, "capped", value, value, value, value, value)
	tds, err := kadm.NewClient(cl).ListTopics(testCtx(t), "capped")
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.SessionEpoch, req.MaxBytes = 12, -1, math.MaxInt32
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = "capped", tds["capped"].ID // the client sends v13: topic ids
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = math.MaxInt32
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	raw, err := cl.Request(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	p := raw.(*kmsg.FetchResponse).Topics[0].Partitions[0]
	if n := len(p.RecordBatches); p.ErrorCode != 0 || n == 0 || n > 2048 {
		t.Fatalf("error %d, %d record bytes; want 1..2048", p.ErrorCode, n)
	}
}
