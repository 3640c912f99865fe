package group

import "github.com/twmb/franz-go/pkg/kerr"

var errUnsupportedVersion = kerr.UnsupportedVersion.Code

// validateConsumerCommitLocked is Kafka's ConsumerGroup.validateOffsetCommit
// (commits at the member epoch): outside group management (a negative epoch) only into a group
// without members; otherwise the member must exist (UNKNOWN_MEMBER_ID),
// commit with OffsetCommit v9+ unless transactional (UNSUPPORTED_VERSION),
// and with its current member epoch (STALE_MEMBER_EPOCH).
func (g *group) validateConsumerCommitLocked(memberID string, epoch int32, oldVersion, txn bool) int16 {
	if g.mu.state == stateDead {
		return errCoordinatorNA
	}
	memberEpoch, known, empty := g.memberEpochLocked(memberID)
	if epoch < 0 && empty {
		return errNone
	}
	if !known {
		return errUnknownMember
	}
	if g.classicMemberIDLocked(memberID) {
		// A classic member (migrate.go) commits with its generation,
		// any version: ILLEGAL_GENERATION, as Kafka's validateMemberEpoch.
		if epoch != memberEpoch {
			return errIllegalGeneration
		}
		return errNone
	}
	if !txn && oldVersion {
		return errUnsupportedVersion
	}
	if epoch != memberEpoch {
		return errStaleEpoch
	}
	return errNone
}

// classicMemberIDLocked: id is a consumer group member that speaks the
// classic protocol.
func (g *group) classicMemberIDLocked(id string) bool {
	if g.mu.typ != typeConsumer {
		return false
	}
	m := g.mu.cons.members[id]
	return m != nil && m.classic != nil
}

// validateOffsetFetch is Kafka's ConsumerGroup.validateOffsetFetch for
// OffsetFetch v9+ (commits at the member epoch): a request naming a member of a consumer group
// must carry its current epoch. Other groups and requests without a
// member (the admin client) are not checked.
func (c *Coordinator) validateOffsetFetch(group string, memberID *string, epoch int32) int16 {
	if memberID == nil && epoch < 0 {
		return errNone
	}
	g := c.lookup(group)
	if g == nil {
		return errNone
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.typ != typeConsumer && g.mu.typ != typeStreams {
		return errNone
	}
	id := ""
	if memberID != nil {
		id = *memberID
	}
	memberEpoch, known, _ := g.memberEpochLocked(id)
	if !known {
		return errUnknownMember
	}
	if epoch != memberEpoch && g.classicMemberIDLocked(id) {
		return errIllegalGeneration
	}
	if epoch != memberEpoch {
		return errStaleEpoch
	}
	return errNone
}

// memberEpochLocked is the epoch of a consumer or streams group's
// member, whether it is a member, and whether the group has none.
func (g *group) memberEpochLocked(id string) (epoch int32, known, empty bool) {
	if g.mu.typ == typeStreams {
		m := g.mu.strm.Members[id]
		if m == nil {
			return 0, false, len(g.mu.strm.Members) == 0
		}
		return m.Epoch, true, false
	}
	m := g.mu.cons.members[id]
	if m == nil {
		return 0, false, len(g.mu.cons.members) == 0
	}
	return m.epoch, true, false
}

// consumerSubscribedLocked: a member of the consumer group subscribes to
// topic (OffsetDelete's GROUP_SUBSCRIBED_TO_TOPIC).
func (g *group) consumerSubscribedLocked(topic string) bool {
	if g.mu.typ == typeStreams {
		return g.mu.strm.Subscribes(topic)
	}
	if g.mu.typ != typeConsumer || len(g.mu.cons.members) == 0 {
		return false
	}
	for _, t := range g.mu.cons.topics {
		if t.name == topic {
			return true
		}
	}
	return false
}
