package group

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// scheduleSessionLocked (re)arms m's expiry (the session timeout): its session timeout, or
// NewMemberJoinTimeout while it is new and blocked in its first join.
func (g *group) scheduleSessionLocked(m *member) {
	if m.session != nil {
		m.session.Stop()
	}
	seq := g.nextSeqLocked()
	m.sessionSeq = seq
	d := m.sessionTimeout
	if m.isNew && m.awaitingJoin() {
		d = g.c.cfg.NewMemberJoinTimeout
	}
	m.session = g.c.clock.AfterFunc(d, func() { g.onSessionExpire(m, seq) })
}

func (g *group) onSessionExpire(m *member, seq uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c.closing.Load() || g.mu.members[m.id] != m || m.sessionSeq != seq {
		return
	}
	if !m.isNew && (m.awaitingJoin() || m.awaitingSync()) {
		// Blocked in a rebalance: the rebalance and sync timeouts govern.
		g.scheduleSessionLocked(m)
		return
	}
	g.c.log.Info("group-member-session-expired", zap.String("group", g.id), zap.String("member", m.id))
	g.removeMemberLocked(m)
	g.afterRemovalLocked()
}

// afterRemovalLocked reacts to members leaving: a settled group rebalances,
// a rebalancing one may now be complete.
func (g *group) afterRemovalLocked() {
	switch g.mu.state {
	case stateStable, stateCompletingRebalance:
		g.prepareRebalanceLocked()
	}
	g.tryCompleteJoinLocked()
}

// SyncGroup handles SyncGroup v0–5. A follower's sync blocks until the
// leader's sync delivers the assignment, a new rebalance overtakes it
// (REBALANCE_IN_PROGRESS), or the connection dies.
func (c *Coordinator) SyncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) (*kmsg.SyncGroupResponse, error) {
	r, wait := c.sync(req)
	if wait != nil {
		select {
		case r = <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, ErrClosed
		}
	}
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	resp.ErrorCode = r.code
	if r.code == errNone {
		resp.MemberAssignment = r.assignment
		if resp.Version >= 5 {
			resp.ProtocolType, resp.Protocol = &r.protocolType, &r.protocol
		}
	}
	return resp, nil
}

func (c *Coordinator) sync(req *kmsg.SyncGroupRequest) (syncResult, chan syncResult) {
	fail := func(code int16) (syncResult, chan syncResult) { return syncResult{code: code}, nil }
	if req.Group == "" {
		return fail(errInvalidGroupID)
	}
	if req.Version >= 5 && (req.ProtocolType == nil || req.Protocol == nil) {
		// Kafka's SyncGroupRequest.areMandatoryProtocolTypeAndNamePresent.
		return fail(errInconsistentProto)
	}
	g := c.lookup(req.Group)
	if g == nil {
		return fail(errUnknownMember)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.typ == typeConsumer && g.mu.state != stateDead {
		return g.classicSyncToConsumerLocked(req), nil // migrate.go
	}
	m, code := g.checkMemberLocked(req.MemberID, req.InstanceID, req.Generation)
	switch {
	case code != errNone:
		return fail(code)
	case req.ProtocolType != nil && *req.ProtocolType != g.mu.protocolType,
		req.Protocol != nil && *req.Protocol != g.mu.protocol:
		return fail(errInconsistentProto)
	}
	switch g.mu.state {
	case statePreparingRebalance:
		return fail(errRebalancing)
	case stateCompletingRebalance:
		ch := make(chan syncResult, 1)
		m.syncWaiters = append(m.syncWaiters, ch)
		g.syncedLocked(m)
		if m.id == g.mu.leader {
			g.startAssignLocked(req.GroupAssignment) // assign_store.go
		}
		return syncResult{}, ch
	case stateStable:
		g.syncedLocked(m)
		g.scheduleSessionLocked(m)
		return g.syncAnswerLocked(m), nil
	default:
		return fail(errUnknownMember)
	}
}

// checkMemberLocked runs Kafka's member checks in Kafka's order (Kafka's group error order).
func (g *group) checkMemberLocked(memberID string, instanceID *string, generation int32) (*member, int16) {
	if g.mu.state == stateDead {
		return nil, errCoordinatorNA
	}
	if g.fencedLocked(instanceID, memberID) {
		return nil, errFenced
	}
	m := g.mu.members[memberID]
	if m == nil {
		return nil, errUnknownMember
	}
	if generation != g.mu.generation {
		return nil, errIllegalGeneration
	}
	return m, errNone
}

func (g *group) syncedLocked(m *member) {
	delete(g.mu.pendingSync, m.id)
	if len(g.mu.pendingSync) == 0 && g.mu.syncTimer != nil {
		g.mu.syncTimer.Stop()
		g.mu.syncTimer = nil
	}
}

func (g *group) syncAnswerLocked(m *member) syncResult {
	return syncResult{protocolType: g.mu.protocolType, protocol: g.mu.protocol, assignment: m.assignment}
}

// Heartbeat handles Heartbeat v0–4.
func (c *Coordinator) Heartbeat(req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = c.heartbeat(req)
	return resp
}

func (c *Coordinator) heartbeat(req *kmsg.HeartbeatRequest) int16 {
	if req.Group == "" {
		return errInvalidGroupID
	}
	g := c.lookup(req.Group)
	if g == nil {
		return errUnknownMember
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.typ == typeConsumer && g.mu.state != stateDead {
		return g.classicHeartbeatToConsumerLocked(req) // migrate.go
	}
	m, code := g.checkMemberLocked(req.MemberID, req.InstanceID, req.Generation)
	if code != errNone {
		return code
	}
	switch g.mu.state {
	case stateCompletingRebalance, stateStable:
		g.scheduleSessionLocked(m)
		return errNone
	case statePreparingRebalance:
		g.scheduleSessionLocked(m)
		return errRebalancing
	default:
		return errUnknownMember
	}
}

// LeaveGroup handles LeaveGroup v0–5: one member before v3, a batch of
// members (by member id or, for static members, instance id) from v3.
func (c *Coordinator) LeaveGroup(req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	leaving := req.Members
	if req.Version < 3 {
		leaving = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	if req.Group == "" {
		resp.ErrorCode = errInvalidGroupID
		return resp
	}
	codes := make([]int16, len(leaving))
	if g := c.lookup(req.Group); g == nil {
		for i := range codes {
			codes[i] = errUnknownMember
		}
	} else if resp.ErrorCode = g.leave(leaving, codes); resp.ErrorCode != errNone {
		return resp
	}
	if req.Version < 3 {
		resp.ErrorCode = codes[0]
		return resp
	}
	for i, lm := range leaving {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ErrorCode = lm.MemberID, lm.InstanceID, codes[i]
		resp.Members = append(resp.Members, rm)
	}
	return resp
}

// leave removes each leaving member, filling codes; it returns a
// group-level error.
func (g *group) leave(leaving []kmsg.LeaveGroupRequestMember, codes []int16) int16 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.state == stateDead {
		return errCoordinatorNA
	}
	if g.mu.typ == typeConsumer {
		return g.classicLeaveToConsumerLocked(leaving, codes) // migrate.go
	}
	changed := false
	for i, lm := range leaving {
		codes[i] = g.leaveOneLocked(lm)
		changed = changed || codes[i] == errNone
	}
	if changed {
		g.afterRemovalLocked()
	}
	return errNone
}

func (g *group) leaveOneLocked(lm kmsg.LeaveGroupRequestMember) int16 {
	id := lm.MemberID
	if id == noMember && lm.InstanceID != nil {
		cur, ok := g.mu.static[*lm.InstanceID]
		if !ok {
			return errUnknownMember
		}
		id = cur
	} else if g.fencedLocked(lm.InstanceID, id) {
		return errFenced
	}
	if t, ok := g.mu.pending[id]; ok {
		t.Stop()
		delete(g.mu.pending, id)
		return errNone
	}
	m := g.mu.members[id]
	if m == nil {
		return errUnknownMember
	}
	g.c.log.Debug("group-member-left", zap.String("group", g.id), zap.String("member", id))
	g.removeMemberLocked(m)
	return errNone
}
