package group

import (
	"slices"
	"strings"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// Online migration between the classic protocol and the consumer
// protocol (KIP-848's upgrade path), as Kafka's GroupMetadataManager:
//
//   - Upgrade: a ConsumerGroupHeartbeat join to a classic group with
//     members of protocol type "consumer" converts it to a consumer group
//     when group.consumer.migration.policy allows (upgrade or
//     bidirectional) and it has at most group.max.size members. Every
//     classic member becomes a consumer group member at the classic
//     generation with its last assignment as its partitions and target,
//     its subscription (and rack) read from its JoinGroup metadata, and
//     its classic session timeout and protocols kept (classicMeta).
//     Blocked JoinGroups and SyncGroups are answered
//     REBALANCE_IN_PROGRESS. The joining member then advances the group
//     epoch, so the server-side assignor computes the new target (the group epoch and target assignment).
//   - Classic members of a consumer group keep speaking JoinGroup,
//     SyncGroup, Heartbeat, LeaveGroup and OffsetCommit: a JoinGroup
//     updates the member's subscription and owned partitions and
//     reconciles it (revocation before reassignment) at once, answering its member epoch as the
//     generation (no leader: the server assigns); SyncGroup returns its
//     assigned partitions as a ConsumerProtocolAssignment; Heartbeat
//     answers REBALANCE_IN_PROGRESS while the member is behind the group
//     epoch or has partitions to revoke, so it rejoins. A member that
//     does not rejoin (after REBALANCE_IN_PROGRESS) or sync (after its
//     join) within its rebalance timeout, or does not heartbeat within
//     its classic session timeout, is removed.
//   - Downgrade: when the last consumer-protocol member leaves or is
//     removed (epoch -1 or a timeout) and only classic members remain,
//     the group becomes a classic group (policy downgrade or
//     bidirectional, at most group.max.size members): generation = group
//     epoch, each member's target as its assignment, then a rebalance,
//     so the members rejoin under the classic protocol.
//
// Every conversion is durable in one write (the other type's record goes
// in the same batch, the durable consumer group state) before any answer depends on it.

// Migration policies: group.consumer.migration.policy.
const (
	MigrationBidirectional = "bidirectional" // Kafka's default
	MigrationUpgrade       = "upgrade"
	MigrationDowngrade     = "downgrade"
	MigrationDisabled      = "disabled"
)

func validMigrationPolicy(p string) bool {
	switch strings.ToLower(p) {
	case MigrationBidirectional, MigrationUpgrade, MigrationDowngrade, MigrationDisabled:
		return true
	}
	return false
}

func (c *Coordinator) upgradeEnabled() bool {
	p := strings.ToLower(c.cfg.ConsumerMigrationPolicy)
	return p == MigrationBidirectional || p == MigrationUpgrade
}

func (c *Coordinator) downgradeEnabled() bool {
	p := strings.ToLower(c.cfg.ConsumerMigrationPolicy)
	return p == MigrationBidirectional || p == MigrationDowngrade
}

// classicMeta is what a consumer group keeps of a member that speaks the
// classic protocol (Kafka's ClassicMemberMetadata), and its join and
// sync deadlines.
type classicMeta struct {
	sessionTimeout time.Duration
	protocols      []kmsg.JoinGroupRequestProtocol
	// join runs from a REBALANCE_IN_PROGRESS until the member rejoins,
	// sync from its join until it syncs; either firing removes it.
	join, sync       Timer
	joinSeq, syncSeq uint64
}

func (cm *classicMeta) protocolName() string {
	if len(cm.protocols) == 0 {
		return ""
	}
	return cm.protocols[0].Name
}

// topicIndex maps topic names to what the TopicLister says of them.
func (g *group) topicIndexLocked() map[string]TopicInfo {
	var all []TopicInfo
	if g.c.cfg.Metadata != nil {
		all = g.c.cfg.Metadata.Topics()
	}
	out := make(map[string]TopicInfo, len(all))
	for _, t := range all {
		out[t.Name] = t
	}
	return out
}

// topicName is a topic id's name: from the group's subscribed topics,
// else from the TopicLister.
func (g *group) topicNameLocked(id topicID, index map[string]TopicInfo) (string, bool) {
	if t, ok := g.mu.cons.topics[id]; ok {
		return t.name, true
	}
	for _, t := range index {
		if t.ID == id {
			return t.Name, true
		}
	}
	return "", false
}

// byName turns partitions named by topic into an assignment by topic id;
// topics that do not exist (any more) are dropped.
func byName(index map[string]TopicInfo, topics map[string][]int32) assignment {
	var tps []tp
	for name, parts := range topics {
		t, ok := index[name]
		if !ok {
			continue
		}
		for _, p := range parts {
			if p >= 0 && p < t.Partitions {
				tps = append(tps, tp{t.ID, p})
			}
		}
	}
	return assignmentOf(tps)
}

// subscriptionOf reads a classic member's ConsumerProtocolSubscription.
func subscriptionOf(metadata []byte) (*kmsg.ConsumerMemberMetadata, bool) {
	var s kmsg.ConsumerMemberMetadata
	if err := s.ReadFrom(metadata); err != nil {
		return nil, false
	}
	return &s, true
}

// encodeAssignment is a as a ConsumerProtocolAssignment in the version of
// the member's protocol metadata (capped at the assignment's newest, 3).
func (g *group) encodeAssignmentLocked(a assignment, metadata []byte, index map[string]TopicInfo) []byte {
	ca := kmsg.NewConsumerMemberAssignment()
	if s, ok := subscriptionOf(metadata); ok {
		ca.Version = min(max(s.Version, 0), 3)
	}
	for _, t := range sortedTopicsOf(a) {
		name, ok := g.topicNameLocked(t, index)
		if !ok {
			continue
		}
		ca.Topics = append(ca.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: name, Partitions: slices.Clone(a[t])})
	}
	return ca.AppendTo(nil)
}

// upgradeLocked converts a classic group with members into a consumer
// group (Kafka's validateOnlineUpgrade and convertToConsumerGroup). It
// stays in memory until the joining member's heartbeat persists it; if
// that write fails the group goes back to the classic group it was
// (rollbackConsumerLocked).
func (g *group) upgradeLocked() (int16, string) {
	notConsumer := "Group " + g.id + " is not a consumer group"
	switch {
	case !g.c.upgradeEnabled(), g.mu.protocolType != offsets.ConsumerProtocolType,
		len(g.mu.members) > g.c.cfg.MaxGroupSize:
		return errGroupNotFound, notConsumer
	}
	index := g.topicIndexLocked()
	cs := newConsumerState()
	cs.epoch, cs.assignmentEpoch = g.mu.generation, g.mu.generation
	for _, m := range g.sortedMembersLocked() {
		meta := m.metadataFor(g.mu.protocol)
		if g.mu.protocol == "" && len(m.protocols) > 0 {
			meta = m.protocols[0].Metadata
		}
		sub, ok := subscriptionOf(meta)
		if !ok {
			return errGroupNotFound, "Cannot upgrade the classic group " + g.id +
				" to consumer group because the embedded consumer protocol is malformed."
		}
		assigned := assignment{}
		if len(m.assignment) > 0 {
			var ca kmsg.ConsumerMemberAssignment
			if err := ca.ReadFrom(m.assignment); err != nil {
				return errGroupNotFound, "Cannot upgrade the classic group " + g.id +
					" to consumer group because the embedded consumer protocol is malformed."
			}
			named := make(map[string][]int32)
			for _, t := range ca.Topics {
				named[t.Topic] = append(named[t.Topic], t.Partitions...)
			}
			assigned = byName(index, named)
		}
		topics := slices.Clone(sub.Topics)
		slices.Sort(topics)
		cm := &cmember{
			id: m.id, instanceID: m.instanceID, rackID: sub.Rack, clientID: m.clientID, clientHost: m.clientHost,
			principal: m.principal, peerHost: m.peerHost,
			epoch: g.mu.generation, prevEpoch: g.mu.generation, state: memberStable,
			rebalanceTimeout: m.rebalanceTimeout, topics: slices.Compact(topics),
			assigned: assigned, revoking: assignment{},
			classic: &classicMeta{sessionTimeout: m.sessionTimeout, protocols: slices.Clone(m.protocols)},
		}
		cs.members[cm.id] = cm
		cs.target[cm.id] = assigned
		if cm.instanceID != nil {
			cs.static[*cm.instanceID] = cm.id
		}
	}
	// A partition two classic members claim (a stale assignment) goes
	// to the first: the owners map holds one owner per partition.
	for _, m := range cs.sortedMembers() {
		var keep []tp
		for _, x := range m.assigned.tps() {
			if _, taken := cs.owners[x]; !taken {
				cs.owners[x] = m.id
				keep = append(keep, x)
			}
		}
		m.assigned = assignmentOf(keep)
		cs.target[m.id] = m.assigned
	}
	g.c.log.Info("group-upgraded", zap.String("group", g.id), zap.Int32("generation", g.mu.generation), zap.Int("members", len(cs.members)))
	before := g.stateLocked()
	for _, m := range g.mu.members {
		m.answerJoinLocked(joinResult{code: errRebalancing, memberID: m.id})
		m.answerSyncLocked(syncResult{code: errRebalancing})
	}
	g.stopTimersLocked()
	g.mu.members, g.mu.static = make(map[string]*member), make(map[string]string)
	g.mu.pending, g.mu.pendingSync = make(map[string]Timer), make(map[string]bool)
	g.mu.leader, g.mu.protocol, g.mu.subscribed = "", "", nil
	g.setStateLocked(stateEmpty)
	g.mu.typ, g.mu.cons, g.mu.protocolType = typeConsumer, cs, offsets.ConsumerProtocolType
	g.mu.classicBefore = &before
	cs.syncRegexes()
	cs.checked = time.Time{}
	for _, m := range cs.members {
		g.scheduleConsumerSessionLocked(m)
	}
	return errNone, ""
}

// classicCount is how many members speak the classic protocol, and how
// many of them support each protocol name.
func (cs *consumerState) classicCount() (int, map[string]int) {
	n, counts := 0, make(map[string]int)
	for _, m := range cs.members {
		if m.classic == nil {
			continue
		}
		n++
		for _, p := range m.classic.protocols {
			counts[p.Name]++
		}
	}
	return n, counts
}

// supportsClassic is Kafka's ConsumerGroup.supportsClassicProtocols.
func (cs *consumerState) supportsClassic(protocolType string, protocols []kmsg.JoinGroupRequestProtocol) bool {
	if protocolType != offsets.ConsumerProtocolType {
		return false
	}
	if len(cs.members) == 0 {
		return len(protocols) > 0
	}
	n, counts := cs.classicCount()
	for _, p := range protocols {
		if counts[p.Name] == n {
			return true
		}
	}
	return false
}

// classicJoinToConsumerLocked is a JoinGroup to a consumer group with
// members (Kafka's classicGroupJoinToConsumerGroup): answered at once,
// after the change is durable.
func (g *group) classicJoinToConsumerLocked(j joinReq) joinResult {
	cs := g.mu.cons
	// Kafka answers these errors without the member id.
	fail := func(code int16) joinResult { return joinResult{code: code, memberID: noMember} }
	id := j.memberID
	unknown := id == noMember
	if unknown {
		id = newMemberID(j.client.ID, nil)[len(j.client.ID)+1:]
	}
	if cs.members[id] == nil && (j.instanceID == nil || cs.static[*j.instanceID] == "") && len(cs.members) >= g.c.cfg.MaxGroupSize {
		return fail(errGroupFull)
	}
	if !cs.supportsClassic(j.protocolType, j.protocols) {
		return fail(errInconsistentProto)
	}
	if unknown && j.instanceID == nil && j.version >= 4 {
		return joinResult{code: errMemberIDRequired, memberID: id}
	}
	sub, ok := subscriptionOf(j.protocols[0].Metadata)
	if !ok {
		return fail(errInconsistentProto)
	}
	m := cs.members[id]
	var replaced *cmember
	if j.instanceID != nil {
		cur := cs.static[*j.instanceID]
		switch {
		case cur != "" && cur != id && unknown:
			replaced = cs.members[cur]
		case cur != "" && cur != id:
			return fail(errFenced)
		case cur == "" && !unknown:
			return fail(errUnknownMember)
		}
	}
	topics := slices.Clone(sub.Topics)
	slices.Sort(topics)
	topics = slices.Compact(topics)
	bump := false
	switch {
	case m != nil:
		bump = !slices.Equal(topics, m.topics) || m.regex != ""
	case replaced != nil:
		m = g.replaceStaticMemberLocked(replaced, id)
		bump = !slices.Equal(topics, m.topics) || m.regex != ""
	default:
		m = &cmember{id: id, instanceID: j.instanceID, assigned: assignment{}, revoking: assignment{}}
		cs.members[id] = m
		if m.instanceID != nil {
			cs.static[*m.instanceID] = id
		}
		bump = true
	}
	m.topics, m.regex = topics, ""
	if sub.Rack != nil {
		m.rackID = sub.Rack
	}
	m.clientID, m.clientHost = j.client.ID, j.client.Host
	if m.principal != j.client.Principal || m.peerHost != j.client.PeerHost {
		m.principal, m.peerHost = j.client.Principal, j.client.PeerHost
		cs.checked = time.Time{}
	}
	m.rebalanceTimeout = j.rebalanceTimeout
	if m.classic == nil {
		m.classic = &classicMeta{}
	}
	m.classic.sessionTimeout, m.classic.protocols = j.sessionTimeout, slices.Clone(j.protocols)
	if bump {
		g.bumpLocked()
	} else {
		g.refreshMetadataLocked()
	}
	owned := assignment{}
	if len(sub.OwnedPartitions) > 0 {
		named := make(map[string][]int32)
		for _, o := range sub.OwnedPartitions {
			named[o.Topic] = append(named[o.Topic], o.Partitions...)
		}
		owned = byName(g.topicIndexLocked(), named)
	}
	cs.reconcile(m, owned)
	if code := g.persistConsumerLocked(); code != errNone {
		return fail(code) // the group is back at its last durable state
	}
	g.stopClassicTimerLocked(&m.classic.join)
	g.scheduleConsumerSessionLocked(m)
	g.scheduleClassicDeadlineLocked(m, false)
	return joinResult{
		memberID: m.id, generation: m.epoch, protocolType: offsets.ConsumerProtocolType,
		protocol: m.classic.protocolName(),
	}
}

// classicMemberLocked is Kafka's validateConsumerGroupMember followed by
// throwIfMemberDoesNotUseClassicProtocol: the member by instance id
// (FENCED_INSTANCE_ID if another member id holds it) or member id,
// speaking the classic protocol (else UNKNOWN_MEMBER_ID).
func (g *group) classicMemberLocked(memberID string, instanceID *string) (*cmember, int16) {
	cs := g.mu.cons
	var m *cmember
	if instanceID == nil {
		m = cs.members[memberID]
	} else if cur := cs.static[*instanceID]; cur != "" {
		m = cs.members[cur]
		if m != nil && m.id != memberID {
			return nil, errFenced
		}
	}
	if m == nil || m.classic == nil {
		return nil, errUnknownMember
	}
	return m, errNone
}

// rejoinDueLocked: the classic member must rejoin (Kafka's conditions in
// classicGroupHeartbeatToConsumerGroup): it is behind the group epoch,
// has partitions to revoke, or partitions it waited for are free now.
func (g *group) rejoinDueLocked(m *cmember) bool {
	cs := g.mu.cons
	if m.epoch < cs.epoch || m.state == memberUnrevoked {
		return true
	}
	if m.state == memberUnreleased {
		for _, x := range cs.target[m.id].tps() {
			if o, held := cs.owners[x]; held && o != m.id {
				return false // still waiting on another member
			}
		}
		return true
	}
	return false
}

// classicSyncToConsumerLocked is Kafka's classicGroupSyncToConsumerGroup.
func (g *group) classicSyncToConsumerLocked(req *kmsg.SyncGroupRequest) syncResult {
	m, code := g.classicMemberLocked(req.MemberID, req.InstanceID)
	if code != errNone {
		return syncResult{code: code}
	}
	switch {
	case req.Generation != m.epoch:
		return syncResult{code: errIllegalGeneration}
	case req.ProtocolType != nil && *req.ProtocolType != offsets.ConsumerProtocolType,
		req.Protocol != nil && *req.Protocol != m.classic.protocolName():
		return syncResult{code: errInconsistentProto}
	case g.mu.cons.epoch > m.epoch && m.state != memberUnrevoked:
		g.scheduleClassicDeadlineLocked(m, true)
		return syncResult{code: errRebalancing}
	}
	g.stopClassicTimerLocked(&m.classic.sync)
	g.scheduleConsumerSessionLocked(m)
	name := m.classic.protocolName()
	return syncResult{
		protocolType: offsets.ConsumerProtocolType, protocol: name,
		assignment: g.encodeAssignmentLocked(m.assigned, m.classic.protocols[0].Metadata, g.topicIndexLocked()),
	}
}

// classicHeartbeatToConsumerLocked is Kafka's
// classicGroupHeartbeatToConsumerGroup.
func (g *group) classicHeartbeatToConsumerLocked(req *kmsg.HeartbeatRequest) int16 {
	m, code := g.classicMemberLocked(req.MemberID, req.InstanceID)
	if code != errNone {
		return code
	}
	if req.Generation != m.epoch {
		return errIllegalGeneration
	}
	g.scheduleConsumerSessionLocked(m)
	if g.rejoinDueLocked(m) {
		g.scheduleClassicDeadlineLocked(m, true)
		return errRebalancing
	}
	return errNone
}

// classicLeaveToConsumerLocked is Kafka's classicGroupLeaveToConsumerGroup:
// each classic member named leaves; the group epoch advances once.
func (g *group) classicLeaveToConsumerLocked(leaving []kmsg.LeaveGroupRequestMember, codes []int16) int16 {
	cs := g.mu.cons
	var gone []*cmember
	for i, lm := range leaving {
		var m *cmember
		if lm.InstanceID == nil {
			m = cs.members[lm.MemberID]
		} else if cur := cs.static[*lm.InstanceID]; cur != "" {
			m = cs.members[cur]
			if m != nil && lm.MemberID != noMember && m.id != lm.MemberID {
				codes[i] = errFenced
				continue
			}
		}
		if m == nil || m.classic == nil {
			codes[i] = errUnknownMember
			continue
		}
		g.stopMemberTimersLocked(m)
		cs.release(m)
		delete(cs.members, m.id)
		delete(cs.target, m.id)
		if m.instanceID != nil && cs.static[*m.instanceID] == m.id {
			delete(cs.static, *m.instanceID)
		}
		gone = append(gone, m)
	}
	if len(gone) == 0 {
		return errNone
	}
	g.bumpLocked()
	return g.persistConsumerLocked()
}

// scheduleClassicDeadlineLocked starts m's join deadline (rejoin, once:
// Kafka's scheduleConsumerGroupJoinTimeoutIfAbsent) or restarts its sync
// deadline; either is its rebalance timeout.
func (g *group) scheduleClassicDeadlineLocked(m *cmember, join bool) {
	cm := m.classic
	t, seq := &cm.sync, &cm.syncSeq
	if join {
		if cm.join != nil {
			return
		}
		t, seq = &cm.join, &cm.joinSeq
	}
	g.stopClassicTimerLocked(t)
	*seq = g.nextSeqLocked()
	s, id := *seq, m.id
	timeout := m.rebalanceTimeout
	if timeout <= 0 {
		timeout = cm.sessionTimeout
	}
	*t = g.c.clock.AfterFunc(timeout, func() { g.expireClassicMember(id, s, join) })
}

func (g *group) stopClassicTimerLocked(t *Timer) {
	if *t != nil {
		(*t).Stop()
		*t = nil
	}
}

func (g *group) expireClassicMember(id string, seq uint64, join bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c.closing.Load() || g.mu.typ != typeConsumer {
		return
	}
	m := g.mu.cons.members[id]
	if m == nil || m.classic == nil || (join && (m.classic.join == nil || m.classic.joinSeq != seq)) ||
		(!join && (m.classic.sync == nil || m.classic.syncSeq != seq)) {
		return
	}
	g.c.log.Info("classic-member-expired", zap.String("group", g.id), zap.String("member", id), zap.Bool("join-timeout", join))
	g.removeConsumerMemberLocked(m)
	g.persistConsumerLocked()
}

// downgradeDueLocked is Kafka's validateOnlineDowngradeWithFencedMember:
// m speaks the consumer protocol, every other member (there is one at
// least) speaks the classic one, the policy allows and they fit a
// classic group.
func (g *group) downgradeDueLocked(m *cmember) bool {
	cs := g.mu.cons
	if m.classic != nil || len(cs.members) <= 1 || !g.c.downgradeEnabled() || len(cs.members)-1 > g.c.cfg.MaxGroupSize {
		return false
	}
	n, _ := cs.classicCount()
	return n == len(cs.members)-1
}

// downgradeLocked turns the consumer group, less the leaving member, into
// a classic group (Kafka's convertToClassicGroup): Stable at the group
// epoch with each member's target assignment, persisted, then a
// rebalance. It returns the write's error code.
func (g *group) downgradeLocked(leaving *cmember) int16 {
	cs := g.mu.cons
	index := g.topicIndexLocked()
	g.c.log.Info("group-downgraded", zap.String("group", g.id), zap.Int32("epoch", cs.epoch), zap.Int("members", len(cs.members)-1))
	for _, m := range cs.members {
		g.stopMemberTimersLocked(m)
	}
	targets := make(map[string]assignment, len(cs.members))
	g.mu.members, g.mu.static = make(map[string]*member), make(map[string]string)
	g.mu.leader = ""
	g.mu.protocolType = offsets.ConsumerProtocolType
	for _, cm := range cs.sortedMembers() {
		if cm.id == leaving.id {
			continue
		}
		g.addMemberLocked(&member{
			id: cm.id, instanceID: cm.instanceID, clientID: cm.clientID, clientHost: cm.clientHost,
			principal: cm.principal, peerHost: cm.peerHost,
			sessionTimeout: cm.classic.sessionTimeout, rebalanceTimeout: cm.rebalanceTimeout,
			protocolType: offsets.ConsumerProtocolType, protocols: cm.classic.protocols,
		})
		targets[cm.id] = cs.target[cm.id]
	}
	g.mu.protocol = g.selectProtocolLocked()
	for id, m := range g.mu.members {
		m.assignment = g.encodeAssignmentLocked(targets[id], m.metadataFor(g.mu.protocol), index)
	}
	g.mu.generation = cs.epoch
	g.mu.typ, g.mu.cons, g.mu.consWritten, g.mu.consDurable = typeClassic, nil, nil, offsets.ConsumerGroup{}
	g.mu.classicBefore = nil
	g.transitionLocked(stateStable)
	g.mu.subscribed = g.subscriptionsLocked()
	code := g.persistMembersLocked()
	for _, m := range g.mu.members {
		g.scheduleSessionLocked(m)
	}
	g.prepareRebalanceLocked()
	return code
}

// rollbackUpgradeLocked: the write that would have made a just-upgraded
// group durable failed, so it is the classic group it was again.
func (g *group) rollbackUpgradeLocked() {
	before := g.mu.classicBefore
	g.mu.classicBefore = nil
	for _, m := range g.mu.cons.members {
		g.stopMemberTimersLocked(m)
	}
	g.mu.typ, g.mu.cons, g.mu.consWritten, g.mu.consDurable = typeClassic, nil, nil, offsets.ConsumerGroup{}
	g.applyClassicLocked(*before)
}
