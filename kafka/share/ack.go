package share

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// checkBatches validates a partition's acknowledgement batches as a
// request (the share bounds): at most maxAckBatches, each a range no longer than the
// in-flight bound, ascending without overlap, with one type for the range
// or one per offset, each type known.
func (c *Coordinator) checkBatches(batches []ackBatch, maxType int8) *kerr.Error {
	if len(batches) > maxAckBatches {
		return kerr.InvalidRequest
	}
	prevLast := int64(-1)
	for i, b := range batches {
		n := b.last - b.first + 1
		switch {
		case b.first < 0 || n <= 0 || n > int64(c.cfg.PartitionMaxRecordLocks):
			return kerr.InvalidRequest
		case i > 0 && b.first <= prevLast:
			return kerr.InvalidRequest
		case len(b.types) != 1 && int64(len(b.types)) != n:
			return kerr.InvalidRequest
		}
		for _, t := range b.types {
			if t < ackGap || t > maxType {
				return kerr.InvalidRequest
			}
		}
		prevLast = b.last
	}
	return nil
}

// acknowledge applies one partition's batches for member (acknowledgement by the lock holder) and returns
// the partition's error code and the wait for the write of its new state
// (nil when nothing was applied), which the caller calls before it
// answers (the durable share-partition state): a request's partitions
// share one sync. A topic the principal may not READ is
// TOPIC_AUTHORIZATION_FAILED and nothing is applied, as Kafka's
// handleShareAcknowledgeRequest and handleShareFetchRequest (per-API authorization).
func (c *Coordinator) acknowledge(g *group, member string, sp sessPart, batches []ackBatch, maxType int8, allowed Allowed) (int16, func() error) {
	if e := c.checkBatches(batches, maxType); e != nil {
		return e.Code, nil
	}
	tp, ok := c.resolve(sp)
	if !ok {
		return kerr.UnknownTopicID.Code, nil
	}
	if allowed != nil && !allowed(tp.Topic) {
		return kerr.TopicAuthorizationFailed.Code, nil
	}
	epoch, serving := int32(0), true
	if c.leaderSide() {
		if epoch, serving = c.cfg.States.Serving(tp); !serving {
			return kerr.NotLeaderForPartition.Code, nil // The leader side
		}
	}
	g.mu.Lock()
	p := g.mu.parts[tp]
	g.mu.Unlock()
	if p == nil {
		return kerr.InvalidRecordState.Code, nil
	}
	now := c.cfg.Now()
	limit := c.deliveryLimit()
	lockFor := c.lockDuration(g.id) // before p.mu: a leader may read it from etcd (share states outside the offsets store)
	dlq := c.dlqOn(g.id)
	p.mu.Lock()
	p.dlq = dlq
	if c.leaderSide() && (p.dead || p.epoch != epoch) {
		p.mu.Unlock()
		return kerr.InvalidRecordState.Code, nil // acquired under another leadership (re-reading after a leader change)
	}
	p.expireLocked(now, limit)
	if e := p.checkAckLocked(member, batches); e != nil {
		p.mu.Unlock()
		return e.Code, nil
	}
	// The fetches the acknowledgement woke acquire what it freed; its
	// write lingers for their states (stateWriter.owe), so that a member
	// cycle costs one synced write where it cost two.
	c.writer.owe(p.ackLocked(batches, limit, now.Add(lockFor)))
	wait := c.persistLocked(g.id, tp, p)
	p.mu.Unlock()
	return 0, wait
}

// Acknowledge handles ShareAcknowledge: the acknowledgements of a member's
// session, advancing its epoch (share session epochs); epoch -1 also closes the session and
// releases what the member still holds. principal is the caller's
// (mayActAs), allowed its topic READ (nil: everything).
func (c *Coordinator) Acknowledge(req *kmsg.ShareAcknowledgeRequest, principal string, allowed Allowed) *kmsg.ShareAcknowledgeResponse {
	resp := req.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	groupID, memberID := deref(req.GroupID), deref(req.MemberID)
	resp.AcquisitionLockTimeoutMillis = int32(c.lockDuration(groupID).Milliseconds())
	if groupID == "" || memberID == "" || len(memberID) > maxMemberIDLen {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	if !c.mayActAs(groupID, memberID, principal, req.ShareSessionEpoch == -1) {
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return resp
	}
	g := c.lookup(groupID)
	if g == nil && c.leaderSide() {
		// A leader knows a group only by its sessions here (the leader side): a
		// member new to this node has no session, which it is told.
		g, _ = c.getOrCreate(groupID, true)
	}
	if g == nil {
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		return resp
	}
	k := sessKey{groupID, memberID}
	switch req.ShareSessionEpoch {
	case 0:
		resp.ErrorCode = kerr.InvalidShareSessionEpoch.Code
		return resp
	case -1:
		if !c.closeSession(k) {
			resp.ErrorCode = kerr.ShareSessionNotFound.Code
			return resp
		}
	default:
		if _, _, e := c.useSession(k, req.ShareSessionEpoch, nil); e != nil {
			resp.ErrorCode = e.Code
			return resp
		}
	}
	maxType := ackReject
	if req.IsRenewAck {
		maxType = ackRenew
	}
	type ackWait struct {
		topic, part int
		wait        func() error
	}
	var waits []ackWait
	for i := range req.Topics {
		t := &req.Topics[i]
		rt := kmsg.NewShareAcknowledgeResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			batches := make([]ackBatch, len(p.AcknowledgementBatches))
			for j, b := range p.AcknowledgementBatches {
				batches[j] = ackBatch{b.FirstOffset, b.LastOffset, b.AcknowledgeTypes}
			}
			rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
			rp.Partition = p.Partition
			var wait func() error
			rp.ErrorCode, wait = c.acknowledge(g, memberID, sessPart{t.TopicID, p.Partition}, batches, maxType, allowed)
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
			rt.Partitions = append(rt.Partitions, rp)
			if wait != nil {
				waits = append(waits, ackWait{len(resp.Topics), len(rt.Partitions) - 1, wait})
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	// The partitions' writes were submitted together and are waited for
	// once (the durable share-partition state).
	for _, w := range waits {
		if err := w.wait(); err != nil {
			resp.Topics[w.topic].Partitions[w.part].ErrorCode = c.failCode(err)
		}
	}
	if req.ShareSessionEpoch == -1 {
		g.mu.Lock()
		c.releaseMemberLocked(g, memberID)
		g.mu.Unlock()
	}
	return resp
}
