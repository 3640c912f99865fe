package diskless

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/owner"
	"github.com/kgateway/kgateway/test/etcdserver"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// BenchmarkEtcdCapacity measures how much of this design's load one etcd
// carries: committers (nodes) each commit back to back, every commit one
// fenced transaction publishing one range and one end per partition of
// its own (acknowledgement after PUT and commit, ranges tiling the log), over a file bucket so that the object store is not
// the limit, against the real etcd server binary (one member, fsyncing,
// as a production etcd on this machine's disk). It reports etcd
// transactions per second, the keys they put per second, and a commit's
// p50 and p99, for 1 to 64 committers of 1 and 16 partitions each.
//
//	go test -run '^$' -bench EtcdCapacity -benchtime 2000x ./cluster/diskless/
func BenchmarkEtcdCapacity(b *testing.B) {
	members := etcdserver.Start(b, 1)
	client := func(t testing.TB) *clientv3.Client { return members.Client(t) }
	for _, parts := range []int{1, 16} {
		for _, committers := range []int{1, 4, 16, 64} {
			b.Run(fmt.Sprintf("partitions=%d/committers=%d", parts, committers), func(b *testing.B) {
				e := newEnvOn(b, "", client, nil)
				type committer struct {
					n     *node
					pkeys []string
					owns  map[string]owner.Ownership
				}
				cs := make([]*committer, committers)
				for i := range cs {
					c := &committer{n: e.node(fmt.Sprintf("c%d", i))}
					for p := range parts {
						c.pkeys = append(c.pkeys, fmt.Sprintf("%s-%d-c%d-%d", b.Name(), b.N, i, p))
					}
					c.owns = c.n.acquire(b, c.pkeys...)
					cs[i] = c
				}
				var next atomic.Int64
				var mu sync.Mutex
				var lat []time.Duration
				var wg sync.WaitGroup
				b.ResetTimer()
				start := time.Now()
				for _, c := range cs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var base int64
						var mine []time.Duration
						for next.Add(1) <= int64(b.N) {
							bs := make([]Batch, 0, len(c.pkeys))
							for _, p := range c.pkeys {
								bs = append(bs, batch(p, base, 1))
							}
							t0 := time.Now()
							allOK(b, c.n.c.Commit(ctxT(b), bs, c.owns))
							mine = append(mine, time.Since(t0))
							base++
						}
						mu.Lock()
						lat = append(lat, mine...)
						mu.Unlock()
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				slices.Sort(lat)
				txns := float64(b.N) * float64((parts+perTxn-1)/perTxn)
				b.ReportMetric(txns/elapsed.Seconds(), "txn/s")
				// A commit puts a range record and an end per partition,
				// and one object reference count.
				b.ReportMetric(float64(b.N)*float64(2*parts+1)/elapsed.Seconds(), "puts/s")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
	}
}

// perTxn is how many partitions one commit transaction holds at the
// default MaxTxnOps (acknowledgement after PUT and commit: 41).
const perTxn = 41

// BenchmarkEtcdKeys measures what a partition costs etcd at rest: it
// publishes one range for each of b.N partitions (so each has its start,
// end, one range record and its object's count, as a merged partition
// has) and reports etcd's database bytes per partition, from which the
// partitions one etcd holds within its quota follow.
//
//	go test -run '^$' -bench EtcdKeys -benchtime 20000x ./cluster/diskless/
func BenchmarkEtcdKeys(b *testing.B) {
	members := etcdserver.Start(b, 1)
	client := func(t testing.TB) *clientv3.Client { return members.Client(t) }
	e := newEnvOn(b, "", client, nil)
	n := e.node("keys")
	before := dbSize(b, e)
	const perCommit = 40 // one transaction's worth (perTxn)
	for i := 0; i < b.N; i += perCommit {
		var pkeys []string
		for p := i; p < min(i+perCommit, b.N); p++ {
			pkeys = append(pkeys, fmt.Sprintf("%x-%d", p, b.N))
		}
		owns := n.acquire(b, pkeys...)
		var bs []Batch
		for _, p := range pkeys {
			bs = append(bs, batch(p, 0, 1))
		}
		allOK(b, n.c.Commit(ctxT(b), bs, owns))
	}
	b.StopTimer()
	after := dbSize(b, e)
	b.ReportMetric(float64(after-before)/float64(b.N), "db-bytes/partition")
	resp, err := e.cli.Get(ctxT(b), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(resp.Count)/float64(b.N), "keys/partition")
}

// dbSize is etcd's database size in use.
func dbSize(b *testing.B, e *env) int64 {
	st, err := e.cli.Status(ctxT(b), e.cli.Endpoints()[0])
	if err != nil {
		b.Fatal(err)
	}
	return st.DbSizeInUse
}
