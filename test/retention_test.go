package test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// End-to-end tests of topic configs, retention, DeleteRecords and
// CreatePartitions. configOf and ptr are configs_test.go's.

// createTopicWith creates a one-partition topic with configs.
func (g *gateway) createTopicWith(name string, configs map[string]*string) {
	g.t.Helper()
	resp, err := g.admin().CreateTopic(testCtx(g.t), 1, 1, configs, name)
	if err != nil || resp.Err != nil {
		g.t.Fatalf("create topic %s: %v %v", name, err, resp.Err)
	}
}

// produceAt produces one record per timestamp, each its own batch.
func produceAt(t *testing.T, cl *kgo.Client, topic string, ts ...time.Time) {
	t.Helper()
	for i, x := range ts {
		r := &kgo.Record{Topic: topic, Value: []byte{byte(i)}, Timestamp: x}
		if err := cl.ProduceSync(testCtx(t), r).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
}

// pollN consumes n records from cl.
func pollN(t *testing.T, cl *kgo.Client, n int) []*kgo.Record {
	t.Helper()
	ctx := testCtx(t)
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", len(out), n, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		out = append(out, fs.Records()...)
	}
	return out
}

// Configs set through kadm (incremental and full alters) survive a
// restart and are described with their sources and synonyms; broker
// configs are described too, read-only.
func TestConfigsRoundTripRestart(t *testing.T) {
	g := newGateway(t)
	g.createTopicWith("rt", map[string]*string{"retention.bytes": ptr("1048576")})
	g.createTopic("full", 1)
	adm := g.admin()
	resp, err := adm.AlterTopicConfigs(testCtx(t), []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "retention.ms", Value: ptr("3600000")},
		{Op: kadm.SetConfig, Name: "segment.bytes", Value: ptr("65536")},
		{Op: kadm.DeleteConfig, Name: "retention.bytes"},
		{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: ptr("delete")},
	}, "rt")
	if err != nil || resp[0].Err != nil {
		t.Fatalf("incremental alter: %v %+v", err, resp)
	}
	if resp, err := adm.AlterTopicConfigsState(testCtx(t), []kadm.AlterConfig{{Name: "message.timestamp.type", Value: ptr("LogAppendTime")}}, "full"); err != nil || resp[0].Err != nil {
		t.Fatalf("full alter: %v %+v", err, resp)
	}
	// validate_only changes nothing.
	if resp, err := adm.ValidateAlterTopicConfigs(testCtx(t), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: ptr("1")}}, "rt"); err != nil || resp[0].Err != nil {
		t.Fatalf("validate alter: %v %+v", err, resp)
	}

	g.restart()
	adm = g.admin()
	for _, want := range []struct{ topic, name, value string }{
		{"rt", "retention.ms", "3600000"},
		{"rt", "segment.bytes", "65536"},
		{"rt", "cleanup.policy", "delete"},
		{"full", "message.timestamp.type", "LogAppendTime"},
	} {
		c := configOf(t, adm, want.topic, want.name)
		if c.MaybeValue() != want.value || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
			t.Errorf("%s %s after restart: %+v", want.topic, want.name, c)
		}
	}
	c := configOf(t, adm, "rt", "retention.bytes")
	if c.MaybeValue() != "-1" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("deleted retention.bytes: %+v", c)
	}
	c = configOf(t, adm, "rt", "retention.ms")
	if len(c.Synonyms) < 2 || c.Synonyms[len(c.Synonyms)-1].Key != "log.retention.ms" {
		t.Errorf("retention.ms synonyms: %+v", c.Synonyms)
	}

	brokerConfigs := func(brokers ...int32) map[string]kadm.Config {
		t.Helper()
		rcs, err := adm.DescribeBrokerConfigs(testCtx(t), brokers...)
		if err != nil || len(rcs) != 1 || rcs[0].Err != nil {
			t.Fatalf("describe broker %v: %v %+v", brokers, err, rcs)
		}
		seen := map[string]kadm.Config{}
		for _, c := range rcs[0].Configs {
			seen[c.Key] = c
		}
		return seen
	}
	seen := brokerConfigs(0)
	for name, value := range map[string]string{"log.retention.ms": "604800000", "log.segment.bytes": "1073741824", "log.cleanup.policy": "delete", "message.max.bytes": "1048588", "node.id": "0"} {
		if c := seen[name]; c.MaybeValue() != value {
			t.Errorf("broker 0 %s: %+v", name, seen[name])
		}
	}
	// The cluster-wide default resource lists only what is set for every
	// broker (nothing yet), as Kafka's does.
	if seen := brokerConfigs(); len(seen) != 0 {
		t.Errorf("the default broker resource: %v", seen)
	}
	// log.retention.ms is a dynamic broker config; num.partitions is not.
	ar, err := adm.AlterBrokerConfigs(testCtx(t), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.retention.ms", Value: ptr("3600000")}}, 0)
	if err != nil || len(ar) != 1 || ar[0].Err != nil {
		t.Fatalf("alter broker: %v %+v", err, ar)
	}
	if c := brokerConfigs(0)["log.retention.ms"]; c.MaybeValue() != "3600000" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Errorf("log.retention.ms after the alter: %+v", c)
	}
	ar, err = adm.AlterBrokerConfigs(testCtx(t), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "num.partitions", Value: ptr("3")}}, 0)
	if err != nil || len(ar) != 1 || !errors.Is(ar[0].Err, kerr.InvalidRequest) {
		t.Fatalf("alter read-only num.partitions: %v %+v", err, ar)
	}
}

// Invalid configs are INVALID_CONFIG with a message naming the problem,
// on create (also validate-only) and on both alters.
func TestInvalidConfigs(t *testing.T) {
	g := newGateway(t)
	adm := g.admin()
	resp, err := adm.CreateTopic(testCtx(t), 1, 1, map[string]*string{"cleanup.policy": ptr("compact,shred")}, "bad")
	if !errors.Is(err, kerr.InvalidConfig) || !errors.Is(resp.Err, kerr.InvalidConfig) || !strings.Contains(resp.ErrMessage, "not a cleanup policy") {
		t.Fatalf("create compact,shred: %v %+v", err, resp)
	}
	vr, err := adm.ValidateCreateTopics(testCtx(t), 1, 1, map[string]*string{"retention.ms": ptr("1000")}, "ok")
	if err != nil || vr["ok"].Err != nil {
		t.Fatalf("validate create: %v %+v", err, vr)
	}
	if _, ok := g.res.Topic("ok"); ok {
		t.Fatal("validate-only create made a topic")
	}
	g.createTopic("t", 1)
	for _, tc := range []struct {
		ac  kadm.AlterConfig
		msg string
	}{
		{kadm.AlterConfig{Op: kadm.AppendConfig, Name: "retention.ms", Value: ptr("5")}, "not a list config"},
		{kadm.AlterConfig{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: ptr("shred")}, "not a cleanup policy"},
		{kadm.AlterConfig{Op: kadm.SetConfig, Name: "min.insync.replicas", Value: ptr("2")}, "must be 1"},
		{kadm.AlterConfig{Op: kadm.SetConfig, Name: "message.timestamp.type", Value: ptr("Now")}, "CreateTime"},
	} {
		rs, err := adm.AlterTopicConfigs(testCtx(t), []kadm.AlterConfig{tc.ac}, "t")
		if err != nil || !errors.Is(rs[0].Err, kerr.InvalidConfig) || !strings.Contains(rs[0].ErrMessage, tc.msg) {
			t.Errorf("%s %s: %v %+v", tc.ac.Name, tc.msg, err, rs)
		}
	}
	rs, err := adm.AlterTopicConfigsState(testCtx(t), []kadm.AlterConfig{{Name: "segment.bytes", Value: ptr("1")}}, "t")
	if err != nil || !errors.Is(rs[0].Err, kerr.InvalidConfig) || !strings.Contains(rs[0].ErrMessage, "segment.bytes") {
		t.Fatalf("full alter: %v %+v", err, rs)
	}
}

// Retention removes expired ledgers: a consumer positioned below the new
// log start gets OFFSET_OUT_OF_RANGE, and with reset-to-earliest it
// continues from the new start.
func TestRetentionConsumerReset(t *testing.T) {
	g := newGateway(t)
	// segment.bytes 100: every batch gets a ledger of its own.
	g.createTopicWith("ret", map[string]*string{"segment.bytes": ptr("100"), "retention.ms": ptr("60000")})
	old, now := time.Now().Add(-time.Hour), time.Now()
	prod := g.client()
	produceAt(t, prod, "ret", old, old, old, old, old, now, now, now)
	if err := g.res.Passes().RunRetention(time.Now()); err != nil {
		t.Fatal(err)
	}
	starts, err := g.admin().ListStartOffsets(testCtx(t), "ret")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := starts.Lookup("ret", 0); s.Offset != 5 {
		t.Fatalf("log start after retention: %+v", s)
	}

	// Raw fetch below the start: OFFSET_OUT_OF_RANGE, no bounds (as Kafka).
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MaxBytes = 0, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	cl := g.client()
	rt.Topic, rt.TopicID = "ret", topicID(t, cl, "ret")
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 2, 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	fr := request[*kmsg.FetchResponse](t, cl, req)
	p := fr.Topics[0].Partitions[0]
	if p.ErrorCode != kerr.OffsetOutOfRange.Code || p.LogStartOffset != -1 || p.HighWatermark != -1 {
		t.Fatalf("fetch below start: code %d start %d hwm %d", p.ErrorCode, p.LogStartOffset, p.HighWatermark)
	}

	// Without a reset policy the client reports the error...
	noReset := g.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"ret": {0: kgo.NewOffset().At(2)}}),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()))
	ctx := testCtx(t)
	var ferr error
	for ferr == nil && ctx.Err() == nil {
		noReset.PollFetches(ctx).EachError(func(_ string, _ int32, err error) { ferr = err })
	}
	if !errors.Is(ferr, kerr.OffsetOutOfRange) {
		t.Fatalf("no-reset consumer: %v", ferr)
	}
	// ...and with reset to earliest it continues from the new start.
	reset := g.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"ret": {0: kgo.NewOffset().At(2)}}),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	recs := pollN(t, reset, 3)
	if recs[0].Offset != 5 || recs[2].Offset != 7 {
		t.Fatalf("reset consumer read offsets %d..%d", recs[0].Offset, recs[len(recs)-1].Offset)
	}
}

// DeleteRecords moves the low watermark; -1 is the high watermark; past
// it is OFFSET_OUT_OF_RANGE.
func TestDeleteRecordsKadm(t *testing.T) {
	g := newGateway(t)
	g.createTopic("del", 1)
	produceAt(t, g.client(), "del", time.Now(), time.Now(), time.Now(), time.Now(), time.Now())
	adm := g.admin()
	del := func(at int64) kadm.DeleteRecordsResponse {
		t.Helper()
		os := kadm.Offsets{}
		os.Add(kadm.Offset{Topic: "del", Partition: 0, At: at})
		rs, err := adm.DeleteRecords(testCtx(t), os)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := rs.Lookup("del", 0)
		return r
	}
	if r := del(3); r.Err != nil || r.LowWatermark != 3 {
		t.Fatalf("delete below 3: %+v", r)
	}
	if r := del(9); !errors.Is(r.Err, kerr.OffsetOutOfRange) {
		t.Fatalf("delete past hwm: %+v", r)
	}
	starts, err := adm.ListStartOffsets(testCtx(t), "del")
	if s, _ := starts.Lookup("del", 0); err != nil || s.Offset != 3 {
		t.Fatalf("start offset: %v %+v", err, s)
	}
	cl := g.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"del": {0: kgo.NewOffset().AtStart()}}))
	if recs := pollN(t, cl, 2); recs[0].Offset != 3 {
		t.Fatalf("consume from start: first offset %d", recs[0].Offset)
	}
	if r := del(-1); r.Err != nil || r.LowWatermark != 5 {
		t.Fatalf("delete to hwm: %+v", r)
	}
	g.restart()
	starts, err = g.admin().ListStartOffsets(testCtx(t), "del")
	if s, _ := starts.Lookup("del", 0); err != nil || s.Offset != 5 {
		t.Fatalf("start offset after restart: %v %+v", err, s)
	}
}

// CreatePartitions adds partitions that take produce and serve consume.
func TestCreatePartitionsProduceConsume(t *testing.T) {
	g := newGateway(t)
	g.createTopic("cp", 1)
	rs, err := g.admin().CreatePartitions(testCtx(t), 2, "cp")
	if err != nil || rs["cp"].Err != nil {
		t.Fatalf("create partitions: %v %+v", err, rs)
	}
	prod := g.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := int32(0); p < 3; p++ {
		if err := prod.ProduceSync(testCtx(t), &kgo.Record{Topic: "cp", Partition: p, Value: []byte{byte(p)}}).FirstErr(); err != nil {
			t.Fatalf("produce to partition %d: %v", p, err)
		}
	}
	cl := g.client(kgo.ConsumeTopics("cp"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := map[int32]bool{}
	for _, r := range pollN(t, cl, 3) {
		if r.Value[0] != byte(r.Partition) {
			t.Fatalf("partition %d served %v", r.Partition, r.Value)
		}
		got[r.Partition] = true
	}
	if len(got) != 3 {
		t.Fatalf("consumed from partitions %v", got)
	}
	// validate_only and shrinking change nothing.
	if rs, err := g.admin().ValidateCreatePartitions(testCtx(t), 5, "cp"); err != nil || rs["cp"].Err != nil {
		t.Fatalf("validate: %v %+v", err, rs)
	}
	if tp, _ := g.res.Topic("cp"); tp.Partitions != 3 {
		t.Fatalf("validate-only grew the topic to %d", tp.Partitions)
	}
}

// LogAppendTime topics return the broker's timestamp, flagged as such.
func TestLogAppendTimeConsume(t *testing.T) {
	g := newGateway(t)
	g.createTopicWith("lat", map[string]*string{"message.timestamp.type": ptr("LogAppendTime")})
	before := time.Now().Add(-time.Second)
	produceAt(t, g.client(), "lat", time.UnixMilli(2001))
	after := time.Now().Add(time.Second)
	cl := g.client(kgo.ConsumeTopics("lat"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	r := pollN(t, cl, 1)[0]
	if r.Attrs.TimestampType() != 1 || r.Timestamp.Before(before) || r.Timestamp.After(after) {
		t.Fatalf("record timestamp %v (type %d), want now as LogAppendTime", r.Timestamp, r.Attrs.TimestampType())
	}
}

// Retention trims a partition's oldest ledgers while it is being written:
// the trimmed files are written over by its later ledgers (storage I8),
// and what a consumer reads, before and after a restart, is exactly what
// was produced from the log start on; verify finds nothing wrong.
func TestRetentionReusesSegmentFiles(t *testing.T) {
	g := newGateway(t)
	// 1 KiB records, a batch each: a ledger every two batches, and
	// retention keeps about three ledgers.
	g.createTopicWith("reuse", map[string]*string{"segment.bytes": ptr("2500"), "retention.bytes": ptr("6000")})
	prod := g.client()
	values := map[int64][]byte{}
	produce := func(n int) {
		for range n {
			v := make([]byte, 1024)
			_, _ = rand.Read(v)
			r := &kgo.Record{Topic: "reuse", Value: v}
			if err := prod.ProduceSync(testCtx(t), r).FirstErr(); err != nil {
				t.Fatal(err)
			}
			values[r.Offset] = v
		}
	}
	spares := func() int { return len(spareInodes(t, g.dir)) }
	logStart := func() int64 {
		starts, err := g.admin().ListStartOffsets(testCtx(t), "reuse")
		if err != nil {
			t.Fatal(err)
		}
		s, _ := starts.Lookup("reuse", 0)
		return s.Offset
	}
	reuses := 0
	for range 8 {
		produce(4)
		before := logStart()
		if err := g.res.Passes().RunRetention(time.Now()); err != nil {
			t.Fatal(err)
		}
		if logStart() == before {
			continue
		}
		if spares() != 1 {
			t.Fatalf("retention trimmed, but %d spare files", spares())
		}
		produce(3) // rolls at least once: over the spare
		if spares() == 0 {
			reuses++
		}
	}
	if reuses == 0 {
		t.Fatal("no ledger was written over a trimmed file")
	}
	check := func(when string) {
		t.Helper()
		starts, err := g.admin().ListStartOffsets(testCtx(t), "reuse")
		if err != nil {
			t.Fatal(err)
		}
		ends, err := g.admin().ListEndOffsets(testCtx(t), "reuse")
		if err != nil {
			t.Fatal(err)
		}
		s, _ := starts.Lookup("reuse", 0)
		e, _ := ends.Lookup("reuse", 0)
		if s.Offset == 0 || e.Offset != int64(len(values)) {
			t.Fatalf("%s: log start %d, end %d after %d records", when, s.Offset, e.Offset, len(values))
		}
		cl := g.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"reuse": {0: kgo.NewOffset().At(s.Offset)}}))
		defer cl.Close()
		for i, r := range pollN(t, cl, int(e.Offset-s.Offset)) {
			if r.Offset != s.Offset+int64(i) || !bytes.Equal(r.Value, values[r.Offset]) {
				t.Fatalf("%s: record %d at offset %d is not what was produced there", when, i, r.Offset)
			}
		}
	}
	check("before restart")
	g.restart()
	check("after restart")
	g.stop()
	verifyDataDir(t, g.dir)
	t.Logf("%d of 8 rounds wrote a ledger over a trimmed file", reuses)
}
