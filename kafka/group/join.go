package group

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// joinReq is a JoinGroup request reduced to what the state machine needs.
type joinReq struct {
	client           Client
	version          int16
	memberID         string
	instanceID       *string
	protocolType     string
	protocols        []kmsg.JoinGroupRequestProtocol
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
}

// JoinGroup handles JoinGroup v0–9. It blocks until the group's rebalance
// completes (rebalance completion), the connection dies (ctx) or the coordinator closes.
func (c *Coordinator) JoinGroup(ctx context.Context, cl Client, req *kmsg.JoinGroupRequest) (*kmsg.JoinGroupResponse, error) {
	r, wait := c.join(cl, req)
	if wait != nil {
		select {
		case r = <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, ErrClosed
		}
	}
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	fillJoin(resp, r)
	return resp, nil
}

func fillJoin(resp *kmsg.JoinGroupResponse, r joinResult) {
	resp.ErrorCode, resp.MemberID, resp.LeaderID = r.code, r.memberID, r.leader
	resp.Generation = r.generation
	if r.code != errNone {
		resp.Generation = -1
	}
	if resp.Version >= 7 {
		if r.code == errNone {
			resp.ProtocolType, resp.Protocol = &r.protocolType, &r.protocol
		}
	} else {
		resp.Protocol = &r.protocol // not nullable before v7
	}
	resp.Members = r.members
	if resp.Version >= 9 {
		resp.SkipAssignment = r.skipAssignment
	} else if r.skipAssignment {
		resp.Members = nil // a pre-KIP-814 leader must not reassign
	}
}

func (c *Coordinator) join(cl Client, req *kmsg.JoinGroupRequest) (joinResult, chan joinResult) {
	fail := func(code int16) (joinResult, chan joinResult) {
		return joinResult{code: code, memberID: req.MemberID}, nil
	}
	if req.Group == "" || len(req.Group) > maxGroupIDLen {
		return fail(errInvalidGroupID)
	}
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	if session < c.cfg.MinSessionTimeout || session > c.cfg.MaxSessionTimeout {
		return fail(errInvalidSession)
	}
	rebalance := time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	if req.Version == 0 || rebalance <= 0 {
		rebalance = session // v0 has no rebalance timeout: Kafka uses the session timeout
	}
	var g *group
	if req.MemberID == noMember {
		g = c.getOrCreate(req.Group)
	} else if g = c.lookup(req.Group); g == nil {
		return fail(errUnknownMember)
	}
	j := joinReq{
		client: cl, version: req.Version, memberID: req.MemberID, instanceID: req.InstanceID,
		protocolType: req.ProtocolType, protocols: req.Protocols,
		sessionTimeout: session, rebalanceTimeout: rebalance,
	}
	if req.Version < 5 {
		j.instanceID = nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.joinLocked(j)
}

func (g *group) joinLocked(j joinReq) (joinResult, chan joinResult) {
	fail := func(code int16) (joinResult, chan joinResult) {
		return joinResult{code: code, memberID: j.memberID}, nil
	}
	if g.mu.state == stateDead {
		return fail(errCoordinatorNA)
	}
	if g.mu.typ == typeConsumer && len(g.mu.cons.members) > 0 {
		return g.classicJoinToConsumerLocked(j), nil // migrate.go
	}
	if g.mu.typ == typeConsumer || g.mu.typ == typeStreams {
		if code := g.becomeClassicLocked(); code != errNone {
			return fail(code)
		}
	}
	if !g.supportsLocked(j.protocolType, j.protocols) {
		return fail(errInconsistentProto)
	}
	if j.memberID == noMember {
		return g.joinNewLocked(j)
	}
	if t, ok := g.mu.pending[j.memberID]; ok {
		// The second half of the KIP-394 handshake.
		t.Stop()
		delete(g.mu.pending, j.memberID)
		return g.addAndRebalanceLocked(j, j.memberID)
	}
	if g.fencedLocked(j.instanceID, j.memberID) {
		return fail(errFenced)
	}
	m := g.mu.members[j.memberID]
	if m == nil || (j.instanceID != nil && g.mu.static[*j.instanceID] == "") {
		return fail(errUnknownMember)
	}
	switch g.mu.state {
	case statePreparingRebalance:
		return g.updateAndRebalanceLocked(m, j)
	case stateCompletingRebalance:
		if m.matches(j.protocols) {
			// It missed its JoinGroup response: give it the current one.
			g.scheduleSessionLocked(m)
			return g.currentJoinLocked(m.id, m.id == g.mu.leader, false), nil
		}
		return g.updateAndRebalanceLocked(m, j)
	case stateStable:
		// A leader's join forces a rebalance (it may have seen metadata
		// change); a follower with unchanged metadata just gets the
		// current generation back.
		if m.id == g.mu.leader || !m.matches(j.protocols) {
			return g.updateAndRebalanceLocked(m, j)
		}
		g.scheduleSessionLocked(m)
		return g.currentJoinLocked(m.id, false, false), nil
	default:
		return fail(errUnknownMember)
	}
}

func (g *group) joinNewLocked(j joinReq) (joinResult, chan joinResult) {
	id := newMemberID(j.client.ID, j.instanceID)
	if j.instanceID != nil {
		if old, ok := g.mu.static[*j.instanceID]; ok {
			return g.replaceStaticLocked(j, g.mu.members[old], id)
		}
	}
	if len(g.mu.members)+len(g.mu.pending) >= g.c.cfg.MaxGroupSize {
		return joinResult{code: errGroupFull, memberID: noMember}, nil // The group size bound
	}
	if j.instanceID != nil {
		return g.addAndRebalanceLocked(j, id)
	}
	if j.version >= 4 {
		// KIP-394: hand out an id and wait for the member to come back
		// with it; until then it holds up the rebalance (rebalance completion) for at most
		// its session timeout.
		g.mu.pending[id] = g.c.clock.AfterFunc(j.sessionTimeout, func() { g.expirePending(id) })
		return joinResult{code: errMemberIDRequired, memberID: id}, nil
	}
	return g.addAndRebalanceLocked(j, id)
}

func (g *group) expirePending(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c.closing.Load() {
		return
	}
	if _, ok := g.mu.pending[id]; !ok {
		return
	}
	delete(g.mu.pending, id)
	g.tryCompleteJoinLocked()
}

func (g *group) addAndRebalanceLocked(j joinReq, id string) (joinResult, chan joinResult) {
	m := &member{
		id: id, instanceID: j.instanceID, clientID: j.client.ID, clientHost: j.client.Host,
		principal: j.client.Principal, peerHost: j.client.PeerHost,
		sessionTimeout: j.sessionTimeout, rebalanceTimeout: j.rebalanceTimeout,
		protocolType: j.protocolType, protocols: j.protocols, isNew: true,
	}
	ch := make(chan joinResult, 1)
	m.joinWaiters = []chan joinResult{ch}
	g.addMemberLocked(m)
	g.scheduleSessionLocked(m)
	if g.mu.initialDelay {
		g.mu.newMember = true
	}
	g.maybeRebalanceLocked()
	return joinResult{}, ch
}

func (g *group) updateAndRebalanceLocked(m *member, j joinReq) (joinResult, chan joinResult) {
	m.protocols = j.protocols
	m.sessionTimeout, m.rebalanceTimeout = j.sessionTimeout, j.rebalanceTimeout
	ch := make(chan joinResult, 1)
	m.joinWaiters = append(m.joinWaiters, ch)
	g.maybeRebalanceLocked()
	return joinResult{}, ch
}

// replaceStaticLocked: a static member rejoined without its member id
// (KIP-345). The old id is fenced; the member keeps its assignment, and in
// a Stable group whose protocol does not change there is no rebalance.
func (g *group) replaceStaticLocked(j joinReq, old *member, id string) (joinResult, chan joinResult) {
	old.answerJoinLocked(joinResult{code: errFenced, memberID: old.id})
	old.answerSyncLocked(syncResult{code: errFenced})
	if old.session != nil {
		old.session.Stop()
	}
	m := &member{
		id: id, instanceID: j.instanceID, clientID: j.client.ID, clientHost: j.client.Host,
		principal: j.client.Principal, peerHost: j.client.PeerHost,
		sessionTimeout: j.sessionTimeout, rebalanceTimeout: j.rebalanceTimeout,
		protocolType: j.protocolType, protocols: j.protocols, assignment: old.assignment,
	}
	delete(g.mu.members, old.id)
	g.mu.members[id] = m
	g.mu.static[*j.instanceID] = id
	if g.mu.leader == old.id {
		g.mu.leader = id
	}
	if g.mu.pendingSync[old.id] {
		delete(g.mu.pendingSync, old.id)
		g.mu.pendingSync[id] = true
	}
	if g.mu.state == stateStable && g.selectProtocolLocked() == g.mu.protocol {
		// The new member id is visible to the client: durable first (durable classic membership).
		if code := g.persistMembersLocked(); code != errNone {
			g.unreplaceStaticLocked(old, m)
			return joinResult{code: code, memberID: noMember}, nil
		}
		skip := g.mu.leader == id && j.version >= 9
		g.scheduleSessionLocked(m)
		return g.currentJoinLocked(id, skip, skip), nil
	}
	ch := make(chan joinResult, 1)
	m.joinWaiters = []chan joinResult{ch}
	g.scheduleSessionLocked(m)
	if g.mu.state == stateCompletingRebalance || g.mu.state == stateStable {
		// The leader may already be assigning to the old id.
		g.prepareRebalanceLocked()
	}
	g.tryCompleteJoinLocked()
	return joinResult{}, ch
}

// unreplaceStaticLocked undoes replaceStaticLocked when the replacement
// could not be made durable: the old member id stays the instance's, as in
// Kafka, and its session goes on.
func (g *group) unreplaceStaticLocked(old, m *member) {
	delete(g.mu.members, m.id)
	g.mu.members[old.id] = old
	g.mu.static[*old.instanceID] = old.id
	if g.mu.leader == m.id {
		g.mu.leader = old.id
	}
	if g.mu.pendingSync[m.id] {
		delete(g.mu.pendingSync, m.id)
		g.mu.pendingSync[old.id] = true
	}
	g.scheduleSessionLocked(old)
}

// maybeRebalanceLocked starts a rebalance unless one is running, then
// completes it if everyone is already in.
func (g *group) maybeRebalanceLocked() {
	switch g.mu.state {
	case stateEmpty, stateStable, stateCompletingRebalance:
		g.prepareRebalanceLocked()
	}
	g.tryCompleteJoinLocked()
}

func (g *group) prepareRebalanceLocked() {
	if g.mu.state == stateCompletingRebalance {
		// No stranded member: syncs waiting on the overtaken generation learn at once.
		for _, m := range g.mu.members {
			m.assignment = nil
			m.answerSyncLocked(syncResult{code: errRebalancing})
		}
	}
	if g.mu.syncTimer != nil {
		g.mu.syncTimer.Stop()
		g.mu.syncTimer = nil
	}
	clear(g.mu.pendingSync)
	g.mu.assigning = 0 // an assignment being written is overtaken
	wasEmpty := g.mu.state == stateEmpty
	// Persisted empty groups: as in Kafka, a rebalance's start is not
	// written (the store keeps the group Empty until the generation
	// completes); retention passes over the group meanwhile.
	g.transitionLocked(statePreparingRebalance)
	var timeout time.Duration
	for _, m := range g.mu.members {
		timeout = max(timeout, m.rebalanceTimeout)
	}
	seq := g.nextSeqLocked()
	if g.mu.rebalance != nil {
		g.mu.rebalance.Stop()
	}
	g.mu.rebalanceSeq = seq
	g.mu.initialDelay, g.mu.newMember = false, false
	if wasEmpty {
		// Kafka's InitialDelayedJoin: a new group waits for more
		// members before its first generation, also with no delay.
		delay := g.c.cfg.InitialRebalanceDelay
		g.mu.initialDelay = true
		remaining := max(timeout-delay, 0)
		g.mu.rebalance = g.c.clock.AfterFunc(delay, func() { g.onInitialDelay(seq, delay, remaining) })
		return
	}
	g.mu.rebalance = g.c.clock.AfterFunc(timeout, func() { g.onRebalanceTimeout(seq) })
}

// onInitialDelay ends one wait of the initial delay: when members joined
// during it and rebalance timeout is left, the group waits again (the
// delay, at most what is left); else the join completes, as Kafka's
// tryCompleteInitialRebalanceElseSchedule does. Member ids handed out
// and not yet back do not hold it up, as in Kafka (its first rebalance
// completes only from this timer). With no delay a wait is the time the
// check takes to get the group's lock (a timer of 0 runs at once on a
// goroutine of its own, as Kafka queues one behind the events it already
// has): the members
// whose joins were already waiting for the lock are in the generation,
// and the check runs again as long as each one finds a member added.
func (g *group) onInitialDelay(seq uint64, delay, remaining time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c.closing.Load() || g.mu.state != statePreparingRebalance || g.mu.rebalanceSeq != seq || !g.mu.initialDelay {
		return
	}
	if g.mu.newMember && remaining > 0 {
		g.mu.newMember = false
		next := max(remaining-delay, 0)
		g.mu.rebalance = g.c.clock.AfterFunc(min(delay, remaining), func() { g.onInitialDelay(seq, delay, next) })
		return
	}
	g.mu.initialDelay = false
	g.completeJoinLocked()
}

func (g *group) onRebalanceTimeout(seq uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c.closing.Load() || g.mu.state != statePreparingRebalance || g.mu.rebalanceSeq != seq {
		return
	}
	g.completeJoinLocked()
}

// tryCompleteJoinLocked completes the rebalance once every member has
// rejoined and no handed-out member id is outstanding (rebalance completion).
func (g *group) tryCompleteJoinLocked() {
	if g.mu.state != statePreparingRebalance || len(g.mu.pending) > 0 || g.mu.initialDelay {
		return
	}
	for _, m := range g.mu.members {
		if !m.awaitingJoin() {
			return
		}
	}
	g.completeJoinLocked()
}

// completeJoinLocked ends PreparingRebalance: members that did not rejoin
// are removed, the generation advances, and every joined member gets its
// answer (the leader with everyone's metadata).
func (g *group) completeJoinLocked() {
	if g.mu.rebalance != nil {
		g.mu.rebalance.Stop()
		g.mu.rebalance = nil
	}
	g.mu.initialDelay, g.mu.newMember = false, false
	for _, m := range g.sortedMembersLocked() {
		if !m.awaitingJoin() {
			g.c.log.Info("group-member-not-rejoined", zap.String("group", g.id), zap.String("member", m.id))
			g.removeMemberLocked(m)
		}
	}
	g.mu.generation++
	if len(g.mu.members) == 0 {
		g.mu.protocol, g.mu.leader, g.mu.subscribed = "", "", nil
		g.transitionLocked(stateEmpty)
		g.persistLocked()
		return
	}
	g.mu.protocol = g.selectProtocolLocked()
	g.mu.subscribed = g.subscriptionsLocked()
	g.transitionLocked(stateCompletingRebalance)
	g.persistLocked()
	var timeout time.Duration
	for _, m := range g.sortedMembersLocked() {
		m.answerJoinLocked(g.currentJoinLocked(m.id, m.id == g.mu.leader, false))
		m.isNew = false
		g.mu.pendingSync[m.id] = true
		g.scheduleSessionLocked(m)
		timeout = max(timeout, m.rebalanceTimeout)
	}
	seq := g.nextSeqLocked()
	g.mu.syncSeq = seq
	g.mu.syncTimer = g.c.clock.AfterFunc(timeout, func() { g.onSyncTimeout(seq) })
	g.c.log.Debug("group-rebalanced", zap.String("group", g.id), zap.Int32("generation", g.mu.generation),
		zap.Int("members", len(g.mu.members)), zap.String("protocol", g.mu.protocol))
}

// onSyncTimeout implements the pending-sync timeout: members that never synced are removed and the
// group rebalances.
func (g *group) onSyncTimeout(seq uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c.closing.Load() || g.mu.syncSeq != seq || len(g.mu.pendingSync) == 0 {
		return
	}
	if g.mu.state != stateCompletingRebalance && g.mu.state != stateStable {
		return
	}
	for id := range g.mu.pendingSync {
		if m := g.mu.members[id]; m != nil {
			g.c.log.Info("group-member-not-synced", zap.String("group", g.id), zap.String("member", id))
			g.removeMemberLocked(m)
		}
	}
	g.prepareRebalanceLocked()
	g.tryCompleteJoinLocked()
}

// subscriptionsLocked is the union of the topics consumer-protocol members
// subscribe to (for OffsetDelete); nil when not a consumer group or any
// metadata does not parse.
func (g *group) subscriptionsLocked() map[string]bool {
	if g.mu.protocolType != "consumer" {
		return nil
	}
	topics := make(map[string]bool)
	for _, m := range g.mu.members {
		var md kmsg.ConsumerMemberMetadata
		if err := md.ReadFrom(m.metadataFor(g.mu.protocol)); err != nil {
			return nil
		}
		for _, t := range md.Topics {
			topics[t] = true
		}
	}
	return topics
}
