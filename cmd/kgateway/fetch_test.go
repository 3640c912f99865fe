package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetch.max.bytes reaches the server: a fetch asking for everything gets
// at most that many record bytes.
func TestFetchMaxBytesConfig(t *testing.T) {
	g := startTestWith(t, t.TempDir(), func(c *Config) { c.FetchMaxBytes = 2048 })
	cl := newClient(t, g)
	value := strings.Repeat("x", 900)
	produce(t, cl, "capped", value, value, value, value, value)
	tds, err := kadm.NewClient(cl).ListTopics(testCtx(t), "capped")
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.SessionEpoch, req.MaxBytes = 12, -1, math.MaxInt32
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = "capped", tds["capped"].ID // the client sends v13: topic ids
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = math.MaxInt32
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	raw, err := cl.Request(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	p := raw.(*kmsg.FetchResponse).Topics[0].Partitions[0]
	if n := len(p.RecordBatches); p.ErrorCode != 0 || n == 0 || n > 2048 {
		t.Fatalf("error %d, %d record bytes; want 1..2048", p.ErrorCode, n)
	}
}

// Batches read from segment files (no tail cache) reach the consumer
// byte for byte, with and without fetch.sendfile.enable (franz-go checks
// every batch's CRC), and a byte flipped in a segment file fails the
// partition with KAFKA_STORAGE_ERROR in both modes: with sendfile too the
// frame's CRC is checked before anything is sent.
func TestFetchFromFilesSendfile(t *testing.T) {
	for _, sendfile := range []bool{false, true} {
		dir := t.TempDir()
		g := startTestWith(t, dir, func(c *Config) { c.TailCacheBytes, c.FetchSendfile = 0, sendfile })
		cl := newClient(t, g)
		var values []string
		for i := 0; i < 6; i++ {
			n := 100 // small batches go from memory, big ones (>= 32 KiB) by sendfile
			if i%2 == 1 {
				n = 40000 + i
			}
			values = append(values, strings.Repeat(string(rune('a'+i)), n))
		}
		produce(t, cl, "cold", values...)
		cons := newClient(t, g, kgo.ConsumeTopics("cold"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		var got []string
		for len(got) < len(values) {
			fs := cons.PollFetches(testCtx(t))
			if err := fs.Err0(); err != nil {
				t.Fatalf("sendfile %v: %v", sendfile, err)
			}
			fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		}
		for i := range values {
			if got[i] != values[i] {
				t.Fatalf("sendfile %v: record %d differs (%d bytes, want %d)", sendfile, i, len(got[i]), len(values[i]))
			}
		}

		// Flip a byte inside the value of the last record, a big one.
		segs, _ := filepath.Glob(filepath.Join(dir, "segments", "*.seg")) // not the journal's files
		var seg string
		var size int64
		for _, s := range segs {
			if st, err := os.Stat(s); err == nil && st.Size() > size {
				seg, size = s, st.Size()
			}
		}
		f, err := os.OpenFile(seg, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 1)
		at := size - 20000 // the segment ends with its 40 KB batch
		if _, err := f.ReadAt(b, at); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 0xff
		if _, err := f.WriteAt(b, at); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if code := fetchCode(t, cl, "cold", 5); code != kerr.KafkaStorageError.Code {
			t.Fatalf("sendfile %v: fetch of a corrupt batch answered error %d, want KAFKA_STORAGE_ERROR", sendfile, code)
		}
	}
}

// fetchCode is the error code of a sessionless fetch of topic's partition
// 0 at offset.
func fetchCode(t *testing.T, cl *kgo.Client, topic string, offset int64) int16 {
	t.Helper()
	tds, err := kadm.NewClient(cl).ListTopics(testCtx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.SessionEpoch, req.MaxBytes = 13, -1, math.MaxInt32
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, tds[topic].ID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes, rp.FetchOffset = math.MaxInt32, offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	raw, err := cl.Request(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode
}
