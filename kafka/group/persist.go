package group

import (
	"errors"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// DefaultMaxGroupStateBytes bounds a group's persisted membership (durable classic membership):
// Kafka's message.max.bytes, the most a group's metadata record in
// __consumer_offsets may take. A leader's assignment or members' protocol
// metadata past it fail the SyncGroup, as Kafka's storeGroup does.
const DefaultMaxGroupStateBytes = 1048588

// DefaultMaxGroupSize is group.max.size. Kafka's default is unbounded;
// here a group is bounded (the group size bound) so that first JoinGroups cannot grow a
// group's pending member ids without limit.
const DefaultMaxGroupSize = 1000

var errUnknownServer = kerr.UnknownServerError.Code

// stateLocked is the group as persisted (the durable classic membership): its metadata and,
// unless Empty, its leader and members.
func (g *group) stateLocked() offsets.ClassicGroup {
	st := offsets.GroupActive
	if g.mu.state == stateEmpty {
		st = offsets.GroupEmpty
	}
	cg := offsets.ClassicGroup{Group: offsets.Group{
		ID: g.id, ProtocolType: g.mu.protocolType, Protocol: g.mu.protocol,
		Generation: g.mu.generation, State: st, StateTime: g.mu.stateTime,
	}}
	if st == offsets.GroupEmpty {
		return cg
	}
	cg.Leader = g.mu.leader
	for _, m := range g.sortedMembersLocked() {
		pm := offsets.ClassicMember{
			ID: m.id, InstanceID: m.instanceID, ClientID: m.clientID, ClientHost: m.clientHost,
			SessionTimeout: m.sessionTimeout, RebalanceTimeout: m.rebalanceTimeout,
			ProtocolType: m.protocolType, Assignment: m.assignment,
		}
		for _, p := range m.protocols {
			pm.Protocols = append(pm.Protocols, offsets.Protocol{Name: p.Name, Metadata: p.Metadata})
		}
		cg.Members = append(cg.Members, pm)
	}
	return cg
}

// persistMembersLocked writes the group with its members, synced (durable classic membership). It
// returns the error code to answer the requests the change was for.
func (g *group) persistMembersLocked() int16 {
	g.writes.Lock()
	defer g.writes.Unlock()
	return g.persistCode(g.c.store.PutClassicGroup(g.stateLocked(), g.c.cfg.MaxGroupStateBytes))
}

// persistCode is the error code answering the requests a failed write of
// the group's membership was for (errNone: it did not fail).
func (g *group) persistCode(err error) int16 {
	if err == nil {
		return errNone
	}
	g.c.log.Warn("group-persist-failed", zap.String("group", g.id), zap.Int32("generation", g.mu.generation), zap.Error(err))
	if errors.Is(err, offsets.ErrTooLarge) {
		return errUnknownServer // Kafka: a record too large for __consumer_offsets
	}
	return errCoordinatorNA
}

// loadGroup rebuilds a group persisted with members (classic membership restored at restart): Stable at its
// persisted generation, with its members and their assignments, and every
// member's session timer started afresh, as Kafka does when it loads a
// group. A member that died while the server was down is removed one
// session timeout after the load, like any silent member (the session timeout).
func (c *Coordinator) loadGroup(pg offsets.ClassicGroup) *group {
	g := newGroup(c, pg.ID)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.applyClassicLocked(pg)
	return g
}

// applyClassicLocked makes pg, a classic group with members, the group's
// state: Stable at its generation, sessions started afresh.
func (g *group) applyClassicLocked(pg offsets.ClassicGroup) {
	g.mu.members, g.mu.static = make(map[string]*member), make(map[string]string)
	g.mu.protocolType, g.mu.protocol = pg.ProtocolType, pg.Protocol
	g.mu.generation, g.mu.stateTime = pg.Generation, pg.StateTime
	g.setStateLocked(stateStable)
	for _, pm := range pg.Members {
		m := &member{
			id: pm.ID, instanceID: pm.InstanceID, clientID: pm.ClientID, clientHost: pm.ClientHost,
			sessionTimeout: pm.SessionTimeout, rebalanceTimeout: pm.RebalanceTimeout,
			protocolType: pm.ProtocolType, assignment: pm.Assignment,
		}
		for _, p := range pm.Protocols {
			m.protocols = append(m.protocols, kmsg.JoinGroupRequestProtocol{Name: p.Name, Metadata: p.Metadata})
		}
		g.mu.members[m.id] = m
		if m.instanceID != nil {
			g.mu.static[*m.instanceID] = m.id
		}
	}
	g.mu.leader = pg.Leader
	if g.mu.members[g.mu.leader] == nil {
		g.mu.leader = g.sortedMembersLocked()[0].id
	}
	g.mu.subscribed = g.subscriptionsLocked()
	for _, m := range g.mu.members {
		g.scheduleSessionLocked(m)
	}
}
