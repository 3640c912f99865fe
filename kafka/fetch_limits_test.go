package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceValue appends one batch of one record with value to
// topic/partition through a producer using codec.
func (g *sessionRig) produceValue(topic string, partition int32, value []byte, codec kgo.CompressionCodec) {
	g.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(g.s.Addr().String()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(codec))
	if err != nil {
		g.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	r := &kgo.Record{Topic: topic, Partition: partition, Value: value}
	if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		g.t.Fatal(err)
	}
}

// onlyPartition returns the response's single partition, failing when
// there is not exactly one.
func onlyPartition(t *testing.T, resp *kmsg.FetchResponse) kmsg.FetchResponseTopicPartition {
	t.Helper()
	var out []kmsg.FetchResponseTopicPartition
	for _, rt := range resp.Topics {
		out = append(out, rt.Partitions...)
	}
	if len(out) != 1 {
		t.Fatalf("%d partitions answered, want 1", len(out))
	}
	return out[0]
}

// batchesOf splits a partition's record bytes into batches.
func batchesOf(t *testing.T, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 12 {
			t.Fatalf("%d trailing bytes", len(b))
		}
		n := 12 + int(binary.BigEndian.Uint32(b[8:]))
		if n > len(b) {
			t.Fatalf("partial batch (%d of %d bytes)", len(b), n)
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

func baseOffset(b []byte) int64 { return int64(binary.BigEndian.Uint64(b)) }

// fetch.max.bytes caps a response whatever the request's MaxBytes, and
// a first batch larger than it is still returned whole (KIP-74).
func TestFetchMaxBytesCapsResponse(t *testing.T) {
	g := newSessionRig(t, Config{FetchMaxBytes: 4096}, map[string]int32{"m": 1, "big": 1})
	for range 8 {
		g.produceValue("m", 0, bytes.Repeat([]byte("x"), 1000), kgo.NoCompression())
	}
	g.produceValue("big", 0, bytes.Repeat([]byte("y"), 10000), kgo.NoCompression())
	for _, topic := range []string{"m", "big"} {
		req := fetchReq(0, -1, parts(topic, 1), nil)
		req.MaxBytes = math.MaxInt32
		req.Topics[0].Partitions[0].PartitionMaxBytes = math.MaxInt32
		p := onlyPartition(t, g.fetch(req))
		n := len(p.RecordBatches)
		switch bs := batchesOf(t, p.RecordBatches); {
		case p.ErrorCode != 0:
			t.Fatalf("%s: error %d", topic, p.ErrorCode)
		case topic == "m" && (n == 0 || n > 4096):
			t.Fatalf("m: %d record bytes in %d batches, want 1..4096", n, len(bs))
		case topic == "big" && (len(bs) != 1 || n < 10000):
			t.Fatalf("big: %d batches of %d bytes, want the whole first batch", len(bs), n)
		}
	}
}

// A partition listed many times in one request is read and answered
// once, with the last listing's fetch offset, at the first listing's
// place (Kafka keys the partitions in an insertion-ordered map).
func TestFetchDuplicatePartitionsServedOnce(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"d": 1, "e": 1})
	g.produceValue("d", 0, []byte("first"), kgo.NoCompression())
	g.produceValue("d", 0, []byte("second"), kgo.NoCompression())
	g.produceValue("e", 0, []byte("other"), kgo.NoCompression())
	var ps []fetchPart
	for range 15 {
		ps = append(ps, fetchPart{topic: "d"})
	}
	ps = append(ps, fetchPart{topic: "e"}, fetchPart{topic: "d", offset: 1})
	req := fetchReq(0, -1, ps, nil)
	req.MaxBytes = math.MaxInt32
	resp := g.fetch(req)
	var order []string
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			order = append(order, rt.Topic)
			bs := batchesOf(t, p.RecordBatches)
			if rt.Topic == "d" && (len(bs) != 1 || baseOffset(bs[0]) != 1) {
				t.Fatalf("d: %d batches from %d, want one from offset 1 (the last listing)", len(bs), baseOffset(bs[0]))
			}
		}
	}
	if len(order) != 2 || order[0] != "d" || order[1] != "e" {
		t.Fatalf("answered %v, want [d e]", order)
	}
}

// MinBytes above the response's byte budget is capped by it: a long
// poll whose MinBytes could never be answered returns what is there
// instead of waiting for all of MaxWait.
func TestFetchMinBytesCappedByMaxBytes(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"mb": 1})
	g.produceValue("mb", 0, bytes.Repeat([]byte("z"), 1000), kgo.NoCompression())
	req := fetchReq(0, -1, parts("mb", 1), nil)
	req.MaxBytes, req.MinBytes = 100, 1<<20
	req.MaxWaitMillis = int32(time.Hour / time.Millisecond) // never reached: the connection deadline is testDeadline
	p := onlyPartition(t, g.fetch(req))
	if p.ErrorCode != 0 || len(batchesOf(t, p.RecordBatches)) != 1 {
		t.Fatalf("error %d, %d record bytes", p.ErrorCode, len(p.RecordBatches))
	}
}

// Fetch v9 receives zstd batches as stored, as Kafka 4 serves them
// (down-conversion is gone, KIP-896: no UNSUPPORTED_COMPRESSION_TYPE
// below v10 any more), and so does v10.
func TestFetchZstdServedToV9(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"z": 1})
	g.produceValue("z", 0, []byte("plain"), kgo.NoCompression())
	g.produceValue("z", 0, bytes.Repeat([]byte("compressible "), 100), kgo.ZstdCompression())
	fetchAt := func(version int16, offset int64) kmsg.FetchResponseTopicPartition {
		req := fetchReq(0, -1, []fetchPart{{topic: "z", offset: offset}}, nil)
		req.SetVersion(version)
		return onlyPartition(t, g.fetch(req))
	}
	codec := func(b []byte) resolver.Codec { c, _ := resolver.BatchCodec(b); return c }

	p := fetchAt(9, 0)
	if bs := batchesOf(t, p.RecordBatches); p.ErrorCode != 0 || len(bs) != 2 || codec(bs[0]) != 0 || codec(bs[1]) != resolver.CodecZstd {
		t.Fatalf("v9 from 0: error %d, %d batches, want the uncompressed and the zstd one", p.ErrorCode, len(bs))
	}
	for _, v := range []int16{9, 10} {
		p = fetchAt(v, 1)
		if bs := batchesOf(t, p.RecordBatches); p.ErrorCode != 0 || len(bs) != 1 || codec(bs[0]) != resolver.CodecZstd {
			t.Fatalf("v%d at the zstd batch: error %d, %d batches, want the zstd batch", v, p.ErrorCode, len(bs))
		}
	}
}

// Fetch v9+ checks the client's current leader epoch as
// OffsetForLeaderEpoch does: a newer one is UNKNOWN_LEADER_EPOCH; -1 or
// ours is served. (Fetch reads any negative epoch as none, as Kafka does;
// OffsetForLeaderEpoch reads only -1 so, and an older one is fenced.)
func TestFetchChecksCurrentLeaderEpoch(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"le": 1})
	g.produceValue("le", 0, []byte("v"), kgo.NoCompression())
	fetchWith := func(req *kmsg.FetchRequest, epoch int32) kmsg.FetchResponseTopicPartition {
		req.Topics[0].Partitions[0].CurrentLeaderEpoch = epoch
		return onlyPartition(t, g.fetch(req))
	}
	for _, tc := range []struct {
		epoch int32
		code  int16
	}{{-1, 0}, {-2, 0}, {0, 0}, {1, kerr.UnknownLeaderEpoch.Code}} {
		p := fetchWith(fetchReq(0, -1, parts("le", 1), nil), tc.epoch)
		if p.ErrorCode != tc.code || (tc.code == 0) != (len(p.RecordBatches) > 0) {
			t.Fatalf("epoch %d: error %d with %d record bytes, want error %d", tc.epoch, p.ErrorCode, len(p.RecordBatches), tc.code)
		}
	}
	// A session remembers the epoch its client last sent.
	id := g.fetch(fetchReq(0, 0, parts("le", 1), nil)).SessionID
	if p := fetchWith(fetchReq(id, 1, parts("le", 1), nil), 1); p.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Fatalf("incremental, epoch 1: error %d", p.ErrorCode)
	}
	if resp := g.fetch(fetchReq(id, 2, nil, nil)); onlyPartition(t, resp).ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Fatalf("incremental naming nothing: the session forgot the epoch")
	}

	for _, tc := range []struct {
		epoch int32
		code  int16
	}{{-1, 0}, {0, 0}, {-2, kerr.FencedLeaderEpoch.Code}, {1, kerr.UnknownLeaderEpoch.Code}} {
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.SetVersion(4)
		req.ReplicaID = -1
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = "le"
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.CurrentLeaderEpoch, rp.LeaderEpoch = tc.epoch, 0
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		g.corr++
		g.c.send(g.corr, req)
		resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
		resp.SetVersion(req.Version)
		g.c.recv(resp)
		if got := resp.Topics[0].Partitions[0].ErrorCode; got != tc.code {
			t.Fatalf("OffsetForLeaderEpoch current epoch %d: error %d, want %d", tc.epoch, got, tc.code)
		}
	}
}

// One-by-one session epochs: a long-polling incremental fetch does not hold its session: a
// duplicate of it is answered at once (INVALID_FETCH_SESSION_EPOCH), the
// next epoch is served, and the long poll, whose session moved on, is
// answered INVALID_FETCH_SESSION_EPOCH as Kafka answers a duplicate.
func TestFetchSessionNotLockedDuringLongPoll(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"a": 1})
	id := g.fetch(fetchReq(0, 0, parts("a", 1), nil)).SessionID
	fs := g.s.sessions.Get(id)
	poll := fetchReq(id, 1, nil, nil)
	poll.MaxWaitMillis, poll.MinBytes = int32(time.Hour/time.Millisecond), 1
	long := dialRaw(t, g.s.Addr())
	long.send(1, poll)
	waitFor(t, "long poll started, session unlocked", func() bool {
		epoch, free := fs.EpochIfFree() // held across the poll would never let go
		return free && epoch == 2
	})
	if resp := g.fetch(fetchReq(id, 1, nil, nil)); resp.ErrorCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("duplicate during a long poll: error %d", resp.ErrorCode)
	}
	if resp := g.fetch(fetchReq(id, 2, nil, nil)); resp.ErrorCode != 0 {
		t.Fatalf("next epoch during a long poll: error %d", resp.ErrorCode)
	}
	g.produce("a", 0)
	resp := poll.ResponseKind().(*kmsg.FetchResponse)
	resp.SetVersion(poll.Version)
	long.recv(resp)
	if resp.ErrorCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("long poll overtaken by the next epoch: error %d", resp.ErrorCode)
	}
}

// The session partition bound: a session's partitions, and all sessions' together, are bounded.
func TestFetchSessionPartitionsBounded(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"a": 4})
	g.s.sessions.SetBounds(3, 5)

	if id := g.fetch(fetchReq(0, 0, parts("a", 4), nil)).SessionID; id != 0 {
		t.Fatalf("4 partitions over a bound of 3 got session %d", id)
	}
	a := g.fetch(fetchReq(0, 0, parts("a", 3), nil)).SessionID
	if a == 0 {
		t.Fatal("3 partitions got no session")
	}
	if id := g.fetch(fetchReq(0, 0, parts("a", 3), nil)).SessionID; id != 0 {
		t.Fatalf("6 partitions in all over a bound of 5 got session %d", id)
	}
	// Growing past the bound of a session (4 > 3; 4 in all is in bounds)
	// removes it; the client falls back to a full fetch.
	grow := fetchReq(a, 1, []fetchPart{{topic: "a", partition: 3}}, nil)
	if resp := g.fetch(grow); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("growing past the session bound: error %d", resp.ErrorCode)
	}
	if n := g.s.sessions.Count(); n != 0 {
		t.Fatalf("%d sessions, want the outgrown one removed", n)
	}
	b := g.fetch(fetchReq(0, 0, parts("a", 2), nil)).SessionID
	if c := g.fetch(fetchReq(0, 0, parts("a", 3), nil)).SessionID; b == 0 || c == 0 {
		t.Fatalf("5 partitions in all: sessions %d, %d", b, c)
	}
	// Growing past the bound of all sessions (6 > 5) removes it too.
	grow = fetchReq(b, 1, []fetchPart{{topic: "a", partition: 2}}, nil)
	if resp := g.fetch(grow); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("growing past the bound of all sessions: error %d", resp.ErrorCode)
	}
	if n := g.s.sessions.Count(); n != 1 {
		t.Fatalf("%d sessions, want 1", n)
	}
}

// An isolation level neither read_uncommitted (0) nor read_committed (1)
// fails the whole fetch as Kafka 4.4 fails it: UNKNOWN_SERVER_ERROR at the
// top and in every partition, no bounds, empty (not null) records, and no
// session opened.
func TestFetchUnknownIsolationLevel(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"iso": 1})
	g.produceValue("iso", 0, []byte("v"), kgo.NoCompression())
	req := fetchReq(0, 0, parts("iso", 1), nil)
	req.IsolationLevel = 7
	resp := g.fetch(req)
	p := onlyPartition(t, resp)
	if resp.ErrorCode != kerr.UnknownServerError.Code || resp.SessionID != 0 || p.ErrorCode != kerr.UnknownServerError.Code {
		t.Fatalf("top %d session %d partition %d, want UNKNOWN_SERVER_ERROR without a session", resp.ErrorCode, resp.SessionID, p.ErrorCode)
	}
	if p.HighWatermark != -1 || p.LastStableOffset != -1 || p.LogStartOffset != -1 || p.RecordBatches == nil || len(p.RecordBatches) != 0 {
		t.Fatalf("bounds %d/%d/%d, records %v: want -1s and empty records", p.HighWatermark, p.LastStableOffset, p.LogStartOffset, p.RecordBatches)
	}
}
