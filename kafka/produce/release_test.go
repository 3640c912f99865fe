package produce

import (
	"context"
	"errors"
	"hash/crc32"
	"testing"
	"time"

	"github.com/kgateway/kgateway/bufpool"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/resolvertest"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// resolverHost is a single-node Host over a resolver.
type resolverHost struct{ r *resolver.Resolver }

func (h resolverHost) Resolve(topic string, partition int32) (resolver.Partition, error) {
	return h.r.Resolve(topic, partition)
}
func (resolverHost) RouteError(string, int32) error { return nil }
func (resolverHost) Txns() (Txns, error)            { return nil, errors.New("no coordinator") }
func (resolverHost) VerifyTxn(context.Context, string, int32, int64, int16) (bool, error) {
	return false, nil
}
func (resolverHost) AddTxnPartition(context.Context, string, string, int32, int64, int16) (int16, error) {
	return 0, nil
}
func (resolverHost) Cluster() bool { return false }
func (resolverHost) Code(err error) int16 {
	if err != nil {
		return -1
	}
	return 0
}

// batchOf is a valid uncompressed record batch of one record of value.
func batchOf(value []byte) []byte {
	rec := kmsg.Record{Value: value}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1) // less its one-byte zero length
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{
		Magic: 2, FirstTimestamp: now, MaxTimestamp: now,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 1,
		Records: rec.AppendTo(nil),
	}
	raw := b.AppendTo(nil)
	// Length: everything after the length field; CRC32C: from the
	// attributes on.
	b.Length = int32(len(raw) - 12)
	raw = b.AppendTo(nil)
	b.CRC = int32(crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b.AppendTo(nil)
}

// TestFrameReleasedBeforeSyncOnlyWhenNotHeld: a pooled request frame goes
// back to the pool as soon as its batches are written when the store
// keeps none of them until answered (a bulk lane's entries), and only
// once every write is answered when it may (a main lane's entries, which
// the journal may copy at commit: storage Pending.HoldsPayload).
func TestFrameReleasedBeforeSyncOnlyWhenNotHeld(t *testing.T) {
	res := resolvertest.OpenStore(t, resolver.Config{NumPartitions: 4}, resolvertest.Store{
		TailCacheBytes: -1, JournalBytes: 1 << 20, BulkEntryBytes: 1024,
	})
	for _, topic := range []string{"small", "bulk"} {
		if _, err := res.CreateTopic(topic, 4, 1, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		topic string
		value int
		held  bool
	}{{"small", 100, true}, {"bulk", 4096, false}} {
		r := kmsg.NewPtrProduceRequest()
		r.Acks, r.TimeoutMillis = -1, 30000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = c.topic
		for p := range int32(4) {
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition = p
			rp.Records = batchOf(make([]byte, c.value))
			rt.Partitions = append(rt.Partitions, rp)
		}
		r.Topics = append(r.Topics, rt)
		frame := bufpool.New(bufpool.Get(bufpool.MinPooled))
		holders := int64(-1)
		resp, _ := Write(resolverHost{res}, Call{
			Ctx: context.Background(), Version: 9, FrameSize: bufpool.MinPooled, Frame: frame,
			Appended: func() { holders = frame.Holders() },
		}, r)
		for _, p := range resp.Topics[0].Partitions {
			if p.ErrorCode != 0 {
				t.Fatalf("%s: partition %d answered %d", c.topic, p.Partition, p.ErrorCode)
			}
		}
		if held := holders > 0; held != c.held {
			t.Errorf("%s: %d holders of the frame once written, want it held %v", c.topic, holders, c.held)
		}
		if frame.Holders() != 0 {
			t.Errorf("%s: %d holders of the frame once answered", c.topic, frame.Holders())
		}
	}
}
