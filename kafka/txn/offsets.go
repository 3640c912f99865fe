package txn

import (
	"slices"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// GroupChecker is the group coordinator's side of TxnOffsetCommit
// (kafka/group): the member and generation checks of Kafka's
// validateOffsetCommit for a transactional commit, and the per-partition
// checks (metadata size, unknown partition).
type GroupChecker interface {
	ValidateTxnOffsetCommitAt(version int16, group, memberID string, instanceID *string, generation int32) int16
	CheckTxnOffset(topic string, partition int32, metadata string) int16
}

// TxnOffsetCommit handles TxnOffsetCommit v0–6 (v5: the group is added
// implicitly, KIP-890 implicit adds; v6 names topics by id, translated before this, and
// answers GROUP_ID_NOT_FOUND and STALE_MEMBER_EPOCH, KIP-1319). The transaction is checked
// first (as KIP-890's verification does): its producer id and epoch must
// be current, it must be Ongoing and the group added with AddOffsetsToTxn (or by v5)
// (else INVALID_TXN_STATE); then the group (v3: member, generation). A
// missing partition is UNKNOWN_TOPIC_OR_PARTITION whatever else fails. The
// offsets are stored pending (O5), durably before the answer, under the
// transaction's lock, so they can never outlive the transaction's end
// (pending TxnOffsetCommit offsets).
func (c *Coordinator) TxnOffsetCommit(req *kmsg.TxnOffsetCommitRequest, groups GroupChecker) *kmsg.TxnOffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	code := c.txnOffsetCommit(req, groups, resp)
	if code == errNone {
		return resp
	}
	resp.Topics = resp.Topics[:0]
	for _, rt := range req.Topics {
		t := kmsg.NewTxnOffsetCommitResponseTopic()
		t.Topic = rt.Topic
		for _, p := range rt.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			if groups.CheckTxnOffset(rt.Topic, p.Partition, "") == errUnknownTopic {
				// Kafka answers a missing partition before the
				// transaction and the group see the commit.
				rp.ErrorCode = errUnknownTopic
			}
			t.Partitions = append(t.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

func (c *Coordinator) txnOffsetCommit(req *kmsg.TxnOffsetCommitRequest, groups GroupChecker, resp *kmsg.TxnOffsetCommitResponse) int16 {
	if req.TransactionalID == "" {
		return errInvalidRequest
	}
	if req.Group == "" || len(req.Group) > maxIDLen {
		return errInvalidGroupID
	}
	if req.Version >= 5 {
		// Transaction version 2: the group joins the transaction here,
		// durably, instead of by AddOffsetsToTxn (KIP-890 implicit adds).
		if code := c.addGroup(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group, tv2); code != errNone {
			return fencedFor(code, 0, 1) // TxnOffsetCommit knows only INVALID_PRODUCER_EPOCH (Kafka's transaction errors)
		}
	}
	t := c.lookup(req.TransactionalID)
	if t == nil {
		return errInvalidMapping
	}
	defer t.mu.Unlock()
	switch st := t.st; {
	case st.ProducerID != req.ProducerID:
		return errInvalidMapping
	case st.Epoch != req.ProducerEpoch:
		return errInvalidEpoch
	case st.State != offsets.TxnOngoing || !slices.Contains(st.Groups, req.Group):
		return errInvalidTxnState
	}
	memberID, instanceID, generation := "", (*string)(nil), int32(-1)
	if req.Version >= 3 {
		memberID, instanceID, generation = req.MemberID, req.InstanceID, req.Generation
	}
	if code := groups.ValidateTxnOffsetCommitAt(req.Version, req.Group, memberID, instanceID, generation); code != errNone {
		return code
	}
	now := c.clock.Now()
	var pending []offsets.Commit
	type slot struct{ t, p int }
	var stored []slot
	for ti, rt := range req.Topics {
		t := kmsg.NewTxnOffsetCommitResponseTopic()
		t.Topic = rt.Topic
		for pi, p := range rt.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			md := ""
			if p.Metadata != nil {
				md = *p.Metadata
			}
			if rp.ErrorCode = groups.CheckTxnOffset(rt.Topic, p.Partition, md); rp.ErrorCode == errNone {
				epoch := p.LeaderEpoch
				if req.Version < 2 {
					epoch = -1
				}
				pending = append(pending, offsets.Commit{
					TopicPartition: offsets.TopicPartition{Topic: rt.Topic, Partition: p.Partition},
					Offset:         offsets.Offset(p.Offset), LeaderEpoch: epoch, Metadata: md, CommitTime: now,
				})
				stored = append(stored, slot{ti, pi})
			}
			t.Partitions = append(t.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, t)
	}
	if err := c.store.PutPending(req.TransactionalID, req.Group, pending); err != nil {
		c.log.Warn("txn-offset-commit-failed", zap.String("transactional-id", req.TransactionalID), zap.Error(err))
		for _, s := range stored {
			resp.Topics[s.t].Partitions[s.p].ErrorCode = errCoordinatorNA
		}
	}
	return errNone
}
