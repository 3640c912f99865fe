package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkClusterFailover measures failover time: from the moment a
// partition's leader is killed (kill -9: its partitions wait for its
// session to end, cluster.session.timeout.ms, 2 s here) or stopped
// (SIGTERM: it hands its partitions over), to the first acknowledged
// produce to that partition, which a new leader serves. The client
// retries as fast as it may; each iteration moves one partition that
// holds data.
//
//	go test -run '^$' -bench ClusterFailover -benchtime 3x ./test/cluster/
func BenchmarkClusterFailover(b *testing.B) {
	for _, mode := range []string{"kill", "stop"} {
		b.Run(mode, func(b *testing.B) {
			c := StartCluster(b, 3)
			cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic("fo"),
				kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MetadataMinAge(10*time.Millisecond),
				kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }),
				kgo.RetryTimeout(time.Minute))
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			adm := kadm.NewClient(cl)
			if _, err := adm.CreateTopic(ctx, 6, 1, nil, "fo"); err != nil {
				b.Fatal(err)
			}
			var total, worst time.Duration
			for range b.N {
				b.StopTimer()
				for range 100 { // data to rebuild
					if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: make([]byte, 1024)}).FirstErr(); err != nil {
						b.Fatal(err)
					}
				}
				leader := leaderOf(b, ctx, adm, "fo", 0)
				b.StartTimer()
				start := time.Now()
				if mode == "kill" {
					c.Kill(leader)
				} else {
					c.Stop(leader)
				}
				if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte("after")}).FirstErr(); err != nil {
					b.Fatal(err)
				}
				d := time.Since(start)
				b.StopTimer()
				total, worst = total+d, max(worst, d)
				c.Restart(leader)
				c.WaitRegistered(leader)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "failover-ms")
			b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
		})
	}
}

// leaderOf is the node index leading topic/p now.
func leaderOf(b *testing.B, ctx context.Context, adm *kadm.Client, topic string, p int32) int {
	b.Helper()
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			if pd, ok := md.Topics[topic].Partitions[p]; ok && pd.Err == nil && pd.Leader >= 0 {
				return int(pd.Leader)
			}
		}
		if ctx.Err() != nil {
			b.Fatalf("no leader for %s/%d: %v", topic, p, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
