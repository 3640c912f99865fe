package test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// kcat with -z compresses (librdkafka does only when the broker's minimum
// Produce version is 0): the stored batches carry the codec asked for, and
// the records read back.
func TestKcatCompression(t *testing.T) {
	path, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat not installed (make deps)")
	}
	g := newGateway(t)
	codecs := []struct {
		name string
		id   int16
	}{{"gzip", 1}, {"snappy", 2}, {"lz4", 3}, {"zstd", 4}}
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			topic := "kz-" + c.name
			g.createTopic(topic, 1)
			var in strings.Builder
			for i := 0; i < 50; i++ {
				fmt.Fprintf(&in, "record %d of a batch that compresses well, well, well\n", i)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
			defer cancel()
			cmd := exec.CommandContext(ctx, path, "-b", g.addr, "-P", "-t", topic, "-p", "0", "-z", c.name,
				"-X", "linger.ms=100")
			cmd.Stdin = strings.NewReader(in.String())
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("kcat -z %s: %v\n%s", c.name, err, errb.String())
			}
			var n int32
			for _, b := range batchesOf(t, fetchRaw(t, g.client(), topic, 0, 0).RecordBatches) {
				if codec := b.Attributes & 7; codec != c.id {
					t.Fatalf("batch at %d stored with codec %d, want %d (%s)", b.FirstOffset, codec, c.id, c.name)
				}
				n += b.NumRecords
			}
			if n != 50 {
				t.Fatalf("%d records stored, want 50", n)
			}
			got := consumeN(t, g, topic, 50)
			if string(got[49].Value) != "record 49 of a batch that compresses well, well, well" {
				t.Fatalf("record 49 reads back as %q", got[49].Value)
			}
		})
	}
}
