package group

import (
	"errors"
	"fmt"
	"time"

	"github.com/kgateway/kgateway/kafka/streams"
	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// Streams groups (KIP-1071) share the coordinator, its map and the group
// lock; their state machine and assignor are kafka/streams. Here:
//
//   - One type per group id: a group id names one group of one type: a StreamsGroupHeartbeat
//     join turns an empty classic group into a streams group (durably);
//     otherwise a heartbeat to another type's group is GROUP_ID_NOT_FOUND,
//     a JoinGroup to a streams group INCONSISTENT_GROUP_PROTOCOL, a
//     ConsumerGroupHeartbeat GROUP_ID_NOT_FOUND.
//   - Durable state: a streams group's state is durable (the offsets store's streams group state) before a
//     heartbeat is answered; if the write fails the group goes back to its
//     last durable state and the heartbeat gets the error. After a restart
//     members go on at their epochs with their tasks (sessions start at the
//     load, as classic membership restored at restart).
//   - Timeouts: a member not heard from for the streams session timeout is
//     removed (a static member that left with epoch -2 too); one that does
//     not revoke its tasks within its rebalance timeout is removed.
//   - Commits: offset commits into a streams group with members come from a
//     member at its current epoch, as into a consumer group (commits at the member epoch).
//   - Topology descriptions (KIP-1331): a pushed description is durable in
//     the group's state before the answer; one principal's descriptions
//     over all groups are bounded (StreamsDescriptionBytesPerPrincipal).

// streamsTimers are a streams member's session and revocation timers.
type streamsTimers struct {
	session    Timer
	sessionSeq uint64
	revoke     Timer
	revokeSeq  uint64
	revokeAt   int32 // the member epoch the revocation timer was started at
}

// streamsMetadata adapts the TopicLister to kafka/streams.
type streamsMetadata map[string]int32

func (m streamsMetadata) Partitions(topic string) (int32, bool) {
	n, ok := m[topic]
	return n, ok
}

// streamsMetadata is what topics exist: the TopicLister itself when it
// can look a topic up (a heartbeat then costs a lookup per topology
// topic), else a list of every topic.
func (c *Coordinator) streamsMetadata() streams.Metadata {
	if md, ok := c.cfg.Metadata.(streams.Metadata); ok {
		return md
	}
	md := streamsMetadata{}
	if c.cfg.Metadata == nil {
		return md
	}
	for _, t := range c.cfg.Metadata.Topics() {
		md[t.Name] = t.Partitions
	}
	return md
}

func (c *Coordinator) streamsConfig() streams.Config { return c.cfg.streamsConfigOf() }

func (cfg Config) streamsConfigOf() streams.Config {
	return streams.Config{
		SessionTimeout: cfg.StreamsSessionTimeout, HeartbeatInterval: cfg.StreamsHeartbeatInterval,
		NumStandby: cfg.StreamsNumStandby, MaxSize: cfg.MaxGroupSize, InitialDelay: cfg.StreamsInitialRebalanceDelay,
	}.WithDefaults()
}

// StreamsGroupHeartbeat handles StreamsGroupHeartbeat v0–1 (KIP-1071):
// the answer, and the internal topics the topology needs that the
// caller should create (when authorized). Every change is durable before
// the answer (durable state); an error answer carries no heartbeat interval.
func (c *Coordinator) StreamsGroupHeartbeat(cl Client, req *kmsg.StreamsGroupHeartbeatRequest) (*kmsg.StreamsGroupHeartbeatResponse, []streams.InternalTopic) {
	errResp := func(code int16, msg string) *kmsg.StreamsGroupHeartbeatResponse {
		resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return resp
	}
	if e := streams.Validate(req); e != nil {
		return errResp(e.Code, e.Msg), nil
	}
	join := req.MemberEpoch == streams.EpochJoin
	var g *group
	if join {
		g = c.getOrCreate(req.Group)
	} else if g = c.lookup(req.Group); g == nil {
		return errResp(errGroupNotFound, fmt.Sprintf("Streams group %s not found.", req.Group)), nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if code, msg := g.becomeStreamsLocked(join); code != errNone {
		return errResp(code, msg), nil
	}
	cfg := c.streamsConfig()
	env := streams.Env{Config: cfg, Metadata: c.streamsMetadata(), ClientID: cl.ID, ClientHost: cl.Host, Now: c.clock.Now()}
	res, e := g.mu.strm.Heartbeat(env, req)
	if e != nil {
		return errResp(e.Code, e.Msg), nil
	}
	if code := g.persistStreamsLocked(); code != errNone {
		return errResp(code, ""), nil
	}
	g.syncStreamsTimersLocked(req.MemberID)
	return res.Resp, res.Create
}

// becomeStreamsLocked turns an empty classic group into a streams group
// on a join; any other group of another type is GROUP_ID_NOT_FOUND (one type per group id).
func (g *group) becomeStreamsLocked(join bool) (int16, string) {
	if g.mu.state == stateDead {
		return errCoordinatorNA, ""
	}
	if g.mu.typ == typeStreams {
		return errNone, ""
	}
	if !join || g.mu.typ != typeClassic || len(g.mu.members) > 0 || len(g.mu.pending) > 0 || g.mu.state != stateEmpty {
		return errGroupNotFound, fmt.Sprintf("Group %s is not a streams group.", g.id)
	}
	g.mu.typ, g.mu.strm, g.mu.strmWritten = typeStreams, streams.NewGroup(g.id), nil
	g.mu.strmTimers = make(map[string]*streamsTimers)
	return errNone, ""
}

// persistStreamsLocked writes the group's state, synced, if it changed
// (durable state); on a failure the group goes back to its last durable state.
func (g *group) persistStreamsLocked() int16 {
	enc := g.mu.strm.Encode()
	if string(enc) == string(g.mu.strmWritten) {
		return errNone
	}
	st := offsets.GroupActive
	if len(g.mu.strm.Members) == 0 {
		st = offsets.GroupEmpty
		g.mu.stateTime = g.c.clock.Now() // Empty from now: retention counts from here
	}
	rec := offsets.StreamsGroup{
		Group: offsets.Group{ID: g.id, Generation: g.mu.strm.Epoch, State: st, StateTime: g.mu.stateTime},
		State: enc,
	}
	g.writes.Lock() // in order with a classic assignment being written (assign_store.go)
	err := g.c.store.PutStreamsGroup(rec, g.c.cfg.MaxGroupStateBytes)
	g.writes.Unlock()
	if err == nil {
		g.mu.strmWritten = enc
		return errNone
	}
	g.c.log.Warn("streams-group-persist-failed", zap.String("group", g.id), zap.Error(err))
	g.rollbackStreamsLocked()
	if errors.Is(err, offsets.ErrTooLarge) {
		return errUnknownServer
	}
	return errCoordinatorNA
}

// rollbackStreamsLocked puts the group back to its last durable state.
func (g *group) rollbackStreamsLocked() {
	prev := streams.NewGroup(g.id)
	if g.mu.strmWritten != nil {
		if d, err := streams.Decode(g.mu.strmWritten); err == nil {
			prev = d
		}
	}
	g.mu.strm = prev
	g.mu.strm.Reconfigure(g.c.streamsMetadata())
	g.syncStreamsTimersLocked("")
}

// syncStreamsTimersLocked restarts the session of the member that just
// heartbeated (beat, if any), starts or stops revocation timers as
// members enter or leave UnrevokedTasks, and stops the timers of members
// that are gone.
func (g *group) syncStreamsTimersLocked(beat string) {
	sg := g.mu.strm
	for id, t := range g.mu.strmTimers {
		if sg.Members[id] == nil {
			stopStreamsTimers(t)
			delete(g.mu.strmTimers, id)
		}
	}
	for id, m := range sg.Members {
		t := g.mu.strmTimers[id]
		if t == nil {
			t = &streamsTimers{}
			g.mu.strmTimers[id] = t
			g.scheduleStreamsSessionLocked(id, t)
		} else if id == beat {
			g.scheduleStreamsSessionLocked(id, t)
		}
		switch {
		case m.State != streams.UnrevokedTasks && t.revoke != nil:
			t.revoke.Stop()
			t.revoke = nil
		case m.State == streams.UnrevokedTasks && (t.revoke == nil || t.revokeAt != sg.AssignmentEpoch):
			if t.revoke != nil {
				t.revoke.Stop()
			}
			t.revokeSeq, t.revokeAt = g.nextSeqLocked(), sg.AssignmentEpoch
			seq, timeout := t.revokeSeq, msDuration(m.RebalanceTimeout)
			if timeout <= 0 {
				timeout = g.c.streamsConfig().SessionTimeout
			}
			t.revoke = g.c.clock.AfterFunc(timeout, func() { g.expireStreamsMember(id, seq, true) })
		}
	}
}

func (g *group) scheduleStreamsSessionLocked(id string, t *streamsTimers) {
	if t.session != nil {
		t.session.Stop()
	}
	t.sessionSeq = g.nextSeqLocked()
	seq := t.sessionSeq
	t.session = g.c.clock.AfterFunc(g.c.streamsConfig().SessionTimeout, func() { g.expireStreamsMember(id, seq, false) })
}

func stopStreamsTimers(t *streamsTimers) {
	if t.session != nil {
		t.session.Stop()
	}
	if t.revoke != nil {
		t.revoke.Stop()
	}
}

// expireStreamsMember removes a member whose session or revocation
// timeout passed (timeouts).
func (g *group) expireStreamsMember(id string, seq uint64, revoke bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c.closing.Load() || g.mu.typ != typeStreams {
		return
	}
	t := g.mu.strmTimers[id]
	if t == nil || (!revoke && t.sessionSeq != seq) || (revoke && (t.revokeSeq != seq || t.revoke == nil)) {
		return
	}
	g.c.log.Info("streams-member-expired", zap.String("group", g.id), zap.String("member", id), zap.Bool("revocation-timeout", revoke))
	g.mu.strm.Reconfigure(g.c.streamsMetadata())
	g.mu.strm.Remove(g.c.streamsConfig(), id, g.c.clock.Now())
	g.persistStreamsLocked()
	g.syncStreamsTimersLocked("")
}

// loadStreamsGroup rebuilds a persisted streams group (durable state); every
// member's session starts at the load.
func (c *Coordinator) loadStreamsGroup(rec offsets.StreamsGroup) (*group, error) {
	sg, err := streams.Decode(rec.State)
	if err != nil {
		return nil, err
	}
	g := newGroup(c, rec.ID)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mu.typ, g.mu.strm, g.mu.strmWritten = typeStreams, sg, rec.State
	g.mu.protocolType = offsets.StreamsProtocolType
	g.mu.stateTime = rec.StateTime
	g.mu.strmTimers = make(map[string]*streamsTimers)
	sg.Reconfigure(c.streamsMetadata())
	g.syncStreamsTimersLocked("")
	return g, nil
}

// StreamsGroupDescribe handles StreamsGroupDescribe v0–1. A group that is
// absent or not a streams group is GROUP_ID_NOT_FOUND, as from Kafka.
// The topology description is the group's (KIP-1331, kafka/streams
// description.go), with its status when asked.
func msDuration(ms int32) time.Duration { return time.Duration(ms) * time.Millisecond }

func (c *Coordinator) StreamsGroupDescribe(req *kmsg.StreamsGroupDescribeRequest) *kmsg.StreamsGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.StreamsGroupDescribeResponse)
	for _, id := range req.Groups {
		dg := kmsg.NewStreamsGroupDescribeResponseGroup()
		dg.Group = id
		g := c.lookup(id)
		var msg string
		if g == nil {
			msg = fmt.Sprintf("Group %s not found.", id)
		} else {
			g.mu.Lock()
			if g.mu.typ == typeStreams && g.mu.state != stateDead {
				g.mu.strm.Describe(&dg)
				g.mu.strm.DescribeDescription(&dg, req.IncludeTopologyDescription)
			} else {
				msg = fmt.Sprintf("Group %s is not a streams group.", id)
			}
			g.mu.Unlock()
		}
		if msg != "" {
			dg.ErrorCode, dg.ErrorMessage = errGroupNotFound, &msg
		}
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

// DefaultStreamsDescriptionBytesPerPrincipal bounds the topology
// descriptions one principal stores over all streams groups (KIP-1331;
// without an authorizer every client is the principal "", so it bounds
// them all).
const DefaultStreamsDescriptionBytesPerPrincipal = 64 << 20

// StreamsGroupTopologyDescriptionUpdate handles
// StreamsGroupTopologyDescriptionUpdate v0 (KIP-1331) from principal:
// the description is stored in the group's state, durably before the
// answer (kafka/streams description.go). A group that is absent or not a
// streams group is GROUP_ID_NOT_FOUND; a principal over
// StreamsDescriptionBytesPerPrincipal (counting its descriptions in other
// groups) STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED, asked again later.
func (c *Coordinator) StreamsGroupTopologyDescriptionUpdate(principal string, req *kmsg.StreamsGroupTopologyDescriptionUpdateRequest) *kmsg.StreamsGroupTopologyDescriptionUpdateResponse {
	resp := req.ResponseKind().(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse)
	answer := func(code int16, msg string) *kmsg.StreamsGroupTopologyDescriptionUpdateResponse {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return resp
	}
	switch {
	case req.Group == "":
		return answer(errInvalidRequest, "GroupId can't be empty.")
	case req.MemberID == "":
		return answer(errInvalidRequest, "MemberId can't be empty.")
	}
	wire := streams.EncodeDescription(req.TopologyDescription)
	others := c.descriptionBytes(principal, req.Group)
	g := c.lookup(req.Group)
	if g == nil {
		return answer(errGroupNotFound, fmt.Sprintf("Group %s not found.", req.Group))
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.typ != typeStreams || g.mu.state == stateDead {
		return answer(errGroupNotFound, fmt.Sprintf("Group %s is not a streams group.", req.Group))
	}
	max := c.cfg.StreamsDescriptionBytesPerPrincipal
	if max <= 0 {
		max = DefaultStreamsDescriptionBytesPerPrincipal
	}
	if others+len(wire) > max {
		return answer(kerr.StreamsTopologyDescriptionUpdateFailed.Code, fmt.Sprintf(
			"The principal's topology descriptions would take more than %d bytes.", max))
	}
	e := g.mu.strm.PutDescription(req, wire, principal)
	if code := g.persistStreamsLocked(); code != errNone {
		return answer(code, "")
	}
	if e != nil {
		return answer(e.Code, e.Msg)
	}
	return resp
}

// descriptionBytes is the size of the topology descriptions principal
// stores in streams groups other than except. It visits every group: a
// push happens once per group and topology epoch.
func (c *Coordinator) descriptionBytes(principal, except string) int {
	c.mu.Lock()
	groups := make([]*group, 0, len(c.mu.groups))
	for id, g := range c.mu.groups {
		if id != except {
			groups = append(groups, g)
		}
	}
	c.mu.Unlock()
	n := 0
	for _, g := range groups {
		g.mu.Lock()
		if g.mu.typ == typeStreams && g.mu.strm != nil {
			n += g.mu.strm.DescriptionBytes(principal)
		}
		g.mu.Unlock()
	}
	return n
}
