package test

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// batchSpec describes a hand-built record batch.
type batchSpec struct {
	records  int
	pid      int64 // -1: not idempotent
	epoch    int16
	seq      int32
	baseTime int64
}

// makeBatch encodes an uncompressed magic-2 batch with a correct CRC32C.
func makeBatch(s batchSpec) []byte {
	var recs []byte
	for i := 0; i < s.records; i++ {
		r := kmsg.Record{TimestampDelta64: int64(i), OffsetDelta: int32(i),
			Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "raw value %d", i)}
		r.Length = int32(len(r.AppendTo(nil)) - 1) // the zero length took one byte
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{
		Magic: 2, LastOffsetDelta: int32(s.records - 1), FirstTimestamp: s.baseTime,
		MaxTimestamp: s.baseTime + int64(s.records-1), ProducerID: s.pid, ProducerEpoch: s.epoch,
		FirstSequence: s.seq, NumRecords: int32(s.records), Records: recs, PartitionLeaderEpoch: -1,
	}
	if s.pid < 0 {
		b.ProducerEpoch, b.FirstSequence = -1, -1
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// produceRaw sends one batch to topic/0 with acks=all and returns the
// partition's answer.
func produceRaw(t *testing.T, cl *kgo.Client, topic string, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := request[*kmsg.ProduceResponse](t, cl, req)
	return resp.Topics[0].Partitions[0]
}

// fetchRaw fetches topic/0 from offset without waiting.
func fetchRaw(t *testing.T, cl *kgo.Client, topic string, offset int64, maxWait int32) kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MinBytes = maxWait, 1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, topicID(t, cl, topic)
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes = offset, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	// Sent at v13+: by topic ID (Metadata returns real ones).
	resp := request[*kmsg.FetchResponse](t, cl, req)
	return resp.Topics[0].Partitions[0]
}

// topicID looks topic's ID up through Metadata.
func topicID(t *testing.T, cl *kgo.Client, topic string) [16]byte {
	t.Helper()
	ts, err := kadm.NewClient(cl).ListTopics(testCtx(t), topic)
	if err != nil || ts[topic].Err != nil {
		t.Fatalf("metadata for %s: %v %v", topic, err, ts[topic].Err)
	}
	return ts[topic].ID
}

// listOffset asks for topic/0's offset at ts (-1 latest, -2 earliest).
func listOffset(t *testing.T, cl *kgo.Client, topic string, ts int64) kmsg.ListOffsetsResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = ts
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := request[*kmsg.ListOffsetsResponse](t, cl, req)
	return resp.Topics[0].Partitions[0]
}

// batchesOf decodes the batch headers of a fetch answer, checking each
// batch's CRC32C.
func batchesOf(t *testing.T, b []byte) []kmsg.RecordBatch {
	t.Helper()
	var out []kmsg.RecordBatch
	for len(b) > 0 {
		var rb kmsg.RecordBatch
		if len(b) < 12 {
			t.Fatalf("%d trailing bytes", len(b))
		}
		n := 12 + int(binary.BigEndian.Uint32(b[8:]))
		if err := rb.ReadFrom(b[:n]); err != nil {
			t.Fatal(err)
		}
		if crc := crc32.Checksum(b[21:n], crc32.MakeTable(crc32.Castagnoli)); uint32(rb.CRC) != crc {
			t.Fatalf("batch at %d: CRC %08x, computed %08x", rb.FirstOffset, uint32(rb.CRC), crc)
		}
		out = append(out, rb)
		b = b[n:]
	}
	return out
}

// A bad CRC is CORRUPT_MESSAGE and nothing is appended.
func TestBadCRCRejected(t *testing.T) {
	g := newGateway(t)
	g.createTopic("crc", 1)
	cl := g.client()
	good := makeBatch(batchSpec{records: 3, pid: -1, baseTime: 1000})
	bad := append([]byte(nil), good...)
	bad[len(bad)-2] ^= 0xff // inside the last record: covered by the CRC
	if p := produceRaw(t, cl, "crc", bad); p.ErrorCode != kerr.CorruptMessage.Code {
		t.Fatalf("bad CRC: error %d, want CORRUPT_MESSAGE", p.ErrorCode)
	}
	if end := listOffset(t, cl, "crc", -1); end.Offset != 0 {
		t.Fatalf("high watermark %d after a rejected batch", end.Offset)
	}
	if p := produceRaw(t, cl, "crc", good); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("good batch: error %d offset %d", p.ErrorCode, p.BaseOffset)
	}
}

// A fetch at an offset inside a batch returns that whole batch; the
// consumer skips to its offset.
func TestFetchInsideBatch(t *testing.T) {
	g := newGateway(t)
	g.createTopic("inside", 1)
	cl := g.client()
	for i := 0; i < 2; i++ {
		p := produceRaw(t, cl, "inside", makeBatch(batchSpec{records: 10, pid: -1, baseTime: 5000}))
		if p.ErrorCode != 0 || p.BaseOffset != int64(10*i) {
			t.Fatalf("batch %d: error %d offset %d", i, p.ErrorCode, p.BaseOffset)
		}
	}
	p := fetchRaw(t, cl, "inside", 4, 0)
	if p.ErrorCode != 0 || p.HighWatermark != 20 || p.LastStableOffset != 20 || p.LogStartOffset != 0 {
		t.Fatalf("fetch: %+v", p)
	}
	bs := batchesOf(t, p.RecordBatches)
	if len(bs) == 0 || bs[0].FirstOffset != 0 || bs[0].NumRecords != 10 {
		t.Fatalf("first batch %+v, want the whole batch at 0", bs)
	}
	cons := g.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"inside": {0: kgo.NewOffset().At(14)}}))
	fs := cons.PollFetches(testCtx(t))
	if err := fs.Err(); err != nil {
		t.Fatal(err)
	}
	if rs := fs.Records(); len(rs) == 0 || rs[0].Offset != 14 || string(rs[0].Key) != "k4" {
		t.Fatalf("consumer from 14 got %d records starting %+v", len(rs), rs)
	}
}

// Offsets below the log start and beyond the end are OFFSET_OUT_OF_RANGE,
// without bounds (-1) and with empty records, as Kafka answers an error.
func TestFetchOffsetOutOfRange(t *testing.T) {
	g := newGateway(t)
	g.createTopic("oor", 1)
	cl := g.client()
	produceRaw(t, cl, "oor", makeBatch(batchSpec{records: 5, pid: -1, baseTime: 1}))
	for _, off := range []int64{-3, 6, 1000} {
		p := fetchRaw(t, cl, "oor", off, 0)
		if p.ErrorCode != kerr.OffsetOutOfRange.Code || p.HighWatermark != -1 || p.LogStartOffset != -1 || p.RecordBatches == nil {
			t.Fatalf("fetch at %d: error %d hwm %d start %d", off, p.ErrorCode, p.HighWatermark, p.LogStartOffset)
		}
	}
	if p := fetchRaw(t, cl, "oor", 5, 0); p.ErrorCode != 0 || len(p.RecordBatches) != 0 {
		t.Fatalf("fetch at the end: error %d, %d bytes", p.ErrorCode, len(p.RecordBatches))
	}
}

// A long-poll fetch at the end waits for, and is woken by, a produce.
func TestLongPollWokenByProduce(t *testing.T) {
	g := newGateway(t)
	g.createTopic("poll", 1)
	cl := g.client()
	type result struct {
		p kmsg.FetchResponseTopicPartition
	}
	done := make(chan result, 1)
	go func() {
		// MaxWait far beyond the test deadline: only the produce can
		// end this fetch in time.
		done <- result{fetchRaw(t, cl, "poll", 0, int32(10*testDeadline/time.Millisecond))}
	}()
	prod := g.client()
	if err := prod.ProduceSync(testCtx(t), &kgo.Record{Topic: "poll", Value: []byte("wake")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.p.ErrorCode != 0 || r.p.HighWatermark != 1 || len(batchesOf(t, r.p.RecordBatches)) != 1 {
			t.Fatalf("woken fetch: %+v", r.p)
		}
	case <-time.After(testDeadline):
		t.Fatal("long-poll fetch not woken by the produce")
	}
}

// ApiVersions at a future version, over raw TCP: a v0-format response with
// UNSUPPORTED_VERSION (35) and the ApiVersions key alone.
func TestApiVersionsFutureVersionRawTCP(t *testing.T) {
	g := newGateway(t)
	nc, err := net.DialTimeout("tcp", g.addr, testDeadline)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(testDeadline))
	req := []byte{0, 0, 0, 0}
	req = kbin.AppendInt16(req, 18)
	req = kbin.AppendInt16(req, 99)
	req = kbin.AppendInt32(req, 42)
	req = kbin.AppendNullableString(req, nil)
	req = append(req, 0) // tagged fields of a v2 header
	binary.BigEndian.PutUint32(req, uint32(len(req)-4))
	if _, err := nc.Write(req); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(nc, body); err != nil {
		t.Fatal(err)
	}
	if corr := int32(binary.BigEndian.Uint32(body)); corr != 42 {
		t.Fatalf("correlation %d", corr)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	if err := resp.ReadFrom(body[4:]); err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 35 {
		t.Fatalf("error %d, want 35", resp.ErrorCode)
	}
	// Kafka's KIP-511 answer: the ApiVersions range alone, so the client
	// retries at our maximum.
	if len(resp.ApiKeys) != 1 || resp.ApiKeys[0].ApiKey != 18 || resp.ApiKeys[0].MaxVersion != 5 {
		t.Fatalf("keys %+v, want ApiVersions 0-5 alone", resp.ApiKeys)
	}
}

// writeFrame sends req on nc with a v1/v2 request header.
func writeFrame(t *testing.T, nc net.Conn, corrID int32, req kmsg.Request) {
	t.Helper()
	b := []byte{0, 0, 0, 0}
	b = kbin.AppendInt16(b, req.Key())
	b = kbin.AppendInt16(b, req.GetVersion())
	b = kbin.AppendInt32(b, corrID)
	b = kbin.AppendNullableString(b, nil)
	if req.IsFlexible() {
		b = append(b, 0)
	}
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	if _, err := nc.Write(b); err != nil {
		t.Fatal(err)
	}
}

// No response for acks=0 on the wire: an acks=0 produce gets no response, so the next response
// on the connection answers the next request.
func TestAcksZeroSendsNothing(t *testing.T) {
	g := newGateway(t)
	g.createTopic("silent", 1)
	nc, err := net.DialTimeout("tcp", g.addr, testDeadline)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(testDeadline))
	prod := kmsg.NewPtrProduceRequest()
	prod.SetVersion(9)
	prod.Acks = 0
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "silent"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = makeBatch(batchSpec{records: 2, pid: -1, baseTime: 1})
	rt.Partitions = append(rt.Partitions, rp)
	prod.Topics = append(prod.Topics, rt)
	writeFrame(t, nc, 1, prod)
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(0)
	writeFrame(t, nc, 2, av)
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(nc, body); err != nil {
		t.Fatal(err)
	}
	if corr := int32(binary.BigEndian.Uint32(body)); corr != 2 {
		t.Fatalf("first response answers request %d, want 2 (acks=0 answers nothing)", corr)
	}
	if end := listOffset(t, g.client(), "silent", -1); end.Offset != 2 {
		t.Fatalf("high watermark %d, want 2", end.Offset)
	}
}

// max.message.bytes bounds a batch (MESSAGE_TOO_LARGE, nothing appended);
// LogAppendTime topics report the append time and serve it in the batch.
func TestProduceTopicConfigs(t *testing.T) {
	g := newGateway(t)
	cl := g.client()
	resp := request[*kmsg.CreateTopicsResponse](t, cl, createTopicsReq(false,
		topicReq("small", 1, 1, map[string]string{"max.message.bytes": "200"}),
		topicReq("appendtime", 1, 1, map[string]string{"message.timestamp.type": "LogAppendTime"}),
	))
	for _, rt := range resp.Topics {
		if rt.ErrorCode != 0 {
			t.Fatalf("create %s: error %d", rt.Topic, rt.ErrorCode)
		}
	}
	big := makeBatch(batchSpec{records: 20, pid: -1, baseTime: 1})
	if p := produceRaw(t, cl, "small", big); p.ErrorCode != kerr.MessageTooLarge.Code {
		t.Fatalf("%d-byte batch: error %d, want MESSAGE_TOO_LARGE", len(big), p.ErrorCode)
	}
	if end := listOffset(t, cl, "small", -1); end.Offset != 0 {
		t.Fatalf("high watermark %d after a rejected batch", end.Offset)
	}
	p := produceRaw(t, cl, "appendtime", makeBatch(batchSpec{records: 3, pid: -1, baseTime: 1}))
	if p.ErrorCode != 0 || p.LogAppendTime < 1_600_000_000_000 {
		t.Fatalf("LogAppendTime produce: %+v", p)
	}
	bs := batchesOf(t, fetchRaw(t, cl, "appendtime", 0, 0).RecordBatches)
	if len(bs) != 1 || bs[0].MaxTimestamp != p.LogAppendTime || bs[0].Attributes&0x08 == 0 {
		t.Fatalf("served batch %+v, want max timestamp %d with the LogAppendTime bit", bs, p.LogAppendTime)
	}
}

// A fetch in a session we never created is FETCH_SESSION_ID_NOT_FOUND;
// clients then send full fetches (session id 0), which always work.
func TestFetchUnknownSession(t *testing.T) {
	g := newGateway(t)
	g.createTopic("sess", 1)
	cl := g.client()
	req := kmsg.NewPtrFetchRequest()
	req.SessionID, req.SessionEpoch = 12345, 3
	resp := request[*kmsg.FetchResponse](t, cl, req)
	if resp.ErrorCode != kerr.FetchSessionIDNotFound.Code || resp.SessionID != 0 {
		t.Fatalf("error %d session %d", resp.ErrorCode, resp.SessionID)
	}
	if p := fetchRaw(t, cl, "sess", 0, 0); p.ErrorCode != 0 {
		t.Fatalf("full fetch: error %d", p.ErrorCode)
	}
}
