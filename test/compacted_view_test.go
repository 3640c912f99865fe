package test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/topicconfig"
)

// The TOPIC_COMPACTED view through real clients (the compacted view rules): a
// delete-policy topic with kgateway.compacted.view.enable keeps its full
// history; a KTable-style consumer of <topic>.compacted bootstraps the
// latest value per key (tombstones included, offsets with gaps), then
// follows the tail; producing to the companion is INVALID_TOPIC_EXCEPTION;
// Metadata lists it with its own id; a restart keeps the view.
func TestCompactedViewKTableBootstrap(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{cleaner: resolver.CleanerConfig{Threads: -1}})
	ctx := testCtx(t)
	const topic, companion = "events", "events.compacted"
	resp, err := g.admin().CreateTopic(ctx, 1, 1, map[string]*string{
		topicconfig.CompactedView: ptr("true"), "segment.bytes": ptr("1024"),
	}, topic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	// DescribeConfigs reports the config, set on the topic.
	rcs, err := g.admin().DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := rcs.On(topic, nil)
	described := false
	for _, c := range rc.Configs {
		if c.Key == topicconfig.CompactedView {
			described = c.MaybeValue() == "true" && c.Source == kmsg.ConfigSourceDynamicTopicConfig
		}
	}
	if !described {
		t.Fatalf("%s not described as set on the topic", topicconfig.CompactedView)
	}

	prod := g.client(kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
	want := map[string]string{}
	produced := 0
	for i := range 120 {
		k := fmt.Sprintf("user-%d", i%10)
		r := &kgo.Record{Key: []byte(k), Value: []byte(fmt.Sprintf("state-%d", i))}
		if i%17 == 16 {
			r.Value = nil // a tombstone
			delete(want, k)
		} else {
			want[k] = string(r.Value)
		}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
		produced++
	}
	if err := g.res.Passes().RunCleaner(time.Now()); err != nil {
		t.Fatal(err)
	}

	// Metadata lists the companion with its own id and the partition count.
	meta, err := g.admin().ListTopics(ctx, topic, companion)
	if err != nil {
		t.Fatal(err)
	}
	src, comp := meta[topic], meta[companion]
	if comp.Err != nil || len(comp.Partitions) != 1 || comp.ID == src.ID {
		t.Fatalf("companion in Metadata: %+v (source %+v)", comp, src)
	}
	// Produce is refused.
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: companion, Key: []byte("k"), Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.InvalidTopicException) {
		t.Fatalf("produce to the companion: %v, want INVALID_TOPIC_EXCEPTION", err)
	}

	// The bootstrap: fewer records than produced, offsets increasing with
	// gaps, the latest value per key; then the tail.
	cons := g.client(kgo.ConsumeTopics(companion), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	table, read := bootstrap(t, cons, g, topic)
	if fmt.Sprint(table) != fmt.Sprint(want) {
		t.Fatalf("table\n%v\nwant\n%v", table, want)
	}
	if read >= produced {
		t.Fatalf("read %d records of %d produced: the view is not compacted", read, produced)
	}
	if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte("user-0"), Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	want["user-0"] = "after"
	if table, _ = bootstrapMore(t, cons, g, topic, table); table["user-0"] != "after" {
		t.Fatalf("the consumer did not follow the tail: user-0 = %q", table["user-0"])
	}
	// The source keeps its full history.
	if n := countRecords(t, g, topic); n != produced+1 {
		t.Fatalf("the source holds %d records, %d were produced", n, produced+1)
	}

	// A restart keeps the view.
	g.restart()
	cons2 := g.client(kgo.ConsumeTopics(companion), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if table, read2 := bootstrap(t, cons2, g, topic); fmt.Sprint(table) != fmt.Sprint(want) || read2 > read+1 {
		t.Fatalf("after a restart: %d records, table\n%v\nwant\n%v", read2, table, want)
	}
}

// bootstrap reads a companion from the start up to its source's high
// watermark, applying records to a table (a nil value deletes), and
// returns it with the number of records read.
func bootstrap(t *testing.T, cl *kgo.Client, g *gateway, topic string) (map[string]string, int) {
	return bootstrapMore(t, cl, g, topic, map[string]string{})
}

func bootstrapMore(t *testing.T, cl *kgo.Client, g *gateway, topic string, table map[string]string) (map[string]string, int) {
	t.Helper()
	ctx := testCtx(t)
	_, hwm, _, err := g.res.Bounds(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	read, last := 0, int64(-1)
	for last < int64(hwm)-1 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("bootstrap: at %d of %d", last, hwm)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset <= last {
				t.Fatalf("offset %d after %d", r.Offset, last)
			}
			last = r.Offset
			read++
			if r.Value == nil {
				delete(table, string(r.Key))
			} else {
				table[string(r.Key)] = string(r.Value)
			}
		})
	}
	return table, read
}

// countRecords is how many records a consumer reads from topic.
func countRecords(t *testing.T, g *gateway, topic string) int {
	t.Helper()
	cl := g.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	_, n := bootstrap(t, cl, g, topic)
	return n
}

// A companion is authorized as its source for READ and DESCRIBE
// (the companion topic, kafka authzName): alice, who may read "events", reads
// events.compacted; the companion of a topic she may not read is
// TOPIC_AUTHORIZATION_FAILED.
func TestCompactedViewACLs(t *testing.T) {
	a := newACLServer(t)
	ctx := testCtx(t)
	for _, name := range []string{"events", "secret"} {
		res, err := a.admin().CreateTopic(ctx, 1, 1, map[string]*string{topicconfig.CompactedView: ptr("true")}, name)
		if err != nil || res.Err != nil {
			t.Fatalf("create %s: %v %v", name, err, res.Err)
		}
	}
	a.grant(allowAlice().Topics("events").Operations(kmsg.ACLOperationRead))
	alice := a.client("alice")
	for _, c := range []struct {
		topic string
		want  int16
	}{{"events.compacted", 0}, {"secret.compacted", kerr.TopicAuthorizationFailed.Code}} {
		if got := metadataTopic(t, alice, c.topic).ErrorCode; got != c.want {
			t.Errorf("Metadata %s: %v, want %v", c.topic, code(got), code(c.want))
		}
		if got := fetchCode(t, alice, aclTopicID(t, a, c.topic)); got != c.want {
			t.Errorf("Fetch %s: %v, want %v", c.topic, code(got), code(c.want))
		}
	}
}

// A companion is an internal topic in Metadata and DescribeTopicPartitions
// (its source is not), so a client subscribing by pattern with internal
// topics excluded (franz-go's regex consumer, the Java consumer's
// exclude.internal.topics) reads the source and not its view too.
func TestCompactedViewCompanionIsInternal(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{cleaner: resolver.CleanerConfig{Threads: -1}})
	ctx := testCtx(t)
	const src, plain, companion = "vi-src", "vi-plain", "vi-src.compacted"
	for topic, configs := range map[string]map[string]*string{src: {topicconfig.CompactedView: ptr("true")}, plain: nil} {
		if resp, err := g.admin().CreateTopic(ctx, 1, 1, configs, topic); err != nil || resp.Err != nil {
			t.Fatalf("create %s: %v %v", topic, err, resp.Err)
		}
	}
	prod := g.client(kgo.ProducerLinger(0))
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: src, Key: []byte("k"), Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := g.res.Passes().RunCleaner(time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := countRecordsOf(t, g, companion, src); n != 1 {
		t.Fatalf("the companion holds %d records, want 1", n)
	}

	md := kmsg.NewPtrMetadataRequest() // every topic
	resp, err := md.RequestWith(ctx, g.client())
	if err != nil {
		t.Fatal(err)
	}
	internal := map[string]bool{}
	for _, mt := range resp.Topics {
		internal[*mt.Topic] = mt.IsInternal
	}
	if !internal[companion] || internal[src] {
		t.Fatalf("Metadata internal flags: %s %v, %s %v", companion, internal[companion], src, internal[src])
	}
	dtp := kmsg.NewPtrDescribeTopicPartitionsRequest()
	rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
	rt.Topic = companion
	dtp.Topics, dtp.ResponsePartitionLimit = append(dtp.Topics, rt), 100
	dresp, err := dtp.RequestWith(ctx, g.client())
	if err != nil || len(dresp.Topics) != 1 || !dresp.Topics[0].IsInternal {
		t.Fatalf("DescribeTopicPartitions of the companion: %v %+v", err, dresp)
	}

	// A regex consumer reads the source's record and the plain topic's,
	// produced after it, and nothing of the companion.
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: plain, Value: []byte("last")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cons := g.client(kgo.ConsumeRegex(), kgo.ConsumeTopics("^vi-.*"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]int{}
	for seen[src] == 0 || seen[plain] == 0 {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("regex consumer read %v", seen)
		}
		fs.EachRecord(func(r *kgo.Record) { seen[r.Topic]++ })
		if seen[companion] > 0 {
			t.Fatalf("the regex consumer read the internal companion: %v", seen)
		}
	}
}

// countRecordsOf is how many records a consumer of topic reads up to the
// high watermark of hwmOf (a companion's is its source's).
func countRecordsOf(t *testing.T, g *gateway, topic, hwmOf string) int {
	t.Helper()
	cl := g.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	_, n := bootstrap(t, cl, g, hwmOf)
	return n
}
