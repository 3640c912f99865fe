package diskless

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kgateway/kgateway/test/etcdserver"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// sizedBatch is batch padded to size bytes.
func sizedBatch(pkey string, base int64, n int32, size int) Batch {
	b := batch(pkey, base, n)
	if pad := size - len(b.Data); pad > 0 {
		b.Data = append(b.Data, bytes.Repeat([]byte{byte(base)}, pad)...)
		binary.BigEndian.PutUint32(b.Data[8:], uint32(len(b.Data)-batchLenPrefix))
	}
	return b
}

// BenchmarkReadOneBatch measures a read below a node's caches of the
// one batch at an offset in the middle of a large published range, as
// the node's read flow makes it (cluster/node published: the parts of
// the range that hold the offset, Range.Parts, read under the node's
// floor, ReadFloored), against the real etcd server binary (one
// member) and a file bucket. The range is one commit's 8 MiB of one
// partition (commit=8MiB: 512 batches of 16 KiB, the storage group
// commit's MaxGroupBytes) or a merge of 30 commits of 896 KiB
// (merged=26MiB). It reports the bytes fetched per read (fetched-B/op,
// what the reads returned: ReadRange fetches exactly a part's bytes)
// and the reads' p50 and p99.
//
//	go test -run '^$' -bench ReadOneBatch -benchtime 100x ./cluster/diskless/
func BenchmarkReadOneBatch(b *testing.B) {
	members := etcdserver.Start(b, 1)
	client := func(t testing.TB) *clientv3.Client { return members.Client(t) }
	const batchBytes = 16 << 10
	for _, kind := range []struct {
		name             string
		commits, per     int
		merge            bool
		wantRangeAtLeast int64
	}{
		{name: "commit=8MiB", commits: 1, per: 512, wantRangeAtLeast: 8 << 20},
		{name: "merged=26MiB", commits: 30, per: 56, merge: true, wantRangeAtLeast: 26 << 20},
	} {
		b.Run(kind.name, func(b *testing.B) {
			e := newEnvOn(b, "", client, nil)
			w, r := e.node("w"), e.node("r")
			pkey := fmt.Sprintf("%s-%d-%d", b.Name(), b.N, time.Now().UnixNano())
			owns := w.acquire(b, pkey)
			next := int64(0)
			for range kind.commits {
				var bs []Batch
				for range kind.per {
					bs = append(bs, sizedBatch(pkey, next, 4, batchBytes))
					next += 4
				}
				allOK(b, w.c.Commit(ctxT(b), bs, owns))
			}
			if kind.merge {
				if _, err := w.c.Merge(ctxT(b), owns[pkey], pkey); err != nil {
					b.Fatal(err)
				}
			}
			_, _, ranges, err := r.c.Log(ctxT(b), pkey)
			if err != nil || len(ranges) != 1 || ranges[0].Len < kind.wantRangeAtLeast {
				b.Fatalf("log: %d ranges (%v), want one of at least %d bytes", len(ranges), err, kind.wantRangeAtLeast)
			}
			mid := next / 2
			var rs []Range
			for _, p := range ranges[0].Parts() {
				if p.Base <= mid && mid < p.End {
					rs = append(rs, p)
				}
			}
			lease := r.sess.Lease()
			lat := make([]time.Duration, 0, b.N)
			fetched := int64(0)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				data, err := r.c.ReadFloored(ctxT(b), lease, rs...)
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				for _, d := range data {
					fetched += int64(len(d))
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(fetched)/float64(b.N), "fetched-B/op")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkCommitLarge measures the latency of a commit of one
// partition's 8 MiB (512 batches of 16 KiB, the storage group commit's
// MaxGroupBytes) on a file bucket and the embedded etcd: with commit
// ranges in pieces its range is cut into 8 pieces whose SHA-256s are
// computed while the PUT runs.
//
//	go test -run '^$' -bench CommitLarge -benchtime 20x ./cluster/diskless/
func BenchmarkCommitLarge(b *testing.B) {
	e := newEnv(b, "")
	n := e.node("a")
	owns := n.acquire(b, "p")
	lat := make([]time.Duration, 0, b.N)
	next := int64(0)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		var bs []Batch
		for range 512 {
			bs = append(bs, sizedBatch("p", next, 4, 16<<10))
			next += 4
		}
		b.StartTimer()
		t0 := time.Now()
		allOK(b, n.c.Commit(ctxT(b), bs, owns))
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds()), "p90-µs")
}
