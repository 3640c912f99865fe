package diskless

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kgateway/kgateway/test/s3server"
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
