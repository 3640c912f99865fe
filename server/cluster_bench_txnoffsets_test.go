package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkClusterTxnOffsets is BenchmarkClusterTxn with offsets: each
// transaction also commits an offset of its producer's group (a
// TxnOffsetCommit v5+, which adds the group to the transaction, KIP-890),
// as a consume-transform-produce loop (Kafka Streams, exactly once)
// does. EndTxn's latency (commit-) is what answer once decided changes
// for such transactions: the offsets commit with the Complete state,
// after the markers.
//
//	go test -run '^$' -bench ClusterTxnOffsets -benchtime 400x ./server/
func BenchmarkClusterTxnOffsets(b *testing.B) { benchClusterTxn(b, true) }

// benchTopicID is txbench's topic id (TxnOffsetCommit v6 names topics by
// id).
func benchTopicID(b *testing.B, ctx context.Context, cl *kgo.Client) [16]byte {
	ts, err := kadm.NewClient(cl).ListTopics(ctx, "txbench")
	if err != nil {
		b.Fatal(err)
	}
	return ts["txbench"].ID
}

// benchTxnOffsetCommit commits offset of txbench's partition 0 for group
// in cl's open transaction, as its producer (current id and epoch).
func benchTxnOffsetCommit(ctx context.Context, cl *kgo.Client, group string, topicID [16]byte, offset int64) error {
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return err
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = group, group, pid, epoch, -1
	req.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "txbench", TopicID: topicID,
		Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: offset, LeaderEpoch: -1}}}}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	if resp.Version < 5 {
		return fmt.Errorf("TxnOffsetCommit v%d: the group is not added implicitly before v5", resp.Version)
	}
	return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
}
