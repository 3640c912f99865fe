package resolver

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/kgateway/kgateway/storage"
)

// Read-flow transcripts (github.com/cockroachdb/datadriven; doc.go "Read
// flow"). Each file in testdata/transcripts is one scenario on a fresh
// resolver over a real store, with topic t of one partition. Run with
// -rewrite to regenerate the expected outputs, then review the diff.
// Commands:
//
//	produce records=N [count=K]   K batches of N records; prints base offsets
//	fetch offset=N [max-bytes=N] [min-one=false] [isolation=committed]
//	                              the bounds, then each served batch
//	roll                          seals partition 0's open ledger
//	delete-records offset=N       moves the log start (and removes whole ledgers below it)
//	write-invalid                 writes an entry behind the resolver's back whose
//	                              batch disagrees with the index on its record count
//	reopen                        closes and reopens store and resolver
//	delete-topic, create-topic    delete t, create it again
func TestReadFlowTranscripts(t *testing.T) {
	datadriven.Walk(t, "testdata/transcripts", func(t *testing.T, path string) {
		g := newGateway(t, Config{})
		g.create("t", 1, nil)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := runReadFlow(t, g, d)
			switch {
			case err != nil:
				out = append(out, "error: "+errName(err))
			case len(out) == 0:
				out = []string{"ok"}
			}
			return strings.Join(out, "\n") + "\n"
		})
	})
}

func runReadFlow(t *testing.T, g *gateway, d *datadriven.TestData) ([]string, error) {
	switch d.Cmd {
	case "produce":
		var records, count = 1, 1
		d.MaybeScanArgs(t, "records", &records)
		d.MaybeScanArgs(t, "count", &count)
		var out []string
		for range count {
			res, err := g.r.Produce("t", 0, plain(records, 1).encode())
			if err != nil {
				return out, err
			}
			out = append(out, fmt.Sprintf("base=%d", res.BaseOffset))
		}
		return out, nil
	case "fetch":
		return fetchTranscript(t, g, d)
	case "roll":
		_, err := mustTopic(t, g.r, "t").parts[0].mu.ml.Roll()
		return nil, err
	case "delete-records":
		var off int64
		d.ScanArgs(t, "offset", &off)
		start, err := g.r.DeleteRecords("t", 0, Offset(off))
		if err != nil {
			return nil, err
		}
		return []string{fmt.Sprintf("log-start=%d", start)}, nil
	case "write-invalid":
		return nil, writeInvalid(t, g)
	case "reopen":
		g.reopen()
	case "delete-topic":
		return nil, g.r.DeleteTopic("t")
	case "create-topic":
		g.create("t", 1, nil)
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	return nil, nil
}

// fetchTranscript prints a fetch's bounds, then each batch it serves (its
// base offset and record count).
func fetchTranscript(t *testing.T, g *gateway, d *datadriven.TestData) ([]string, error) {
	var (
		off      int64
		maxBytes = 1 << 20
		minOne   = true
	)
	d.ScanArgs(t, "offset", &off)
	d.MaybeScanArgs(t, "max-bytes", &maxBytes)
	d.MaybeScanArgs(t, "min-one", &minOne)
	res, err := g.r.Fetch("t", 0, Offset(off), maxBytes, minOne, ReadUncommitted)
	out := []string{fmt.Sprintf("hwm=%d lso=%d log-start=%d", res.HighWatermark, res.LastStable, res.LogStart)}
	for _, b := range res.Batches {
		h := decodeHeader(b)
		out = append(out, fmt.Sprintf("batch base=%d records=%d", h.BaseOffset, h.Records))
	}
	return out, err
}

// writeInvalid appends, straight to storage, a well-framed entry of two
// records whose batch holds one: step 5 catches it (it does not recompute
// a batch's CRC, which Produce checked and the storage frame covers).
func writeInvalid(t *testing.T, g *gateway) error {
	log := mustTopic(t, g.r, "t").parts[0].log
	_, err := g.store.Append(log, 2, plain(1, 1).encode(), storage.AppendOptions{Stamp: func(p []byte, o storage.Offset) int64 {
		setBaseOffset(p, o)
		return 1
	}})
	return err
}

// errName names a resolver error by its sentinel.
func errName(err error) string {
	for _, s := range []struct {
		name string
		err  error
	}{
		{"offset-out-of-range", ErrOffsetOutOfRange}, {"unknown-topic", ErrUnknownTopic},
		{"storage", ErrStorage},
	} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return err.Error()
}
