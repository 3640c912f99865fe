package group

import (
	"bytes"
	"errors"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// consumerSnapshot is what the heartbeating member looked like before
// its heartbeat, to tell whether the answer must carry its assignment.
type consumerSnapshot struct {
	known    bool
	epoch    int32
	assigned assignment
}

func (g *group) consumerSnapshotLocked(id string) consumerSnapshot {
	m := g.mu.cons.members[id]
	if m == nil {
		return consumerSnapshot{}
	}
	return consumerSnapshot{known: true, epoch: m.epoch, assigned: m.assigned}
}

// memberChanged: m is new, or its epoch or partitions changed (the
// assignments are replaced, never changed in place, so the snapshot's
// stays as it was).
func (s consumerSnapshot) memberChanged(m *cmember) bool {
	return !s.known || s.epoch != m.epoch || !s.assigned.equal(m.assigned)
}

func toTPs(a assignment) []offsets.TopicPartitions {
	var out []offsets.TopicPartitions
	for _, t := range sortedTopicsOf(a) {
		out = append(out, offsets.TopicPartitions{TopicID: t, Partitions: a[t]})
	}
	return out
}

func fromTPs(tps []offsets.TopicPartitions) assignment {
	a := make(assignment, len(tps))
	for _, t := range tps {
		a[t.TopicID] = t.Partitions
	}
	return a
}

// consumerRecordLocked is the group as persisted (the durable consumer group state).
func (g *group) consumerRecordLocked() offsets.ConsumerGroup {
	cs := g.mu.cons
	st := offsets.GroupActive
	if len(cs.members) == 0 {
		st = offsets.GroupEmpty
	}
	rec := offsets.ConsumerGroup{
		Group: offsets.Group{
			ID: g.id, ProtocolType: offsets.ConsumerProtocolType, Generation: cs.epoch,
			State: st, StateTime: g.mu.stateTime,
		},
		AssignmentEpoch: cs.assignmentEpoch, Assignor: cs.assignor,
	}
	for _, id := range sortedTopics(topicParts(cs.topics)) {
		t := cs.topics[id]
		rec.Topics = append(rec.Topics, offsets.ConsumerTopic{ID: id, Name: t.name, Partitions: t.partitions})
	}
	for _, m := range cs.sortedMembers() {
		rec.Members = append(rec.Members, offsets.ConsumerMember{
			ID: m.id, InstanceID: m.instanceID, RackID: m.rackID, ClientID: m.clientID, ClientHost: m.clientHost,
			Epoch: m.epoch, PreviousEpoch: m.prevEpoch, State: int8(m.state), RebalanceTimeout: m.rebalanceTimeout,
			Topics: m.topics, Regex: m.regex, Assignor: m.assignor,
			Assigned: toTPs(m.assigned), Revoking: toTPs(m.revoking), Target: toTPs(cs.target[m.id]),
			Classic: m.classic.record(),
		})
	}
	return rec
}

func topicParts(t map[topicID]topicMeta) map[topicID]int32 {
	out := make(map[topicID]int32, len(t))
	for id, m := range t {
		out[id] = m.partitions
	}
	return out
}

// persistConsumerLocked writes the group's state, synced, if it differs
// from what was last written (durable consumer group state); the caller answers only after. If the
// write fails (or the state exceeds MaxGroupStateBytes) the group goes
// back to its last durable state, so what is in memory is always what
// the answers sent so far were based on, and the failing request gets
// the error.
func (g *group) persistConsumerLocked() int16 {
	if g.mu.deferWrite {
		g.mu.dirty = true // written, and answered, after the batch (consumer_batch.go)
		return errNone
	}
	g.mu.dirty = false
	rec := g.consumerRecordLocked()
	enc := offsets.EncodeConsumerGroup(rec)
	if bytes.Equal(enc, g.mu.consWritten) {
		return errNone
	}
	if len(g.mu.cons.members) == 0 && len(g.mu.consWritten) > 0 {
		g.mu.stateTime = g.c.clock.Now() // Empty from now: retention counts from here
		rec.StateTime = g.mu.stateTime
		enc = offsets.EncodeConsumerGroup(rec)
	}
	g.writes.Lock() // in order with a classic assignment being written (assign_store.go)
	err := g.c.store.PutConsumerGroup(rec, g.c.cfg.MaxGroupStateBytes)
	g.writes.Unlock()
	if err == nil {
		g.mu.consWritten, g.mu.consDurable, g.mu.classicBefore = enc, rec, nil
		return errNone
	}
	g.c.log.Warn("consumer-group-persist-failed", zap.String("group", g.id), zap.Int32("epoch", rec.Generation), zap.Error(err))
	g.rollbackConsumerLocked()
	if errors.Is(err, offsets.ErrTooLarge) {
		return errUnknownServer
	}
	return errCoordinatorNA
}

// rollbackConsumerLocked puts the group back to its last durable state
// (an empty consumer group if none was written).
func (g *group) rollbackConsumerLocked() {
	if g.mu.classicBefore != nil {
		g.rollbackUpgradeLocked()
		return
	}
	for _, m := range g.mu.cons.members {
		g.stopMemberTimersLocked(m)
	}
	g.applyConsumerRecordLocked(g.mu.consDurable)
}

// applyConsumerRecordLocked makes rec the group's consumer state: members
// at their epochs with their partitions, the target and the subscribed
// topics' metadata as written, every session (and revocation) timer
// started afresh.
func (g *group) applyConsumerRecordLocked(rec offsets.ConsumerGroup) {
	g.mu.typ, g.mu.cons = typeConsumer, newConsumerState()
	g.mu.protocolType = offsets.ConsumerProtocolType
	if !rec.StateTime.IsZero() {
		g.mu.stateTime = rec.StateTime
	}
	cs := g.mu.cons
	cs.epoch, cs.assignmentEpoch, cs.assignor = rec.Generation, rec.AssignmentEpoch, rec.Assignor
	for _, t := range rec.Topics {
		cs.topics[t.ID] = topicMeta{t.Name, t.Partitions}
	}
	for _, pm := range rec.Members {
		m := &cmember{
			id: pm.ID, instanceID: pm.InstanceID, rackID: pm.RackID, clientID: pm.ClientID, clientHost: pm.ClientHost,
			epoch: pm.Epoch, prevEpoch: pm.PreviousEpoch, state: memberState(pm.State), rebalanceTimeout: pm.RebalanceTimeout,
			topics: pm.Topics, regex: pm.Regex, assignor: pm.Assignor,
			assigned: fromTPs(pm.Assigned), revoking: fromTPs(pm.Revoking),
			classic: classicFromRecord(pm.Classic),
		}
		cs.members[m.id] = m
		cs.target[m.id] = fromTPs(pm.Target)
		if m.instanceID != nil {
			cs.static[*m.instanceID] = m.id
		}
		cs.hold(m)
	}
	cs.syncRegexes()
	cs.checked = g.c.clock.Now()
	for _, m := range cs.members {
		g.scheduleConsumerSessionLocked(m)
		if m.state == memberUnrevoked {
			g.scheduleRevokeLocked(m)
		}
	}
}

// loadConsumerGroup rebuilds a persisted consumer group (consumer groups restored at restart), so members
// heartbeating with their epoch go on without a reassignment. Sessions
// start at the load, as for classic groups (classic membership restored at restart).
func (c *Coordinator) loadConsumerGroup(rec offsets.ConsumerGroup) *group {
	g := newGroup(c, rec.ID)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.applyConsumerRecordLocked(rec)
	g.mu.consDurable = rec
	g.mu.consWritten = offsets.EncodeConsumerGroup(g.consumerRecordLocked())
	return g
}

// record is the member's classic metadata as persisted; nil for a
// consumer-protocol member.
func (cm *classicMeta) record() *offsets.ClassicMemberMetadata {
	if cm == nil {
		return nil
	}
	r := &offsets.ClassicMemberMetadata{SessionTimeout: cm.sessionTimeout}
	for _, p := range cm.protocols {
		r.Protocols = append(r.Protocols, offsets.Protocol{Name: p.Name, Metadata: p.Metadata})
	}
	return r
}

func classicFromRecord(r *offsets.ClassicMemberMetadata) *classicMeta {
	if r == nil {
		return nil
	}
	cm := &classicMeta{sessionTimeout: r.SessionTimeout}
	for _, p := range r.Protocols {
		cm.protocols = append(cm.protocols, kmsg.JoinGroupRequestProtocol{Name: p.Name, Metadata: p.Metadata})
	}
	return cm
}
