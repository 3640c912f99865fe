package test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// configOf finds one config of a described topic.
func configOf(t *testing.T, adm *kadm.Client, topic, name string) kadm.Config {
	t.Helper()
	rcs, err := adm.DescribeTopicConfigs(testCtx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe %s: %v %v", topic, err, rc.Err)
	}
	for _, c := range rc.Configs {
		if c.Key == name {
			return c
		}
	}
	t.Fatalf("%s: config %s not described (%d configs)", topic, name, len(rc.Configs))
	return kadm.Config{}
}

// DescribeConfigs lists every topic config with its source; incremental
// and full AlterConfigs change them; bad values are INVALID_CONFIG.
func TestTopicConfigs(t *testing.T) {
	g := newGateway(t)
	g.createTopic("cfg", 1)
	adm := g.admin()
	if c := configOf(t, adm, "cfg", "retention.ms"); c.MaybeValue() != "604800000" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("default retention.ms: %+v", c)
	}
	if c := configOf(t, adm, "cfg", "max.message.bytes"); c.MaybeValue() == "" {
		t.Fatalf("max.message.bytes has no default: %+v", c)
	}

	hour := "3600000"
	resp, err := adm.AlterTopicConfigs(testCtx(t), []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "retention.ms", Value: &hour},
		{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: ptr("delete")},
	}, "cfg")
	if err != nil || resp[0].Err != nil {
		t.Fatalf("incremental alter: %v %v", err, resp)
	}
	if c := configOf(t, adm, "cfg", "retention.ms"); c.MaybeValue() != hour || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("altered retention.ms: %+v", c)
	}

	resp, err = adm.AlterTopicConfigs(testCtx(t), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: ptr("soon")}}, "cfg")
	if err != nil || resp[0].Err != kerr.InvalidConfig {
		t.Fatalf("bad value: %v %+v", err, resp)
	}

	// Non-incremental: what is not listed returns to its default.
	resp, err = adm.AlterTopicConfigsState(testCtx(t), []kadm.AlterConfig{{Name: "segment.ms", Value: ptr("60000")}}, "cfg")
	if err != nil || resp[0].Err != nil {
		t.Fatalf("alter state: %v %+v", err, resp)
	}
	if c := configOf(t, adm, "cfg", "retention.ms"); c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("retention.ms after a full alter: %+v", c)
	}
	if c := configOf(t, adm, "cfg", "segment.ms"); c.MaybeValue() != "60000" {
		t.Fatalf("segment.ms: %+v", c)
	}

	rcs, err := adm.DescribeTopicConfigs(testCtx(t), "no-such-topic")
	if rc, _ := rcs.On("no-such-topic", nil); err != nil || rc.Err != kerr.UnknownTopicOrPartition {
		t.Fatalf("unknown topic: %v %+v", err, rc)
	}
}

// CreatePartitions grows a topic; new partitions take records; shrinking
// is INVALID_PARTITIONS.
func TestCreatePartitions(t *testing.T) {
	g := newGateway(t)
	g.createTopic("grow", 1)
	adm := g.admin()
	resp, err := adm.UpdatePartitions(testCtx(t), 3, "grow")
	if err != nil || resp["grow"].Err != nil {
		t.Fatalf("grow: %v %+v", err, resp)
	}
	td, err := adm.ListTopics(testCtx(t), "grow")
	if err != nil || len(td["grow"].Partitions) != 3 {
		t.Fatalf("after grow: %v %+v", err, td["grow"])
	}
	prod := g.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := prod.ProduceSync(testCtx(t), &kgo.Record{Topic: "grow", Partition: 2, Value: []byte("new")}).FirstErr(); err != nil {
		t.Fatalf("produce to a new partition: %v", err)
	}
	resp, err = adm.UpdatePartitions(testCtx(t), 2, "grow")
	if err != nil || resp["grow"].Err != kerr.InvalidPartitions {
		t.Fatalf("shrink: %v %+v", err, resp)
	}
}

func ptr[T any](v T) *T { return &v }

// CreateTopics v5+ describes the new topic's every config with its source,
// as Kafka does, including for validate_only.
func TestCreateTopicsReturnsConfigs(t *testing.T) {
	g := newGateway(t)
	cl := g.client()
	for _, validateOnly := range []bool{true, false} {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.ValidateOnly = validateOnly
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "created-cfg", 1, 1
		cfg := kmsg.NewCreateTopicsRequestTopicConfig()
		cfg.Name, cfg.Value = "retention.ms", ptr("3600000")
		rt.Configs = append(rt.Configs, cfg)
		req.Topics = append(req.Topics, rt)
		resp := request[*kmsg.CreateTopicsResponse](t, cl, req)
		got := resp.Topics[0]
		if got.ErrorCode != 0 {
			t.Fatalf("validateOnly=%v: error %d", validateOnly, got.ErrorCode)
		}
		sources := map[string]int8{}
		for _, c := range got.Configs {
			sources[c.Name] = c.Source
		}
		if sources["retention.ms"] != int8(kmsg.ConfigSourceDynamicTopicConfig) {
			t.Fatalf("validateOnly=%v: retention.ms source %d, want topic", validateOnly, sources["retention.ms"])
		}
		if s, ok := sources["segment.bytes"]; !ok || s != int8(kmsg.ConfigSourceDefaultConfig) {
			t.Fatalf("validateOnly=%v: segment.bytes missing or not default (%d, %v)", validateOnly, s, ok)
		}
	}
}
