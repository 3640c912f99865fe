package diskless

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgateway/kgateway/test/etcdserver"
	"github.com/kgateway/kgateway/test/s3server"
	clientv3 "go.etcd.io/etcd/client/v3"
	"gocloud.dev/blob"
)

// BenchmarkCommit measures a commit's latency, the latency of an
// acknowledgement (acknowledgement after PUT and commit: one PUT and one transaction), on a file bucket and
// on a local S3 server, for 1 and 16 partitions of one small batch each.
func BenchmarkCommit(b *testing.B) {
	for _, store := range []string{"file", "s3"} {
		for _, parts := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/partitions=%d", store, parts), func(b *testing.B) {
				url := ""
				if store == "s3" {
					url = s3server.Start(b).URL
				}
				e := newEnv(b, url)
				n := e.node("a")
				var pkeys []string
				for i := range parts {
					pkeys = append(pkeys, fmt.Sprintf("t-%d", i))
				}
				owns := n.acquire(b, pkeys...)
				lat := make([]time.Duration, 0, b.N)
				var next int64
				b.ResetTimer()
				for range b.N {
					var bs []Batch
					for _, p := range pkeys {
						bs = append(bs, batch(p, next, 1))
					}
					t0 := time.Now()
					allOK(b, n.c.Commit(ctxT(b), bs, owns))
					lat = append(lat, time.Since(t0))
					next++
				}
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
	}
}

// BenchmarkReadBelowCache compares a read of one published range below a
// node's caches under pins (ReadPinned: a pin transaction, the read, an
// unpin transaction) and under the node's floor (ReadFloored: one
// read-only transaction, the read), against the real etcd server binary
// (one member, fsyncing) and a file bucket, with 1 and 8 readers at
// once. The two take turns, b.N/8 reads at a time, so that both meet
// the same load; it reports each one's p50 and p99 (pinned-, floored-).
//
//	go test -run '^$' -bench ReadBelowCache -benchtime 2000x ./cluster/diskless/
func BenchmarkReadBelowCache(b *testing.B) {
	members := etcdserver.Start(b, 1)
	client := func(t testing.TB) *clientv3.Client { return members.Client(t) }
	for _, readers := range []int{1, 8} {
		b.Run(fmt.Sprintf("readers=%d", readers), func(b *testing.B) {
			e := newEnvOn(b, "", client, nil)
			w, r := e.node("w"), e.node("r")
			pkey := fmt.Sprintf("%s-%d-%d", b.Name(), b.N, time.Now().UnixNano())
			owns := w.acquire(b, pkey)
			commitRounds(b, w.c, owns, []string{pkey}, 8)
			_, _, ranges, err := w.c.Log(ctxT(b), pkey)
			if err != nil {
				b.Fatal(err)
			}
			lease := r.sess.Lease()
			modes := []struct {
				name string
				read func(Range) error
				lat  []time.Duration
			}{
				{name: "pinned-", read: func(rg Range) error { _, err := r.c.ReadPinned(ctxT(b), lease, rg); return err }},
				{name: "floored-", read: func(rg Range) error { _, err := r.c.ReadFloored(ctxT(b), lease, rg); return err }},
			}
			const turns = 8
			b.ResetTimer()
			left := b.N
			for turn := range turns {
				n := left / (turns - turn)
				left -= n
				for i := range modes {
					m := &modes[(turn+i)%len(modes)]
					var mu sync.Mutex
					var wg sync.WaitGroup
					var next atomic.Int64
					for range readers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for k := next.Add(1); k <= int64(n); k = next.Add(1) {
								t0 := time.Now()
								if err := m.read(ranges[int(k)%len(ranges)]); err != nil {
									b.Error(err)
									return
								}
								d := time.Since(t0)
								mu.Lock()
								m.lat = append(m.lat, d)
								mu.Unlock()
							}
						}()
					}
					wg.Wait()
				}
			}
			b.StopTimer()
			for _, m := range modes {
				if len(m.lat) == 0 {
					continue
				}
				slices.Sort(m.lat)
				b.ReportMetric(float64(m.lat[len(m.lat)/2].Microseconds()), m.name+"p50-µs")
				b.ReportMetric(float64(m.lat[len(m.lat)*99/100].Microseconds()), m.name+"p99-µs")
			}
		})
	}
}

// BenchmarkCommitFloor measures what one acknowledgement cannot wait
// less than (acknowledgement after PUT and commit): one object PUT of a
// group commit's size (3 KiB) and one etcd transaction of a commit's
// shape (a comparison and two puts), one after the other on a quiet
// committer, against the S3 server (versitygw on loopback) and the
// embedded etcd the cluster benchmarks use; then a whole Commit of one
// partition, for comparison. It reports each one's p50 and p99.
//
//	go test -run '^$' -bench CommitFloor -benchtime 500x ./cluster/diskless/
func BenchmarkCommitFloor(b *testing.B) {
	e := newEnv(b, s3server.Start(b).URL)
	n := e.node("a")
	owns := n.acquire(b, "t-0")
	data := make([]byte, 3<<10)
	var put, txn, commit []time.Duration
	b.ResetTimer()
	for i := range b.N {
		ctx := ctxT(b)
		t0 := time.Now()
		if err := e.bucket.WriteAll(ctx, fmt.Sprintf("floor/%d", i), data, &blob.WriterOptions{ContentType: "application/octet-stream"}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		k := prefix + "floor/" + fmt.Sprint(i%16)
		if _, err := e.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(k), ">", -1)).
			Then(clientv3.OpPut(k, "x"), clientv3.OpPut(k+"/end", fmt.Sprint(i))).Commit(); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		allOK(b, n.c.Commit(ctx, []Batch{batch("t-0", int64(i), 1)}, owns))
		put, txn, commit = append(put, t1.Sub(t0)), append(txn, t2.Sub(t1)), append(commit, time.Since(t2))
	}
	b.StopTimer()
	for _, m := range []struct {
		name string
		lat  []time.Duration
	}{{"put", put}, {"txn", txn}, {"commit", commit}} {
		slices.Sort(m.lat)
		b.ReportMetric(float64(m.lat[len(m.lat)/2].Microseconds())/1000, m.name+"-p50-ms")
		b.ReportMetric(float64(m.lat[len(m.lat)*99/100].Microseconds())/1000, m.name+"-p99-ms")
	}
}
