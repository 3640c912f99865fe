package cluster

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fastMetadata makes a client re-read metadata soon after a leader moves
// (kgo's default minimum age is 5 s).
func fastMetadata() []kgo.Opt {
	return []kgo.Opt{kgo.MetadataMinAge(100 * time.Millisecond), kgo.MetadataMaxAge(2 * time.Second)}
}

// NewClient is a client seeded with every node.
func (c *Cluster) NewClient(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	opts = append(append([]kgo.Opt{kgo.SeedBrokers(c.Addrs()...)}, fastMetadata()...), opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

// Admin is an admin client seeded with every node.
func (c *Cluster) Admin() *kadm.Client { return kadm.NewClient(c.NewClient()) }

// nodeClient is a client that talks to node i only (its seed broker),
// whatever the metadata says; it reconnects across restarts.
func (c *Cluster) nodeClient(i int) *kgo.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl := c.clients[i]; cl != nil {
		return cl
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.nodes[i].Addr), kgo.RequestRetries(0))
	if err != nil {
		panic(err) // only invalid options fail here
	}
	c.clients[i] = cl
	return cl
}

// Ask sends req to node i and nowhere else.
func (c *Cluster) Ask(ctx context.Context, i int, req kmsg.Request) (kmsg.Response, error) {
	return c.nodeClient(i).SeedBrokers()[0].Request(ctx, req)
}

// CreateTopic creates a topic of n partitions and waits until every
// running node reports a leader for each.
func (c *Cluster) CreateTopic(name string, n int32) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := c.Admin().CreateTopic(ctx, n, 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		c.t.Fatalf("create topic %s: %v", name, err)
	}
	c.WaitLeaders(name, n, 60*time.Second)
}

// Partition is a partition's leader as one node reports it.
type Partition struct {
	Leader int32
	Epoch  int32
}

// View is one node's Metadata answer for a topic.
type View struct {
	ID         [16]byte
	Brokers    []int32 // node ids, sorted
	Partitions []Partition
}

// Metadata asks node i for topic's metadata.
func (c *Cluster) Metadata(ctx context.Context, i int, topic string) (View, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	r, err := c.Ask(ctx, i, req)
	if err != nil {
		return View{}, err
	}
	resp := r.(*kmsg.MetadataResponse)
	var v View
	for _, b := range resp.Brokers {
		v.Brokers = append(v.Brokers, b.NodeID)
	}
	slices.Sort(v.Brokers)
	if len(resp.Topics) != 1 {
		return View{}, fmt.Errorf("node %d: %d topics in metadata", i, len(resp.Topics))
	}
	rt0 := resp.Topics[0]
	if err := kerr.ErrorForCode(rt0.ErrorCode); err != nil {
		return View{}, fmt.Errorf("node %d: topic %s: %w", i, topic, err)
	}
	v.ID = rt0.TopicID
	v.Partitions = make([]Partition, len(rt0.Partitions))
	for _, p := range rt0.Partitions {
		if p.Partition < 0 || int(p.Partition) >= len(v.Partitions) {
			return View{}, fmt.Errorf("node %d: partition %d of %d", i, p.Partition, len(v.Partitions))
		}
		leader := p.Leader
		if kerr.ErrorForCode(p.ErrorCode) != nil {
			leader = -1
		}
		v.Partitions[p.Partition] = Partition{Leader: leader, Epoch: p.LeaderEpoch}
	}
	return v, nil
}

// Leaders is the leader of each partition if every up node reports the
// same running, up leader for every partition of topic; else an error
// saying what differs.
func (c *Cluster) Leaders(ctx context.Context, topic string, n int32) ([]Partition, error) {
	var first []Partition
	up := c.Up()
	isUp := func(id int32) bool { return slices.Contains(up, int(id)) }
	for _, i := range up {
		v, err := c.Metadata(ctx, i, topic)
		if err != nil {
			return nil, err
		}
		if int32(len(v.Partitions)) != n {
			return nil, fmt.Errorf("node %d: %d partitions, want %d", i, len(v.Partitions), n)
		}
		for p, l := range v.Partitions {
			if l.Leader < 0 || !isUp(l.Leader) {
				return nil, fmt.Errorf("node %d: partition %d: leader %d (up: %v)", i, p, l.Leader, up)
			}
		}
		if first == nil {
			first = v.Partitions
		} else if !slices.Equal(first, v.Partitions) {
			return nil, fmt.Errorf("nodes disagree on leaders: %v and node %d %v", first, i, v.Partitions)
		}
	}
	if first == nil {
		return nil, errors.New("no node is up")
	}
	return first, nil
}

// WaitLeaders waits until every up node reports the same up leader for
// every partition, and returns them.
func (c *Cluster) WaitLeaders(topic string, n int32, timeout time.Duration) []Partition {
	c.t.Helper()
	var out []Partition
	waitFor(c.t, timeout, "a leader for every partition of "+topic, func(ctx context.Context) (bool, error) {
		l, err := c.Leaders(ctx, topic, n)
		out = l
		return err == nil, err
	})
	return out
}

// Rec is a record as a node serves it.
type Rec struct {
	Offset  int64
	Key     string
	Value   string
	PID     int64
	Epoch   int16
	Txn     bool   // of a transactional batch
	Control string // a control batch: "commit" or "abort"
}

// ReadPartition reads a partition from offset 0 to its high watermark,
// asking node i only (which must lead it). Offsets before the log start
// are absent; the log start is returned.
func (c *Cluster) ReadPartition(ctx context.Context, i int, topic string, id [16]byte, partition int32) (start int64, recs []Rec, err error) {
	return c.readPartition(ctx, i, topic, id, partition, parseBatches)
}

// logStart asks node i for a partition's log start (ListOffsets earliest).
func (c *Cluster) logStart(ctx context.Context, i int, topic string, partition int32) (int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = topic
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition, lp.Timestamp, lp.CurrentLeaderEpoch = partition, -2, -1
	lt.Partitions = append(lt.Partitions, lp)
	req.Topics = append(req.Topics, lt)
	r, err := c.Ask(ctx, i, req)
	if err != nil {
		return 0, err
	}
	resp := r.(*kmsg.ListOffsetsResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return 0, errors.New("list offsets: not one partition in the response")
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return 0, fmt.Errorf("node %d: log start of %s/%d: %w", i, topic, partition, err)
	}
	return p.Offset, nil
}

// readPartition is ReadPartition with the batches parsed by parse.
func (c *Cluster) readPartition(ctx context.Context, i int, topic string, id [16]byte, partition int32,
	parse func([]byte) ([]Rec, int64, error)) (start int64, recs []Rec, err error) {
	off := int64(0)
	for {
		req := kmsg.NewPtrFetchRequest()
		req.MaxWaitMillis = 0
		req.MinBytes = 1
		req.MaxBytes = 4 << 20
		req.SessionEpoch = -1
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic, ft.TopicID = topic, id
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = partition, off, 4<<20
		ft.Partitions = append(ft.Partitions, fp)
		req.Topics = append(req.Topics, ft)
		r, err := c.Ask(ctx, i, req)
		if err != nil {
			return 0, nil, err
		}
		resp := r.(*kmsg.FetchResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return 0, nil, err
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return 0, nil, errors.New("fetch: not one partition in the response")
		}
		rp := resp.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
			if errors.Is(err, kerr.OffsetOutOfRange) && off == 0 {
				// An error carries no bounds (as Kafka's): ask the start.
				if start, err = c.logStart(ctx, i, topic, partition); err != nil {
					return 0, nil, err
				}
				if start > 0 {
					off = start
					continue
				}
			}
			return 0, nil, fmt.Errorf("node %d: fetch %s/%d at %d: %w", i, topic, partition, off, err)
		}
		if off >= rp.HighWatermark {
			return start, recs, nil
		}
		got, next, err := parse(rp.RecordBatches)
		if err != nil {
			return 0, nil, fmt.Errorf("node %d: %s/%d at %d: %w", i, topic, partition, off, err)
		}
		for _, r := range got {
			if r.Offset >= off && r.Offset < rp.HighWatermark {
				recs = append(recs, r)
			}
		}
		if next <= off {
			return 0, nil, fmt.Errorf("node %d: %s/%d: no batch at %d below the high watermark %d", i, topic, partition, off, rp.HighWatermark)
		}
		off = next
	}
}

// parseBatches decodes whole uncompressed record batches (a trailing
// partial batch is ignored) into their data records, and returns the
// offset after the last whole batch, control batches included.
func parseBatches(b []byte) ([]Rec, int64, error) {
	all, next, err := parseAll(b)
	var out []Rec
	for _, r := range all {
		if r.Control == "" {
			out = append(out, r)
		}
	}
	return out, next, err
}

// parseAll is parseBatches with each control batch as one Rec (Control
// "commit" or "abort").
func parseAll(b []byte) ([]Rec, int64, error) {
	var out []Rec
	next := int64(-1)
	for len(b) >= 12 {
		size := 12 + int(int32(binary.BigEndian.Uint32(b[8:12])))
		if size > len(b) {
			break
		}
		var batch kmsg.RecordBatch
		if err := batch.ReadFrom(b[:size]); err != nil {
			return nil, next, err
		}
		b = b[size:]
		next = batch.FirstOffset + int64(batch.LastOffsetDelta) + 1
		switch batch.Attributes & 0x0007 {
		case 0:
		case 1: // gzip
			zr, err := gzip.NewReader(bytes.NewReader(batch.Records))
			if err != nil {
				return nil, next, fmt.Errorf("batch at %d: %w", batch.FirstOffset, err)
			}
			if batch.Records, err = io.ReadAll(zr); err != nil {
				return nil, next, fmt.Errorf("batch at %d: %w", batch.FirstOffset, err)
			}
		default:
			return nil, next, fmt.Errorf("batch at %d is compressed", batch.FirstOffset)
		}
		txn := batch.Attributes&0x0010 != 0
		if batch.Attributes&0x0020 != 0 {
			kind := "abort"
			if len(batch.Records) > 0 && controlType(batch.Records) == 1 {
				kind = "commit"
			}
			out = append(out, Rec{Offset: batch.FirstOffset, Control: kind, PID: batch.ProducerID, Epoch: batch.ProducerEpoch, Txn: true})
			continue
		}
		rs := batch.Records
		for range batch.NumRecords {
			l, n := binary.Varint(rs)
			if n <= 0 || int(l) < 0 || n+int(l) > len(rs) {
				return nil, next, fmt.Errorf("batch at %d: bad record length", batch.FirstOffset)
			}
			var r kmsg.Record
			if err := r.ReadFrom(rs[:n+int(l)]); err != nil {
				return nil, next, fmt.Errorf("batch at %d: %w", batch.FirstOffset, err)
			}
			rs = rs[n+int(l):]
			out = append(out, Rec{Offset: batch.FirstOffset + int64(r.OffsetDelta), Key: string(r.Key), Value: string(r.Value),
				PID: batch.ProducerID, Epoch: batch.ProducerEpoch, Txn: txn})
		}
	}
	return out, next, nil
}

// controlType is the type of the control record in records (0 abort, 1
// commit): its key's second int16.
func controlType(records []byte) int16 {
	var r kmsg.Record
	if _, n := binary.Varint(records); n <= 0 || r.ReadFrom(records) != nil || len(r.Key) < 4 {
		return -1
	}
	return int16(binary.BigEndian.Uint16(r.Key[2:4]))
}

// rawConn is a plain Kafka connection to one node: a request written on
// it stays in the socket's buffers while the node is paused, and is
// served when it resumes.
type rawConn struct {
	c    net.Conn
	corr int32
	f    *kmsg.RequestFormatter
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{c: c, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("cluster-test"))}
}

// send writes req at its set version.
func (r *rawConn) send(req kmsg.Request) error {
	r.corr++
	_, err := r.c.Write(r.f.AppendRequest(nil, req, r.corr))
	return err
}

// recv reads the response to the last request into resp (of the same
// version), waiting at most timeout.
func (r *rawConn) recv(resp kmsg.Response, timeout time.Duration) error {
	r.c.SetReadDeadline(time.Now().Add(timeout))
	var size [4]byte
	if _, err := io.ReadFull(r.c, size[:]); err != nil {
		return err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(r.c, body); err != nil {
		return err
	}
	if len(body) < 4 || int32(binary.BigEndian.Uint32(body)) != r.corr {
		return errors.New("response to another request")
	}
	body = body[4:]
	if resp.IsFlexible() {
		body = body[1:] // no tagged header fields
	}
	return resp.ReadFrom(body)
}

// produceRaw sends a Produce (v7, acks=all) of one non-idempotent record
// to partition on r.
func (r *rawConn) produceRaw(topic string, partition int32, key, value string) error {
	req := kmsg.NewPtrProduceRequest()
	req.Version = 7
	req.Acks = -1
	req.TimeoutMillis = 60000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = recordBatch(key, value)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return r.send(req)
}

// produceResult reads the answer to produceRaw: the partition's error
// code and base offset.
func (r *rawConn) produceResult(timeout time.Duration) (int16, int64, error) {
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 7
	if err := r.recv(resp, timeout); err != nil {
		return 0, 0, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return 0, 0, errors.New("produce: not one partition in the response")
	}
	p := resp.Topics[0].Partitions[0]
	return p.ErrorCode, p.BaseOffset, nil
}

// recordBatch is a v2 batch of one record, with no producer id.
func recordBatch(key, value string) []byte {
	rec := kmsg.Record{Key: []byte(key), Value: []byte(value)}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1) // Length 0 is one varint byte
	recs := rec.AppendTo(nil)
	now := time.Now().UnixMilli()
	b := (&kmsg.RecordBatch{
		PartitionLeaderEpoch: -1,
		Magic:                2,
		FirstTimestamp:       now,
		MaxTimestamp:         now,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           1,
		Records:              recs,
	}).AppendTo(nil)
	binary.BigEndian.PutUint32(b[8:12], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:21], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// sameRecs reports the first difference between two reads of a
// partition, "" if none.
func sameRecs(a, b []Rec) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("at %d: %+v vs %+v", i, a[i], b[i])
		}
	}
	if len(a) != len(b) {
		return fmt.Sprintf("%d records vs %d", len(a), len(b))
	}
	return ""
}
