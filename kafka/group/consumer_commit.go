package group

import "github.com/twmb/franz-go/pkg/kerr"

var errUnsupportedVersion = kerr.UnsupportedVersion.Code

// validateConsumerCommitLocked is Kafka's ConsumerGroup.validateOffsetCommit
// (G17): outside group management (a negative epoch) only into a group
// without members; otherwise the member must exist (UNKNOWN_MEMBER_ID),
// commit with OffsetCommit v9+ unless transactional (UNSUPPORTED_VERSION),
// and with its current member epoch (STALE_MEMBER_EPOCH).
func (g *group) validateConsumerCommitLocked(memberID string, epoch int32, oldVersion, txn bool) int16 {
	cs := g.mu.cons
	if g.mu.state == stateDead {
		return errCoordinatorNA
	}
	if epoch < 0 && len(cs.members) == 0 {
		return errNone
	}
	m := cs.members[memberID]
	if m == nil {
		return errUnknownMember
	}
	if !txn && oldVersion {
		return errUnsupportedVersion
	}
	if epoch != m.epoch {
		return errStaleEpoch
	}
	return errNone
}

// validateOffsetFetch is Kafka's ConsumerGroup.validateOffsetFetch for
// OffsetFetch v9+ (G17): a request naming a member of a consumer group
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
	if g.mu.typ != typeConsumer {
		return errNone
	}
	id := ""
	if memberID != nil {
		id = *memberID
	}
	m := g.mu.cons.members[id]
	if m == nil {
		return errUnknownMember
	}
	if epoch != m.epoch {
		return errStaleEpoch
	}
	return errNone
}

// consumerSubscribedLocked: a member of the consumer group subscribes to
// topic (OffsetDelete's GROUP_SUBSCRIBED_TO_TOPIC).
func (g *group) consumerSubscribedLocked(topic string) bool {
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
