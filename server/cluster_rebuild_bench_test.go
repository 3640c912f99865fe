package server

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/etcdtest"
	"github.com/kgateway/kgateway/cluster/node"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// BenchmarkClusterRebuild measures the graceful failover of one
// partition holding 256 MiB, from its owner's Close to the first produce
// its new owner acknowledges: with the whole partition copied into the
// new owner's cache (cluster.cache.rebuild.bytes -1); with nothing
// copied and the producer state replayed from the published start (every
// byte read from the object store, the bounded rebuild); and with nothing
// copied after an exported producer state (only the log past it is
// replayed, periodic state export).
//
//	go test -run '^$' -bench ClusterRebuild -benchtime 1x ./server/
func BenchmarkClusterRebuild(b *testing.B) {
	for _, m := range []struct {
		name    string
		rebuild int64
		state   time.Duration
	}{{"whole-copy", -1, time.Hour}, {"tail/replay-all", 1, time.Hour}, {"tail/exported-state", 1, 50 * time.Millisecond}} {
		b.Run(m.name, func(b *testing.B) {
			var total time.Duration
			for range b.N {
				total += rebuildOnce(b, m.rebuild, m.state)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "failover-ms")
		})
	}
}

func rebuildOnce(b *testing.B, rebuild int64, state time.Duration) time.Duration {
	b.StopTimer()
	defer b.StartTimer()
	bucket := (&url.URL{Scheme: "file", Path: b.TempDir()}).String()
	etcd := etcdtest.Start(b)
	servers := map[int32]*Server{}
	var addrs []string
	for id := int32(1); id <= 2; id++ {
		s, err := Open(Config{DataDir: b.TempDir(), Listen: "127.0.0.1:0", ObjectStoreURL: bucket,
			Cluster: &node.Config{NodeID: id, Endpoints: []string{etcd.Endpoint()}, SessionTimeout: 2 * time.Second,
				Tick: 50 * time.Millisecond, CacheRebuildBytes: rebuild, StateInterval: state},
			Kafka: kafkaConfigFor(id)})
		if err != nil {
			b.Fatal(err)
		}
		go s.Serve()
		b.Cleanup(func() { s.Close() })
		servers[id] = s
		addrs = append(addrs, s.Addr().String())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic("r"),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.MetadataMinAge(10*time.Millisecond), kgo.RetryTimeout(time.Minute),
		kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "r"); err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 64<<10)
	const records = 4096 // 256 MiB
	for range records {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	if state < time.Minute {
		waitStateB(b, etcd, records)
	}
	md, err := adm.Metadata(ctx, "r")
	if err != nil {
		b.Fatal(err)
	}
	leader := md.Topics["r"].Partitions[0].Leader
	ends, err := adm.ListEndOffsets(ctx, "r")
	if o, _ := ends.Lookup("r", 0); err != nil || o.Offset != records {
		b.Fatalf("end offset %+v, %v; want %d", o, err, records)
	}
	b.StartTimer()
	start := time.Now()
	servers[leader].Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("after")}).FirstErr(); err != nil {
		b.Fatal(err)
	}
	d := time.Since(start)
	b.StopTimer()
	return d
}

func waitStateB(b *testing.B, etcd *etcdtest.Server, end int64) {
	cli := etcd.Client(b)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		resp, err := cli.Get(context.Background(), node.DefaultPrefix+"log/", clientv3.WithPrefix())
		if err != nil {
			b.Fatal(err)
		}
		for _, kv := range resp.Kvs {
			var rec struct{ Covered int64 }
			if strings.HasSuffix(string(kv.Key), "/state") && json.Unmarshal(kv.Value, &rec) == nil && rec.Covered >= end {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatal("no exported state covering the log")
}
