package test

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnBatch is makeBatch's batch with the transactional attribute set (its
// CRC32C recomputed).
func txnBatch(s batchSpec) []byte {
	raw := makeBatch(s)
	raw[22] |= 0x10 // attributes (bytes 21-22), transactional bit 4
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// A transactional batch in a produce request without a transactional id
// is refused with TRANSACTIONAL_ID_AUTHORIZATION_FAILED and not written,
// as Kafka does, even when its producer's ongoing transaction has the
// partition; the same batch with the transactional id is appended.
func TestTxnProduceWithoutTransactionalID(t *testing.T) {
	g := newGateway(t)
	g.createTopic("tp", 1)
	cl := g.client()
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionalID, ip.TransactionTimeoutMillis = kmsg.StringPtr("raw-tx"), 60000
	init := request[*kmsg.InitProducerIDResponse](t, cl, ip)
	if init.ErrorCode != 0 {
		t.Fatalf("init: %v", kerr.ErrorForCode(init.ErrorCode))
	}
	ap := kmsg.NewPtrAddPartitionsToTxnRequest()
	ap.TransactionalID, ap.ProducerID, ap.ProducerEpoch = "raw-tx", init.ProducerID, init.ProducerEpoch
	ap.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "tp", Partitions: []int32{0}}}
	if r := request[*kmsg.AddPartitionsToTxnResponse](t, cl, ap); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("add partitions: %v", kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode))
	}
	batch := txnBatch(batchSpec{records: 3, pid: init.ProducerID, epoch: init.ProducerEpoch})

	produce := func(txnID *string) kmsg.ProduceResponseTopicPartition {
		req := kmsg.NewPtrProduceRequest()
		req.TransactionID, req.Acks, req.TimeoutMillis = txnID, -1, 10_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "tp"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return request[*kmsg.ProduceResponse](t, cl, req).Topics[0].Partitions[0]
	}
	if p := produce(nil); p.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("without a transactional id: %v (base offset %d), want TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
			kerr.ErrorForCode(p.ErrorCode), p.BaseOffset)
	}
	if end := listOffset(t, cl, "tp", -1); end.Offset != 0 {
		t.Fatalf("refused batch written: end offset %d", end.Offset)
	}
	if p := produce(kmsg.StringPtr("raw-tx")); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("with the transactional id: %v (base offset %d)", kerr.ErrorForCode(p.ErrorCode), p.BaseOffset)
	}
}
