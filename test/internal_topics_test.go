package test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The cluster id is the data directory's own: the same in Metadata and
// DescribeCluster, kept across a restart, different for another data
// directory.
func TestClusterIDPerDataDir(t *testing.T) {
	g := newGateway(t)
	id := clusterIDs(t, g)
	if len(id) != 22 || id != g.res.ClusterID() {
		t.Fatalf("cluster id %q, resolver's %q", id, g.res.ClusterID())
	}
	g.restart()
	if got := clusterIDs(t, g); got != id {
		t.Fatalf("after restart: %q, want %q", got, id)
	}
	if other := clusterIDs(t, newGateway(t)); other == id {
		t.Fatalf("two data directories report the same cluster id %q", id)
	}
}

// clusterIDs returns the cluster id after checking that Metadata and
// DescribeCluster agree on it.
func clusterIDs(t *testing.T, g *gateway) string {
	t.Helper()
	cl := g.client()
	md := request[*kmsg.MetadataResponse](t, cl, kmsg.NewPtrMetadataRequest())
	dc := request[*kmsg.DescribeClusterResponse](t, cl, kmsg.NewPtrDescribeClusterRequest())
	if md.ClusterID == nil || *md.ClusterID != dc.ClusterID {
		t.Fatalf("Metadata cluster id %v, DescribeCluster %q", md.ClusterID, dc.ClusterID)
	}
	return dc.ClusterID
}

// __consumer_offsets and __transaction_state are listed as internal, with
// one always-empty partition (group offsets and transaction state live in
// the offset store), by every kind of Metadata request; asking for them never
// auto-creates them; producing to them is refused as Kafka refuses appends
// to internal topics.
func TestInternalTopicsReserved(t *testing.T) {
	g := newGateway(t)
	cl := g.client()
	for _, name := range []string{resolver.OffsetsTopic, "__transaction_state"} {
		all := request[*kmsg.MetadataResponse](t, cl, kmsg.NewPtrMetadataRequest())
		i := slices.IndexFunc(all.Topics, func(mt kmsg.MetadataResponseTopic) bool { return mt.Topic != nil && *mt.Topic == name })
		if i < 0 {
			t.Fatalf("%s not among all topics: %+v", name, all.Topics)
		}
		checkInternal := func(how string, mt kmsg.MetadataResponseTopic) {
			t.Helper()
			if mt.ErrorCode != 0 || !mt.IsInternal || len(mt.Partitions) != 1 || mt.TopicID == ([16]byte{}) || mt.Topic == nil || *mt.Topic != name {
				t.Fatalf("%s %s: %+v", name, how, mt)
			}
		}
		checkInternal("all topics", all.Topics[i])

		byName := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		byName.Topics, byName.AllowAutoTopicCreation = append(byName.Topics, rt), true
		checkInternal("by name, auto-create allowed", request[*kmsg.MetadataResponse](t, cl, byName).Topics[0])

		byID := kmsg.NewPtrMetadataRequest()
		rt = kmsg.NewMetadataRequestTopic()
		rt.TopicID = all.Topics[i].TopicID
		byID.Topics = append(byID.Topics, rt)
		checkInternal("by id", request[*kmsg.MetadataResponse](t, cl, byID).Topics[0])

		if p := produceRaw(t, cl, name, makeBatch(batchSpec{records: 1, pid: -1})); p.ErrorCode != kerr.InvalidTopicException.Code {
			t.Fatalf("produce to %s: error %v, want INVALID_TOPIC_EXCEPTION", name, kerr.ErrorForCode(p.ErrorCode))
		}
		if _, ok := g.res.Topic(name); ok {
			t.Fatalf("%s was created as an ordinary topic", name)
		}
		create := kmsg.NewPtrCreateTopicsRequest()
		ct := kmsg.NewCreateTopicsRequestTopic()
		ct.Topic, ct.NumPartitions, ct.ReplicationFactor = name, 1, 1
		create.Topics = append(create.Topics, ct)
		if code := request[*kmsg.CreateTopicsResponse](t, cl, create).Topics[0].ErrorCode; code != kerr.TopicAlreadyExists.Code {
			t.Fatalf("create %s: %v", name, kerr.ErrorForCode(code))
		}
	}
}

// franz-go's regex consumption skips internal topics: with ".*" it logs
// __consumer_offsets and __transaction_state among the skipped internal
// topics and consumes the ordinary topic.
func TestRegexConsumerSkipsOffsetsTopic(t *testing.T) {
	g := newGateway(t)
	g.createTopic("regex-plain", 1)
	produceRaw(t, g.client(), "regex-plain", makeBatch(batchSpec{records: 1, pid: -1}))

	logs := &regexLog{}
	cl := g.client(kgo.ConsumeTopics(".*"), kgo.ConsumeRegex(), kgo.WithLogger(logs),
		kgo.MetadataMinAge(100*time.Millisecond), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx := testCtx(t)
	for got := 0; got == 0; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("no record from regex-plain: %v", fs.Errors())
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Topic != "regex-plain" {
				t.Fatalf("consumed from %s", r.Topic)
			}
			got++
		})
	}
	for _, name := range []string{resolver.OffsetsTopic, "__transaction_state"} {
		if !slices.Contains(logs.skippedInternal(), name) {
			t.Fatalf("skipped internal topics %v lack %s", logs.skippedInternal(), name)
		}
		if slices.Contains(cl.GetConsumeTopics(), name) {
			t.Fatalf("consuming %v", cl.GetConsumeTopics())
		}
	}
}

// regexLog records the internal topics franz-go's regex evaluation skipped.
type regexLog struct {
	mu       sync.Mutex
	internal []string
}

func (*regexLog) Level() kgo.LogLevel { return kgo.LogLevelInfo }

func (l *regexLog) Log(_ kgo.LogLevel, msg string, keyvals ...any) {
	if msg != "consumer regular expressions evaluated on new topics" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 0; i+1 < len(keyvals); i += 2 {
		if keyvals[i] == "skipped_internal" {
			if s, ok := keyvals[i+1].([]string); ok {
				l.internal = append(l.internal, s...)
			}
		}
	}
}

func (l *regexLog) skippedInternal() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.internal)
}
