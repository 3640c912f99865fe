package group

import (
	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// OffsetCommit handles OffsetCommit v0–9 (v9: member epochs of consumer
// groups, commits at the member epoch). Members commit with their member
// id and generation; simple consumers (kcat -C, kadm) commit with
// generation -1, which Kafka accepts into an Empty group (creating it),
// whether or not a member id comes with it. The response is sent only after the commit is durable
// (O1, durable commits under the group lock). Left out: v2–v4 RetentionTimeMillis (ignored, as Kafka ≥ 2.1
// does for groups with members; retention is offsets.retention.minutes).
func (c *Coordinator) OffsetCommit(req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	groupCode := c.commit(req, resp)
	if groupCode == errNone {
		return resp
	}
	resp.Topics = resp.Topics[:0]
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, groupCode
			if !c.partitionExists(t.Topic, p.Partition) {
				// Kafka answers a missing partition before the group
				// sees the commit (KafkaApis filters it out first).
				rp.ErrorCode = errUnknownTopic
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// partitionExists says whether the broker has the partition (always,
// without a topic view).
func (c *Coordinator) partitionExists(topic string, partition int32) bool {
	return c.cfg.Topics == nil || c.cfg.Topics.PartitionExists(topic, partition)
}

// commit validates and stores; a non-zero return is the error of every
// partition.
func (c *Coordinator) commit(req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse) int16 {
	if len(req.Group) > maxGroupIDLen {
		return errInvalidGroupID
	}
	instanceID := req.InstanceID
	if req.Version < 7 {
		instanceID = nil
	}
	g := c.lookup(req.Group)
	if g == nil {
		// Kafka creates the group for any commit with a negative
		// generation, whatever member id or instance id it names (a
		// consumer outside group management, or one whose group has
		// gone); anything else comes from an older generation.
		if req.Generation >= 0 && req.Version >= 9 {
			return errGroupNotFound // Kafka, from v9 on (KIP-848)
		}
		if req.Generation >= 0 {
			return errIllegalGeneration
		}
		g = c.getOrCreate(req.Group)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.typ == typeConsumer || g.mu.typ == typeStreams {
		if code := g.validateConsumerCommitLocked(req.MemberID, req.Generation, req.Version < 9, false); code != errNone {
			return code
		}
		return g.storeCommitLocked(req, resp)
	}
	if code := g.validateCommitLocked(req.MemberID, instanceID, req.Generation); code != errNone {
		return code
	}
	return g.storeCommitLocked(req, resp)
}

// validateCommitLocked is Kafka's validateOffsetCommit (Kafka's group error order).
func (g *group) validateCommitLocked(memberID string, instanceID *string, generation int32) int16 {
	return g.validateOffsetCommitLocked(memberID, instanceID, generation, false)
}

// validateOffsetCommitLocked is Kafka's validateOffsetCommit; a
// transactional commit (TxnOffsetCommit) is also accepted during
// CompletingRebalance and, without member or generation, into a group
// with members, as Kafka accepts it.
func (g *group) validateOffsetCommitLocked(memberID string, instanceID *string, generation int32, txn bool) int16 {
	if g.mu.state == stateDead {
		return errCoordinatorNA
	}
	if generation < 0 && g.mu.state == stateEmpty {
		// Outside group management (the admin client, a manually
		// assigned consumer): no member to check, member id or not.
		return errNone
	}
	if generation >= 0 || memberID != noMember || instanceID != nil {
		if g.fencedLocked(instanceID, memberID) {
			return errFenced
		}
		m := g.mu.members[memberID]
		if m == nil {
			return errUnknownMember
		}
		if generation != g.mu.generation {
			return errIllegalGeneration
		}
		switch g.mu.state {
		case stateCompletingRebalance:
			if txn {
				break
			}
			return errRebalancing
		case stateStable, statePreparingRebalance:
			// Commits during PreparingRebalance are allowed: the heartbeat
			// tells the member about the rebalance.
			g.scheduleSessionLocked(m)
		}
		return errNone
	}
	if g.mu.state != stateEmpty && !txn {
		return errUnknownMember // only members commit into a live group
	}
	return errNone
}

// ValidateTxnOffsetCommit is ValidateTxnOffsetCommitAt for TxnOffsetCommit
// before v6.
func (c *Coordinator) ValidateTxnOffsetCommit(group, memberID string, instanceID *string, generation int32) int16 {
	return c.ValidateTxnOffsetCommitAt(5, group, memberID, instanceID, generation)
}

// ValidateTxnOffsetCommitAt checks a TxnOffsetCommit of the given version
// against the group as Kafka's validateTransactionalOffsetCommit does
// (Kafka's group error order). A simple commit (generation < 0) creates an absent group (Empty),
// as Kafka creates it; a member's commit to an absent group creates
// nothing and is GROUP_ID_NOT_FOUND from v6 (KIP-1319), ILLEGAL_GENERATION
// before. A consumer group's stale member epoch is STALE_MEMBER_EPOCH from
// v6, ILLEGAL_GENERATION before. The pending offsets themselves belong to
// the transaction coordinator (kafka/txn), which calls this under the
// transaction's lock.
func (c *Coordinator) ValidateTxnOffsetCommitAt(version int16, group, memberID string, instanceID *string, generation int32) int16 {
	if group == "" || len(group) > maxGroupIDLen {
		return errInvalidGroupID
	}
	if generation >= 0 && c.lookup(group) == nil {
		if version >= 6 {
			return errGroupNotFound
		}
		return errIllegalGeneration
	}
	g := c.getOrCreate(group)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.typ == typeConsumer || g.mu.typ == typeStreams {
		code := g.validateConsumerCommitLocked(memberID, generation, false, true)
		if code == errStaleEpoch && version < 6 {
			code = errIllegalGeneration // no STALE_MEMBER_EPOCH before v6, as Kafka
		}
		return code
	}
	return g.validateOffsetCommitLocked(memberID, instanceID, generation, true)
}

// CheckTxnOffset is OffsetCommit's per-partition check for a
// TxnOffsetCommit: the partition's existence (Kafka's KafkaApis answers
// it before anything else), then metadata size.
func (c *Coordinator) CheckTxnOffset(topic string, partition int32, metadata string) int16 {
	switch {
	case !c.partitionExists(topic, partition):
		return errUnknownTopic
	case len(metadata) > c.cfg.MaxMetadataBytes:
		return errMetadataTooLarge
	}
	return errNone
}

// storeCommitLocked writes every acceptable partition in one synced batch
// and fills resp.
func (g *group) storeCommitLocked(req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse) int16 {
	now := g.c.clock.Now()
	var commits []offsets.Commit
	type slot struct{ t, p int }
	var stored []slot
	for ti, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for pi, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			md := ""
			if p.Metadata != nil {
				md = *p.Metadata
			}
			switch {
			case !g.c.partitionExists(t.Topic, p.Partition):
				rp.ErrorCode = errUnknownTopic
			case len(md) > g.c.cfg.MaxMetadataBytes:
				rp.ErrorCode = errMetadataTooLarge
			default:
				epoch := p.LeaderEpoch
				if req.Version < 6 {
					epoch = -1
				}
				commits = append(commits, offsets.Commit{
					TopicPartition: offsets.TopicPartition{Topic: t.Topic, Partition: p.Partition},
					Offset:         offsets.Offset(p.Offset), LeaderEpoch: epoch, Metadata: md, CommitTime: now,
				})
				stored = append(stored, slot{ti, pi})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if err := g.c.store.Commit(g.id, commits); err != nil {
		g.c.log.Warn("group-commit-failed", zap.String("group", g.id), zap.Error(err))
		for _, s := range stored {
			resp.Topics[s.t].Partitions[s.p].ErrorCode = errCoordinatorNA
		}
	}
	return errNone
}

// OffsetFetch handles OffsetFetch v0–9 (v8: several groups per request;
// v9: member id and epoch, checked for consumer groups, commits at the member epoch).
// A partition without a commit reports offset -1 and metadata "". Null
// topics (v2+) ask for every committed offset of the group. RequireStable
// (v7+) is fetchOffsets'.
func (c *Coordinator) OffsetFetch(req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			var topics []offsetTopic
			if rg.Topics != nil {
				topics = make([]offsetTopic, 0, len(rg.Topics))
				for _, t := range rg.Topics {
					topics = append(topics, offsetTopic{t.Topic, t.Partitions})
				}
			}
			out, code := c.fetchOffsets(rg.Group, topics, req.RequireStable)
			if req.Version >= 9 && code == errNone {
				code = c.validateOffsetFetch(rg.Group, rg.MemberID, rg.MemberEpoch)
				if code != errNone {
					out = nil
				}
			}
			g := kmsg.NewOffsetFetchResponseGroup()
			g.Group, g.ErrorCode = rg.Group, code
			for _, t := range out {
				gt := kmsg.NewOffsetFetchResponseGroupTopic()
				gt.Topic = t.Topic
				for _, p := range t.Partitions {
					gp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					gp.Partition, gp.Offset, gp.LeaderEpoch, gp.Metadata, gp.ErrorCode = p.Partition, p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode
					gt.Partitions = append(gt.Partitions, gp)
				}
				g.Topics = append(g.Topics, gt)
			}
			resp.Groups = append(resp.Groups, g)
		}
		return resp
	}
	var topics []offsetTopic
	if req.Topics != nil || req.Version < 2 {
		topics = make([]offsetTopic, 0, len(req.Topics))
		for _, t := range req.Topics {
			topics = append(topics, offsetTopic{t.Topic, t.Partitions})
		}
	}
	out, code := c.fetchOffsets(req.Group, topics, req.Version >= 7 && req.RequireStable)
	resp.Topics = out
	if req.Version >= 2 {
		resp.ErrorCode = code
	} else if code != errNone {
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				resp.Topics[i].Partitions[j].ErrorCode = code
			}
		}
	}
	return resp
}

type offsetTopic struct {
	topic      string
	partitions []int32
}

// fetchOffsets returns the committed offsets of the requested partitions
// (all of the group's when topics is nil) and a group-level error. With
// requireStable (v7+, KIP-447) a partition with a pending transactional
// offset (offsets O7) is UNSTABLE_OFFSET_COMMIT instead, as from Kafka:
// the client retries until the transaction ends.
func (c *Coordinator) fetchOffsets(group string, topics []offsetTopic, requireStable bool) ([]kmsg.OffsetFetchResponseTopic, int16) {
	if !requireStable {
		return c.committedOffsets(group, topics)
	}
	// The pending offsets are read before the committed ones. A
	// transaction's completion moves its offsets from pending to committed
	// in one batch (offsets O6), and EndTxn is answered before it: read
	// the other way round, a completion landing between the two reads
	// would show the partition neither pending nor committed, and a
	// consumer would reset its position.
	pending, err := c.store.PendingPartitions(group)
	if err != nil {
		c.log.Warn("group-offset-fetch-failed", zap.String("group", group), zap.Error(err))
		return nil, errCoordinatorNA
	}
	out, code := c.committedOffsets(group, topics)
	if code != errNone {
		return out, code
	}
	for i := range out {
		for j := range out[i].Partitions {
			p := &out[i].Partitions[j]
			if pending[offsets.TopicPartition{Topic: out[i].Topic, Partition: p.Partition}] {
				md := ""
				p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = int64(offsets.NoOffset), -1, &md, errUnstableOffset
			}
		}
	}
	return out, errNone
}

// committedOffsets is fetchOffsets without the pending check.
func (c *Coordinator) committedOffsets(group string, topics []offsetTopic) ([]kmsg.OffsetFetchResponseTopic, int16) {
	if topics == nil {
		all, err := c.store.GroupOffsets(group)
		if err != nil {
			c.log.Warn("group-offset-fetch-failed", zap.String("group", group), zap.Error(err))
			return nil, errCoordinatorNA
		}
		var out []kmsg.OffsetFetchResponseTopic
		for _, cm := range all {
			if len(out) == 0 || out[len(out)-1].Topic != cm.Topic {
				rt := kmsg.NewOffsetFetchResponseTopic()
				rt.Topic = cm.Topic
				out = append(out, rt)
			}
			last := &out[len(out)-1]
			last.Partitions = append(last.Partitions, fetchedPartition(cm.Partition, cm, true))
		}
		return out, errNone
	}
	out := make([]kmsg.OffsetFetchResponseTopic, 0, len(topics))
	for _, t := range topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.topic
		for _, p := range t.partitions {
			cm, ok, err := c.store.Get(group, offsets.TopicPartition{Topic: t.topic, Partition: p})
			if err != nil {
				c.log.Warn("group-offset-fetch-failed", zap.String("group", group), zap.Error(err))
				return nil, errCoordinatorNA
			}
			rt.Partitions = append(rt.Partitions, fetchedPartition(p, cm, ok))
		}
		out = append(out, rt)
	}
	return out, errNone
}

func fetchedPartition(p int32, cm offsets.Commit, ok bool) kmsg.OffsetFetchResponseTopicPartition {
	rp := kmsg.NewOffsetFetchResponseTopicPartition()
	rp.Partition = p
	md := ""
	if ok {
		rp.Offset, rp.LeaderEpoch, md = int64(cm.Offset), cm.LeaderEpoch, cm.Metadata
	} else {
		rp.Offset = int64(offsets.NoOffset)
	}
	rp.Metadata = &md
	return rp
}

// OffsetDelete handles OffsetDelete v0: an Empty group's offsets go; a
// live consumer group keeps the offsets of topics its members subscribe to
// (GROUP_SUBSCRIBED_TO_TOPIC); a partition the broker does not have is
// UNKNOWN_TOPIC_OR_PARTITION, as Kafka answers it. A deleted partition's
// pending transactional offsets go with its committed one, as Kafka's
// tombstone drops them.
func (c *Coordinator) OffsetDelete(req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	g := c.lookup(req.Group)
	if g == nil {
		resp.ErrorCode = errGroupNotFound
		return resp
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.mu.state == stateDead:
		resp.ErrorCode = errGroupNotFound
		return resp
	case g.mu.state != stateEmpty && g.mu.protocolType != "consumer":
		resp.ErrorCode = errNonEmptyGroup
		return resp
	}
	var doomed []offsets.TopicPartition
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		subscribed := g.mu.state != stateEmpty && g.mu.subscribed[t.Topic] || g.consumerSubscribedLocked(t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			switch {
			case !c.partitionExists(t.Topic, p.Partition):
				rp.ErrorCode = errUnknownTopic // Kafka checks the partition before the group
			case subscribed:
				rp.ErrorCode = errSubscribedToTopic
			default:
				doomed = append(doomed, offsets.TopicPartition{Topic: t.Topic, Partition: p.Partition})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if err := c.store.DeleteOffsets(g.id, doomed); err != nil {
		c.log.Warn("group-offset-delete-failed", zap.String("group", g.id), zap.Error(err))
		resp.Topics, resp.ErrorCode = nil, errCoordinatorNA
	}
	return resp
}
