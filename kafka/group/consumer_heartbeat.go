package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// ConsumerGroupHeartbeat handles ConsumerGroupHeartbeat v0–1 (KIP-848):
// joins (member epoch 0), leaves (-1, and -2 for a static member that
// will come back), and heartbeats that report the owned partitions and
// get the member's next assignment (revocation before reassignment). Every change is durable before
// the answer (durable consumer group state). Only an answer that keeps the member in the group
// carries the heartbeat interval: an error or a leave answers 0, as
// Kafka's coordinator does.
func (c *Coordinator) ConsumerGroupHeartbeat(cl Client, req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := c.consumerGroupHeartbeat(cl, req)
	if resp.ErrorCode != errNone || req.MemberEpoch == epochLeave || req.MemberEpoch == epochStaticLeave {
		resp.HeartbeatIntervalMillis = 0
	}
	return resp
}

func (c *Coordinator) consumerGroupHeartbeat(cl Client, req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	resp.HeartbeatIntervalMillis = int32(c.heartbeatInterval(req.Group).Milliseconds())
	fail := func(code int16, msg string) *kmsg.ConsumerGroupHeartbeatResponse {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return resp
	}
	if code, msg := c.validateHeartbeat(req); code != errNone {
		return fail(code, msg)
	}
	var g *group
	if req.MemberEpoch == epochJoin {
		g = c.getOrCreate(req.Group)
	} else if g = c.lookup(req.Group); g == nil {
		return fail(errGroupNotFound, "consumer group "+req.Group+" not found")
	}
	return g.batchHeartbeat(cl, req, resp)
}

// heartbeatLocked applies one heartbeat to g and fills resp. Needs mu.
func (g *group) heartbeatLocked(cl Client, req *kmsg.ConsumerGroupHeartbeatRequest, resp *kmsg.ConsumerGroupHeartbeatResponse) *kmsg.ConsumerGroupHeartbeatResponse {
	fail := func(code int16, msg string) *kmsg.ConsumerGroupHeartbeatResponse {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return resp
	}
	if code, msg := g.becomeConsumerLocked(req.MemberEpoch == epochJoin); code != errNone {
		return fail(code, msg)
	}
	if g.tooManyRegexesLocked(req.SubscribedTopicRegex) {
		return fail(errInvalidRegex, "The group has too many distinct regular expressions.")
	}
	switch req.MemberEpoch {
	case epochJoin:
		return g.consumerJoinLocked(cl, req, resp)
	case epochLeave, epochStaticLeave:
		return g.consumerLeaveLocked(req, resp)
	default:
		return g.consumerBeatLocked(cl, req, resp)
	}
}

// validateHeartbeat is Kafka's request validation: INVALID_REQUEST,
// UNSUPPORTED_ASSIGNOR and INVALID_REGULAR_EXPRESSION before any state.
func (c *Coordinator) validateHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest) (int16, string) {
	switch {
	case req.Group == "" || len(req.Group) > maxGroupIDLen:
		return errInvalidRequest, "GroupId can't be empty."
	case req.InstanceID != nil && *req.InstanceID == "":
		return errInvalidRequest, "InstanceId can't be empty."
	case req.RackID != nil && *req.RackID == "":
		return errInvalidRequest, "RackId can't be empty."
	case req.MemberEpoch < epochStaticLeave:
		return errInvalidRequest, "MemberEpoch is invalid."
	case req.MemberID == "" && (req.Version >= 1 || req.MemberEpoch != epochJoin):
		return errInvalidRequest, "MemberId can't be empty."
	case req.MemberEpoch == epochStaticLeave && req.InstanceID == nil:
		return errInvalidRequest, "InstanceId can't be null."
	case len(req.SubscribedTopicNames) > maxSubscribedTopics:
		return errInvalidRequest, "Too many subscribed topic names."
	}
	if req.MemberEpoch == epochJoin {
		switch {
		case req.RebalanceTimeoutMillis == -1:
			return errInvalidRequest, "RebalanceTimeoutMs must be provided in first request."
		case req.Topics == nil || len(req.Topics) > 0:
			return errInvalidRequest, "TopicPartitions must be empty when (re-)joining."
		case req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil:
			return errInvalidRequest, "SubscribedTopicNames or SubscribedTopicRegex must be set in first request."
		}
	}
	if req.ServerAssignor != nil && !slices.Contains(c.cfg.ConsumerAssignors, *req.ServerAssignor) {
		return errUnsupportedAssignor, "ServerAssignor " + *req.ServerAssignor + " is not supported."
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != "" {
		if _, err := compileRegex(*req.SubscribedTopicRegex); err != nil {
			return errInvalidRegex, "SubscribedTopicRegex is invalid: " + err.Error()
		}
	}
	return errNone, ""
}

// becomeConsumerLocked turns an empty classic group into a consumer group
// on a join (Kafka's offline upgrade), and a classic group with members
// when the migration policy allows (upgradeLocked); otherwise a classic
// group is not a consumer group (GROUP_ID_NOT_FOUND, one group type per id).
func (g *group) becomeConsumerLocked(join bool) (int16, string) {
	if g.mu.state == stateDead {
		return errCoordinatorNA, ""
	}
	if g.mu.typ == typeConsumer {
		return errNone, ""
	}
	if join && g.mu.typ == typeClassic && len(g.mu.members) > 0 {
		return g.upgradeLocked() // online upgrade (migrate.go)
	}
	if !join || g.mu.typ == typeStreams || len(g.mu.members) > 0 || len(g.mu.pending) > 0 || g.mu.state != stateEmpty {
		return errGroupNotFound, "Group " + g.id + " is not a consumer group."
	}
	g.mu.typ = typeConsumer
	g.mu.cons = newConsumerState()
	g.mu.cons.epoch = 0
	return errNone, ""
}

func (g *group) consumerJoinLocked(cl Client, req *kmsg.ConsumerGroupHeartbeatRequest, resp *kmsg.ConsumerGroupHeartbeatResponse) *kmsg.ConsumerGroupHeartbeatResponse {
	cs := g.mu.cons
	id := req.MemberID
	if id == "" { // v0: the server names the member
		id = newMemberID(cl.ID, nil)[len(cl.ID)+1:]
	}
	m := cs.members[id]
	var replaced *cmember
	if req.InstanceID != nil {
		if oldID, ok := cs.static[*req.InstanceID]; ok && oldID != id {
			old := cs.members[oldID]
			if old != nil && old.epoch != epochStaticLeave {
				resp.ErrorCode = errUnreleasedInstance
				return resp
			}
			replaced = old
		}
	}
	if m == nil && replaced == nil && len(cs.members) >= g.c.cfg.MaxGroupSize {
		resp.ErrorCode = errGroupFull // The group size bound
		return resp
	}
	snap := g.consumerSnapshotLocked(id)
	bump := false
	switch {
	case m != nil: // a rejoin of a known member: its subscription may change
		bump = g.updateSubscriptionLocked(m, req)
	case replaced != nil: // a static member back under a new member id
		m = g.replaceStaticMemberLocked(replaced, id)
		bump = g.updateSubscriptionLocked(m, req)
	default:
		m = &cmember{id: id, instanceID: req.InstanceID, assigned: assignment{}, revoking: assignment{}}
		cs.members[id] = m
		if m.instanceID != nil {
			cs.static[*m.instanceID] = id
		}
		g.updateSubscriptionLocked(m, req)
		bump = true
	}
	m.clientID, m.clientHost, m.rackID = cl.ID, cl.Host, req.RackID
	if m.principal != cl.Principal || m.peerHost != cl.PeerHost {
		m.principal, m.peerHost = cl.Principal, cl.PeerHost
		cs.checked = time.Time{} // authorized as someone else: resolve again now
	}
	m.rebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	if bump {
		g.bumpLocked()
	} else {
		g.refreshMetadataLocked()
	}
	if g.mu.targetDue {
		return resp // reconciled and answered with the batch's other joins (consumer_joins.go)
	}
	cs.reconcile(m, assignment{})
	return g.finishBeatLocked(m, snap, resp, true)
}

// replaceStaticMemberLocked: a static member that left with epoch -2
// rejoins under id; the new member takes over its partitions, epoch and
// target, so nothing moves (KIP-848 static membership).
func (g *group) replaceStaticMemberLocked(old *cmember, id string) *cmember {
	cs := g.mu.cons
	g.stopMemberTimersLocked(old)
	m := &cmember{
		id: id, instanceID: old.instanceID, epoch: old.prevEpoch, prevEpoch: old.prevEpoch, state: old.state,
		topics: old.topics, regex: old.regex, assignor: old.assignor,
		assigned: old.assigned, revoking: old.revoking,
	}
	delete(cs.members, old.id)
	cs.members[id] = m
	cs.static[*m.instanceID] = id
	cs.target[id] = cs.target[old.id]
	delete(cs.target, old.id)
	if sub, ok := cs.subs[old.id]; ok { // the subscription moves with it: no refresh bump
		cs.subs[id] = sub
		delete(cs.subs, old.id)
	}
	cs.hold(m)
	return m
}

// updateSubscriptionLocked applies the heartbeat's subscription and
// assignor; it reports a change (which advances the group epoch).
func (g *group) updateSubscriptionLocked(m *cmember, req *kmsg.ConsumerGroupHeartbeatRequest) bool {
	changed := false
	if req.SubscribedTopicNames != nil {
		topics := slices.Clone(req.SubscribedTopicNames)
		slices.Sort(topics)
		topics = slices.Compact(topics)
		if !slices.Equal(topics, m.topics) {
			m.topics, changed = topics, true
		}
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != m.regex {
		m.regex, changed = *req.SubscribedTopicRegex, true
	}
	if req.ServerAssignor != nil && *req.ServerAssignor != m.assignor {
		m.assignor, changed = *req.ServerAssignor, true
	}
	return changed
}

func (g *group) consumerLeaveLocked(req *kmsg.ConsumerGroupHeartbeatRequest, resp *kmsg.ConsumerGroupHeartbeatResponse) *kmsg.ConsumerGroupHeartbeatResponse {
	cs := g.mu.cons
	m := cs.members[req.MemberID]
	if m == nil {
		if req.InstanceID != nil && cs.static[*req.InstanceID] != "" {
			resp.ErrorCode = errFenced
		} else {
			resp.ErrorCode = errUnknownMember
		}
		return resp
	}
	if req.InstanceID != nil && (m.instanceID == nil || *m.instanceID != *req.InstanceID) {
		resp.ErrorCode = errFenced
		return resp
	}
	resp.MemberID, resp.MemberEpoch = &m.id, req.MemberEpoch
	if req.MemberEpoch == epochStaticLeave && m.instanceID != nil {
		// The static member keeps its partitions and target until it
		// comes back or its session times out.
		if m.epoch != epochStaticLeave {
			m.prevEpoch, m.epoch = m.epoch, epochStaticLeave
		}
		// As Kafka, partitions it was revoking are released now.
		for _, x := range m.revoking.tps() {
			if cs.owners[x] == m.id {
				delete(cs.owners, x)
			}
		}
		m.revoking = assignment{}
		if m.state == memberUnrevoked {
			m.state = memberStable
		}
		g.stopRevokeTimerLocked(m)
		g.scheduleConsumerSessionLocked(m)
	} else if g.downgradeDueLocked(m) {
		if code := g.downgradeLocked(m); code != errNone {
			resp.ErrorCode, resp.MemberID, resp.MemberEpoch = code, nil, 0
		}
		return resp
	} else {
		g.removeConsumerMemberLocked(m)
	}
	if code := g.persistConsumerLocked(); code != errNone {
		resp.ErrorCode, resp.MemberID, resp.MemberEpoch = code, nil, 0
	}
	return resp
}

// removeConsumerMemberLocked drops m and its partitions; the group epoch
// advances and the others get m's partitions.
func (g *group) removeConsumerMemberLocked(m *cmember) {
	cs := g.mu.cons
	g.stopMemberTimersLocked(m)
	cs.release(m)
	delete(cs.members, m.id)
	delete(cs.target, m.id)
	if m.instanceID != nil && cs.static[*m.instanceID] == m.id {
		delete(cs.static, *m.instanceID)
	}
	g.bumpLocked()
}

func (g *group) consumerBeatLocked(cl Client, req *kmsg.ConsumerGroupHeartbeatRequest, resp *kmsg.ConsumerGroupHeartbeatResponse) *kmsg.ConsumerGroupHeartbeatResponse {
	cs := g.mu.cons
	m := cs.members[req.MemberID]
	if m == nil {
		if req.InstanceID != nil && cs.static[*req.InstanceID] != "" {
			resp.ErrorCode = errFenced
		} else {
			resp.ErrorCode = errUnknownMember
		}
		return resp
	}
	if req.InstanceID != nil && (m.instanceID == nil || *m.instanceID != *req.InstanceID) {
		resp.ErrorCode = errFenced
		return resp
	}
	owned := ownedOf(req.Topics)
	if req.MemberEpoch != m.epoch {
		// Kafka accepts the previous epoch from a member that missed the
		// answer that moved it on, if it owns nothing it should not.
		if req.MemberEpoch > m.epoch || req.MemberEpoch != m.prevEpoch || owned == nil || !subsetOf(owned, m.assigned) {
			resp.ErrorCode = errFencedEpoch
			return resp
		}
	}
	snap := g.consumerSnapshotLocked(m.id)
	changed := false
	if m.principal != cl.Principal || m.peerHost != cl.PeerHost {
		// Who the member is authorized as changed: resolve again now.
		m.principal, m.peerHost = cl.Principal, cl.PeerHost
		cs.checked = time.Time{}
	}
	if t := time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond; t > 0 && t != m.rebalanceTimeout {
		m.rebalanceTimeout, changed = t, true
	}
	if g.updateSubscriptionLocked(m, req) {
		g.bumpLocked()
		changed = true
	} else if g.refreshMetadataLocked() {
		changed = true
	}
	if cs.reconcile(m, owned) {
		changed = true
	}
	if !changed {
		// The hot path: a heartbeat that changes nothing writes nothing.
		return g.answerBeatLocked(m, snap, resp, fullRequest(req))
	}
	return g.finishBeatLocked(m, snap, resp, fullRequest(req))
}

// fullRequest: the heartbeat carries everything (rebalance timeout,
// subscription, owned partitions), as after an error; Kafka answers it
// with the whole assignment.
func fullRequest(req *kmsg.ConsumerGroupHeartbeatRequest) bool {
	return req.RebalanceTimeoutMillis != -1 && (req.SubscribedTopicNames != nil || req.SubscribedTopicRegex != nil) && req.Topics != nil
}

// finishBeatLocked reconciles the other members whose partitions m's
// change released, persists any change (durable consumer group state), restarts m's session and
// fills the answer: the assignment is sent when asked for (the member
// reported its partitions) or when it changed.
func (g *group) finishBeatLocked(m *cmember, snap consumerSnapshot, resp *kmsg.ConsumerGroupHeartbeatResponse, full bool) *kmsg.ConsumerGroupHeartbeatResponse {
	if code := g.persistConsumerLocked(); code != errNone {
		resp.ErrorCode = code
		return resp
	}
	return g.answerBeatLocked(m, snap, resp, full)
}

// answerBeatLocked restarts m's session and revocation timers and fills
// the answer of a heartbeat whose changes are durable.
func (g *group) answerBeatLocked(m *cmember, snap consumerSnapshot, resp *kmsg.ConsumerGroupHeartbeatResponse, full bool) *kmsg.ConsumerGroupHeartbeatResponse {
	g.scheduleConsumerSessionLocked(m)
	m.answered = g.c.clock.Now()
	if m.state == memberUnrevoked {
		g.scheduleRevokeLocked(m)
	} else {
		g.stopRevokeTimerLocked(m)
	}
	resp.MemberID, resp.MemberEpoch = &m.id, m.epoch
	m.ackDue = m.assigned.count() > 0 && (!snap.known || !snap.assigned.equal(m.assigned))
	if full || snap.memberChanged(m) {
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		for _, t := range sortedTopicsOf(m.assigned) {
			rt := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
			rt.TopicID, rt.Partitions = t, slices.Clone(m.assigned[t])
			a.Topics = append(a.Topics, rt)
		}
		resp.Assignment = &a
	}
	return resp
}

func sortedTopicsOf(a assignment) []topicID {
	out := make([]topicID, 0, len(a))
	for t := range a {
		out = append(out, t)
	}
	sortTopicIDs(out)
	return out
}

// scheduleConsumerSessionLocked restarts m's session timer: a member not
// heard from for group.consumer.session.timeout.ms is removed (the session timeout).
func (g *group) scheduleConsumerSessionLocked(m *cmember) {
	if m.session != nil {
		m.session.Stop()
	}
	m.sessionSeq = g.nextSeqLocked()
	seq, id := m.sessionSeq, m.id
	timeout := g.c.sessionTimeout(g.id)
	if m.classic != nil {
		timeout = m.classic.sessionTimeout // the JoinGroup's, as Kafka
	}
	m.session = g.c.clock.AfterFunc(timeout, func() { g.expireConsumerMember(id, seq, false) })
}

// scheduleRevokeLocked starts, once per revocation, the rebalance timeout
// in which m must give up its revoked partitions; past it m is removed,
// as Kafka fences it.
func (g *group) scheduleRevokeLocked(m *cmember) {
	if m.revoke != nil {
		return
	}
	m.revokeSeq = g.nextSeqLocked()
	seq, id := m.revokeSeq, m.id
	timeout := m.rebalanceTimeout
	if timeout <= 0 {
		timeout = g.c.cfg.ConsumerSessionTimeout
	}
	m.revoke = g.c.clock.AfterFunc(timeout, func() { g.expireConsumerMember(id, seq, true) })
}

func (g *group) stopRevokeTimerLocked(m *cmember) {
	if m.revoke != nil {
		m.revoke.Stop()
		m.revoke = nil
	}
}

func (g *group) stopMemberTimersLocked(m *cmember) {
	if m.session != nil {
		m.session.Stop()
		m.session = nil
	}
	g.stopRevokeTimerLocked(m)
	if m.classic != nil {
		g.stopClassicTimerLocked(&m.classic.join)
		g.stopClassicTimerLocked(&m.classic.sync)
	}
}

func (g *group) expireConsumerMember(id string, seq uint64, revoke bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c.closing.Load() || g.mu.typ != typeConsumer {
		return
	}
	m := g.mu.cons.members[id]
	if m == nil || (!revoke && m.sessionSeq != seq) || (revoke && (m.revokeSeq != seq || m.revoke == nil)) {
		return
	}
	g.c.log.Info("consumer-member-expired", zap.String("group", g.id), zap.String("member", id), zap.Bool("revocation-timeout", revoke))
	if g.downgradeDueLocked(m) {
		g.downgradeLocked(m)
		return
	}
	g.removeConsumerMemberLocked(m)
	g.persistConsumerLocked()
}

// tooManyRegexesLocked: re would be one regex more than a group may
// resolve (server-side regex subscriptions).
func (g *group) tooManyRegexesLocked(re *string) bool {
	if re == nil || *re == "" {
		return false
	}
	cs := g.mu.cons
	if _, ok := cs.regexes[*re]; ok {
		return false
	}
	cs.syncRegexes()
	_, ok := cs.regexes[*re]
	return !ok && len(cs.regexes) >= maxGroupRegexes
}
