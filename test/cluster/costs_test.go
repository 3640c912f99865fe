package cluster

import (
	"bufio"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkClusterCosts measures what cluster mode asks of etcd and the
// object store under a steady load, to check the cost model of
// docs/DESIGN.md ("Cluster mode: what it costs"): 3 nodes, a topic of 6
// partitions, 4 producers sending a record every 2 ms each (acks=all, no
// linger), for 70 s, so that every partition's 30 s merges and 10 s state
// exports happen about twice. It reports, per second and summed over the
// nodes, the counters each node exports (kgateway_cluster_*_requests_total)
// beside the group commits it made.
//
//	go test -run '^$' -bench ClusterCosts -benchtime 1x ./test/cluster/
func BenchmarkClusterCosts(b *testing.B) {
	for range b.N {
		c := StartCluster(b, 3)
		const topic, n = "costs", 6
		c.CreateTopic(topic, n)
		prod := c.StartProducers(topic, 4, "c", 2*time.Millisecond, nil)
		prod.Book.WaitAcked(b, 200, 60*time.Second)
		before := c.requests(b)
		acked0, start := prod.Book.Acked(), time.Now()
		time.Sleep(70 * time.Second) // the measurement: a steady load for a fixed time
		after := c.requests(b)
		secs, acked := time.Since(start).Seconds(), prod.Book.Acked()-acked0
		prod.Stop(b)
		var names []string
		for k := range after {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			b.ReportMetric((after[k]-before[k])/secs, k+"/s")
		}
		b.ReportMetric(float64(acked)/secs, "acked-records/s")
	}
}

// requests sums every node's cluster request counters and group commits
// (the count of kgateway_cluster_commit_put_seconds).
func (c *Cluster) requests(t testing.TB) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, nd := range c.nodes {
		resp, err := http.Get("http://" + nd.metrics + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			var key string
			switch {
			case strings.HasPrefix(line, "kgateway_cluster_etcd_requests_total{kind="):
				key = "etcd-" + strings.Trim(strings.TrimPrefix(strings.Fields(line)[0], "kgateway_cluster_etcd_requests_total{kind="), `"}`)
			case strings.HasPrefix(line, "kgateway_cluster_object_requests_total{kind="):
				key = "object-" + strings.Trim(strings.TrimPrefix(strings.Fields(line)[0], "kgateway_cluster_object_requests_total{kind="), `"}`)
			case strings.HasPrefix(line, "kgateway_cluster_commit_put_seconds_count"):
				key = "commits"
			default:
				continue
			}
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", nd.metrics, line, err)
			}
			out[key] += v
		}
		resp.Body.Close()
	}
	if len(out) == 0 {
		t.Fatal("no cluster request counters on any node's /metrics")
	}
	return out
}
