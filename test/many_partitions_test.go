package test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A producer that batches over many partitions sends requests whose
// partitions' batches are slices of one frame: the store keeps them
// uncopied, charging the frame once (storage C5), and derives each frame
// CRC from the batch CRC the resolver verified. With the default tail
// cache the first reads come from those shared frames; with one too small
// for a frame every read goes to the files and checks the derived CRCs;
// after a restart recovery and every read check them again, and so does
// verify. Every record must come back once, whole, in order, at dense
// offsets.
func TestManyPartitionRequests(t *testing.T) {
	for _, budget := range []int64{storage.DefaultTailCacheBytes, 64 << 10} {
		t.Run(fmt.Sprintf("tail-cache-%d", budget), func(t *testing.T) { testManyPartitionRequests(t, budget) })
	}
}

func testManyPartitionRequests(t *testing.T, budget int64) {
	const parts, perPart = 8, 300
	g := newGatewayWith(t, gatewayOptions{tailCacheBytes: budget})
	g.createTopic("many", parts)
	cl := g.client(kgo.ProducerLinger(20*time.Millisecond), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	want := make(map[int32][][]byte, parts)
	var rs []*kgo.Record
	for i := range perPart {
		for p := range int32(parts) {
			v := bytes.Repeat(fmt.Appendf(nil, "p%d-r%d;", p, i), 1+(i*int(p+1))%40)
			want[p] = append(want[p], v)
			rs = append(rs, &kgo.Record{Topic: "many", Partition: p, Value: v})
		}
	}
	if err := cl.ProduceSync(testCtx(t), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		got := map[int32][]*kgo.Record{}
		for _, r := range consumeN(t, g, "many", parts*perPart) {
			got[r.Partition] = append(got[r.Partition], r)
		}
		for p := range int32(parts) {
			if len(got[p]) != perPart {
				t.Fatalf("%s: partition %d has %d records, want %d", when, p, len(got[p]), perPart)
			}
			for i, r := range got[p] {
				if r.Offset != int64(i) || !bytes.Equal(r.Value, want[p][i]) {
					t.Fatalf("%s: partition %d record %d at offset %d: %q, want %q", when, p, i, r.Offset, r.Value, want[p][i])
				}
			}
		}
	}
	check("before restart")
	if got := g.srv.Store().TailCacheBytes(); got > budget || (budget == storage.DefaultTailCacheBytes && got == 0) {
		t.Fatalf("tail cache charges %d bytes, budget %d", got, budget)
	}
	g.restart()
	check("after restart")
	g.stop()
	verifyDataDir(t, g.dir)
}

// verifyDataDir runs storage's verify (what `kgateway verify` runs) over
// a stopped gateway's data directory and fails on any problem.
func verifyDataDir(t *testing.T, dir string) {
	t.Helper()
	ro, err := storage.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	rep, err := ro.Verify(nil)
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("verify: %v, problems %v", err, rep.Problems)
	}
}
