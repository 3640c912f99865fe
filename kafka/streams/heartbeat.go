package streams

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Env is what a heartbeat needs besides the group and the request.
type Env struct {
	Config     Config
	Metadata   Metadata
	ClientID   string
	ClientHost string
	Now        time.Time
}

// Result is a heartbeat's outcome: the answer, and the internal topics
// the broker must create for the topology.
type Result struct {
	Resp   *kmsg.StreamsGroupHeartbeatResponse
	Create []InternalTopic
}

// Heartbeat applies one StreamsGroupHeartbeat (already validated) to g.
// It changes g in place; on an error answer g is unchanged. The caller
// persists g before answering and keeps timers (session, rebalance).
func (g *Group) Heartbeat(env Env, req *kmsg.StreamsGroupHeartbeatRequest) (Result, *Error) {
	resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
	switch req.MemberEpoch {
	case EpochLeave, EpochStaticLeave:
		if err := g.leave(env, req); err != nil {
			return Result{}, err
		}
		resp.MemberID, resp.MemberEpoch = req.MemberID, req.MemberEpoch
		return Result{Resp: resp}, nil
	}
	wasEmpty := len(g.Members) == 0
	created := wasEmpty && g.Epoch == 0 // the group is new with this join
	a, err := g.memberFor(env, req)
	if err != nil {
		return Result{}, err
	}
	m := a.m
	var owned *Tasks
	if req.ActiveTasks != nil {
		owned = &Tasks{fromWire(req.ActiveTasks), fromWire(req.StandbyTasks), fromWire(req.WarmupTasks)}
	}
	bump := g.updateMember(m, a.prev, env, req)
	cfg, changed, err := g.applyTopology(env, req, owned)
	if err != nil {
		g.rollback(a)
		return Result{}, err
	}
	bump = bump || changed
	if wasEmpty && a.prev == nil && env.Config.InitialDelay > 0 {
		g.DelayUntil = env.Now.Add(env.Config.InitialDelay).UnixMilli()
	}
	delayed := g.delayed(env.Now)
	if g.recordOffsets(m, req, env.Config) {
		bump = true // a warm-up caught up: promote it
	}
	if g.Delayed && !delayed {
		bump = true // the initial delay is over: assign
	}
	if bump {
		g.Epoch++
		g.computeTarget(env.Config, env.Now)
	}
	before := m.Assigned
	g.reconcile(m, owned)
	if req.ShutdownApplication {
		g.Shutdown = m.ID
	}
	g.answer(resp, env, req, m, req.MemberEpoch == EpochJoin || !before.equal(m.Assigned), created)
	resp.Status = g.statuses(m, cfg, delayed)
	resp.TopologyDescriptionRequired = g.askDescription(m, req.Version, env.Now)
	var create []InternalTopic
	if !cfg.Ready() {
		create = cfg.Create
	}
	return Result{Resp: resp, Create: create}, nil
}

// applyTopology takes the topology a join carries (a higher epoch
// replaces the group's; the same epoch must be the same topology) and
// configures the group's against the metadata, refusing owned tasks the
// topology does not have. It changes g only once every check passed;
// whether the assignment's input changed.
func (g *Group) applyTopology(env Env, req *kmsg.StreamsGroupHeartbeatRequest, owned *Tasks) (*Configured, bool, *Error) {
	topology, changed := g.Topology, false
	if req.Topology != nil {
		t := TopologyFromRequest(req.Topology)
		switch {
		case topology == nil || t.Epoch > topology.Epoch:
			topology, changed = t, true
		case t.Epoch == topology.Epoch && string(mustJSON(t)) != string(mustJSON(topology)):
			return nil, false, fail(kerr.InvalidRequest, "Topology updates are not supported yet.")
		}
	}
	if topology == nil {
		return nil, false, fail(kerr.InvalidRequest, "The topology is null and the group topology is also null.")
	}
	cfg := Configure(topology, env.Metadata)
	if cfg.Ready() && owned != nil {
		if bad := invalidTasks(cfg.Partitions, owned); bad != "" {
			return nil, false, fail(kerr.InvalidRequest, "%s", bad)
		}
	}
	if cfg.Signature != g.Signature || cfg.Ready() != g.Ready {
		g.Signature, g.Ready, changed = cfg.Signature, cfg.Ready(), true
	}
	g.Topology, g.configured = topology, cfg
	return cfg, changed, nil
}

// answer fills the member's epoch and the intervals; its tasks when
// they are news to it (a join, or a change), which for a member with a
// user endpoint moves the endpoints' epoch (as Kafka, not on a new
// group's first join); and the endpoints when the member's are old.
func (g *Group) answer(resp *kmsg.StreamsGroupHeartbeatResponse, env Env, req *kmsg.StreamsGroupHeartbeatRequest, m *Member, newTasks, created bool) {
	resp.MemberID, resp.MemberEpoch = m.ID, m.Epoch
	resp.HeartbeatIntervalMillis = int32(env.Config.HeartbeatInterval.Milliseconds())
	resp.TaskOffsetIntervalMillis = int32(env.Config.TaskOffsetInterval.Milliseconds())
	if req.Version == 0 { // v1 carries it as an int64
		resp.AcceptableRecoveryLagLegacy = int32(min(env.Config.AcceptableLag, 1<<31-1))
	}
	resp.AcceptableRecoveryLag = env.Config.AcceptableLag
	if newTasks {
		resp.ActiveTasks, resp.StandbyTasks, resp.WarmupTasks = toWire(m.Assigned.Active), toWire(m.Assigned.Standby), toWire(m.Assigned.Warmup)
		if m.Endpoint != nil && !created {
			g.EndpointEpoch++
		}
	}
	if g.EndpointEpoch != req.EndpointInformationEpoch {
		resp.PartitionsByUserEndpoint = g.endpoints(m, env.Metadata)
	}
	resp.EndpointInformationEpoch = g.EndpointEpoch
}

// statuses are the answer's statuses, in Kafka's order: a stale
// topology, the initial delay, a topology not ready, a shutdown request.
func (g *Group) statuses(m *Member, cfg *Configured, delayed bool) []kmsg.StreamsGroupHeartbeatResponseStatus {
	var status []kmsg.StreamsGroupHeartbeatResponseStatus
	if m.TopologyEpoch < g.Topology.Epoch {
		status = append(status, statusOf(StatusStaleTopology, fmt.Sprintf(
			"The member's topology epoch %d is behind the group's topology epoch %d.", m.TopologyEpoch, g.Topology.Epoch)))
	}
	if delayed {
		status = append(status, statusOf(StatusAssignmentDelayed, "Assignment delayed due to the configured initial rebalance delay."))
	}
	if !cfg.Ready() {
		status = append(status, statusOf(cfg.Status, cfg.Detail))
	}
	if g.Shutdown != "" {
		status = append(status, statusOf(StatusShutdownApplication, fmt.Sprintf(
			"Streams group member %s encountered a fatal error and requested a shutdown for the entire application.", g.Shutdown)))
	}
	return status
}

func subtopologiesOf(t *kmsg.StreamsGroupHeartbeatRequestTopology) []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology {
	if t == nil {
		return nil
	}
	return t.Subtopologies
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func statusOf(code int8, detail string) kmsg.StreamsGroupHeartbeatResponseStatus {
	s := kmsg.NewStreamsGroupHeartbeatResponseStatus()
	s.StatusCode, s.StatusDetail = code, detail
	return s
}

// arrival is the heartbeating member and what undoes its arrival when
// a later check refuses the heartbeat.
type arrival struct {
	m        *Member
	prev     *Member // m as it was; nil when this heartbeat created it
	replaced *Member // the static member m took over, if any
}

// memberFor finds or creates the heartbeating member: a join creates it
// (GROUP_MAX_SIZE_REACHED past the bound), a static join takes over the
// member its instance id left (UNRELEASED_INSTANCE_ID while that one has
// not left); otherwise the member must exist (UNKNOWN_MEMBER_ID), carry
// its instance id (FENCED_INSTANCE_ID) and its epoch, or the previous one
// with nothing it no longer has (FENCED_MEMBER_EPOCH). On an error g is
// unchanged.
func (g *Group) memberFor(env Env, req *kmsg.StreamsGroupHeartbeatRequest) (arrival, *Error) {
	m := g.Members[req.MemberID]
	if req.MemberEpoch == EpochJoin {
		if req.InstanceID != nil {
			if oldID, ok := g.Static[*req.InstanceID]; ok && oldID != req.MemberID {
				old := g.Members[oldID]
				if old != nil && old.Epoch != EpochStaticLeave {
					return arrival{}, fail(kerr.UnreleasedInstanceID, "Static member %s with instance id %s is not released yet.", oldID, *req.InstanceID)
				}
				if old != nil {
					m := g.replaceStatic(old, req.MemberID)
					c := *m
					return arrival{m: m, prev: &c, replaced: old}, nil
				}
			}
		}
		if m == nil {
			if len(g.Members) >= env.Config.MaxSize {
				return arrival{}, fail(kerr.GroupMaxSizeReached, "The streams group has reached its maximum capacity of %d members.", env.Config.MaxSize)
			}
			m = &Member{ID: req.MemberID, InstanceID: req.InstanceID, RebalanceTimeout: req.RebalanceTimeoutMillis}
			g.Members[m.ID] = m
			if m.InstanceID != nil {
				g.Static[*m.InstanceID] = m.ID
			}
			return arrival{m: m}, nil
		}
		c := *m
		return arrival{m: m, prev: &c}, nil
	}
	if m == nil {
		return arrival{}, fail(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.ID)
	}
	if req.InstanceID != nil && (m.InstanceID == nil || *m.InstanceID != *req.InstanceID) {
		return arrival{}, fail(kerr.FencedInstanceID, "Static member %s with instance id %s is fenced.", req.MemberID, *req.InstanceID)
	}
	if req.MemberEpoch != m.Epoch {
		ok := req.MemberEpoch == m.PrevEpoch && req.MemberEpoch < m.Epoch && req.ActiveTasks != nil &&
			fromWire(req.ActiveTasks).minus(m.Assigned.Active).size() == 0
		if !ok {
			return arrival{}, fail(kerr.FencedMemberEpoch, "The streams group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", req.MemberEpoch, m.Epoch)
		}
	}
	c := *m
	return arrival{m: m, prev: &c}, nil
}

// rollback undoes memberFor and updateMember when a later check fails:
// a new member goes, a static member taken over comes back with its
// tasks, a known member is as it was.
func (g *Group) rollback(a arrival) {
	m := a.m
	switch {
	case a.replaced != nil:
		old := a.replaced
		delete(g.Members, m.ID)
		g.Members[old.ID] = old
		g.Static[*old.InstanceID] = old.ID
		g.Target[old.ID] = g.Target[m.ID]
		delete(g.Target, m.ID)
	case a.prev == nil:
		delete(g.Members, m.ID)
		if m.InstanceID != nil && g.Static[*m.InstanceID] == m.ID {
			delete(g.Static, *m.InstanceID)
		}
	default:
		*m = *a.prev
	}
}

// replaceStatic: a static member that left with epoch -2 comes back
// under id and takes over its tasks and epoch, so nothing moves. old
// itself is left as it was (rollback puts it back).
func (g *Group) replaceStatic(old *Member, id string) *Member {
	m := *old
	m.ID, m.Epoch = id, old.PrevEpoch
	delete(g.Members, old.ID)
	g.Members[id] = &m
	g.Static[*m.InstanceID] = id
	g.Target[id] = g.Target[old.ID]
	delete(g.Target, old.ID)
	return &m
}

// updateMember records what the heartbeat says about the member;
// whether that changes the assignment's input (a new member, or another
// process, rack, endpoint or tags).
func (g *Group) updateMember(m, prev *Member, env Env, req *kmsg.StreamsGroupHeartbeatRequest) bool {
	m.ClientID, m.ClientHost, m.Version = env.ClientID, env.ClientHost, req.Version
	if req.RebalanceTimeoutMillis != -1 {
		m.RebalanceTimeout = req.RebalanceTimeoutMillis
	}
	if req.RackID != nil {
		m.RackID = req.RackID
	}
	if req.Topology != nil {
		m.TopologyEpoch = req.Topology.Epoch
	}
	if req.ProcessID != nil {
		m.ProcessID = *req.ProcessID
	}
	if req.UserEndpoint != nil {
		m.Endpoint = &Endpoint{req.UserEndpoint.Host, req.UserEndpoint.Port}
	}
	if req.ClientTags != nil {
		m.ClientTags = make(map[string]string, len(req.ClientTags))
		for _, t := range req.ClientTags {
			m.ClientTags[t.Key] = t.Value
		}
	}
	if prev == nil {
		return true
	}
	return prev.ProcessID != m.ProcessID || !eqPtr(prev.RackID, m.RackID) || !eqPtr(prev.Endpoint, m.Endpoint) ||
		!maps.Equal(prev.ClientTags, m.ClientTags)
}

func eqPtr[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func taskKey(t Task) string { return t.Subtopology + ":" + strconv.Itoa(int(t.Partition)) }

// recordOffsets keeps the member's reported task offsets; whether one of
// its warm-up tasks is now caught up.
func (g *Group) recordOffsets(m *Member, req *kmsg.StreamsGroupHeartbeatRequest, cfg Config) bool {
	if req.TaskOffsets == nil && req.TaskEndOffsets == nil {
		return false
	}
	if req.TaskOffsets != nil {
		m.Offsets = make(map[string]int64, len(req.TaskOffsets))
		for _, o := range req.TaskOffsets {
			m.Offsets[taskKey(Task{o.SubtopologyID, o.Partition})] = o.Offset
		}
	}
	if req.TaskEndOffsets != nil {
		m.EndOffsets = make(map[string]int64, len(req.TaskEndOffsets))
		for _, o := range req.TaskEndOffsets {
			m.EndOffsets[taskKey(Task{o.SubtopologyID, o.Partition})] = o.Offset
		}
	}
	lags := g.lags(m.ProcessID)
	for _, t := range g.Target[m.ID].Warmup.list() {
		if lag, ok := lags[t]; ok && lag <= cfg.AcceptableLag {
			return true
		}
	}
	return false
}

// lags are a process's changelog lags per task, from what its members
// reported: end offset minus restored offset.
func (g *Group) lags(process string) map[Task]int64 {
	out := make(map[Task]int64)
	for _, m := range g.Members {
		if m.ProcessID != process {
			continue
		}
		for k, off := range m.Offsets {
			i := strings.LastIndexByte(k, ':')
			p, _ := strconv.Atoi(k[i+1:])
			t := Task{k[:i], int32(p)}
			end, ok := m.EndOffsets[k]
			if !ok {
				continue
			}
			lag := max(end-off, 0)
			if cur, seen := out[t]; !seen || lag < cur {
				out[t] = lag
			}
		}
	}
	return out
}

func invalidTasks(parts map[string]int32, owned *Tasks) string {
	for _, s := range []TaskSet{owned.Active, owned.Standby, owned.Warmup} {
		for _, t := range s.list() {
			n, ok := parts[t.Subtopology]
			if !ok || t.Partition < 0 || t.Partition >= n {
				return fmt.Sprintf("Task %s_%d is not a task of the topology.", t.Subtopology, t.Partition)
			}
		}
	}
	return ""
}

// leave handles epochs -1 (the member goes, its tasks are reassigned)
// and -2 (a static member goes for now: it keeps its tasks for its
// session timeout, and its instance id can take them back).
func (g *Group) leave(env Env, req *kmsg.StreamsGroupHeartbeatRequest) *Error {
	m := g.Members[req.MemberID]
	if m == nil {
		if req.InstanceID != nil {
			if id, ok := g.Static[*req.InstanceID]; ok && id != req.MemberID {
				return fail(kerr.FencedInstanceID, "Static member %s with instance id %s is fenced.", req.MemberID, *req.InstanceID)
			}
		}
		return fail(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.ID)
	}
	if req.MemberEpoch == EpochStaticLeave {
		if m.Epoch != EpochStaticLeave {
			m.PrevEpoch, m.Epoch = m.Epoch, EpochStaticLeave
		}
		return nil
	}
	g.Remove(env.Config, m.ID, env.Now)
	return nil
}

// Remove drops a member (a leave, a session or rebalance timeout): the
// group epoch advances and the target is recomputed without it.
func (g *Group) Remove(cfg Config, id string, now time.Time) {
	m := g.Members[id]
	if m == nil {
		return
	}
	delete(g.Members, id)
	delete(g.Target, id)
	if m.InstanceID != nil && g.Static[*m.InstanceID] == id {
		delete(g.Static, *m.InstanceID)
	}
	if g.Shutdown == id {
		g.Shutdown = ""
	}
	if len(g.Members) == 0 {
		g.Shutdown = ""
	}
	g.Epoch++
	g.computeTarget(cfg, now)
	g.Converge()
}

// endpoints are the partitions every member with a user endpoint holds,
// as active and standby tasks (interactive queries): the source and
// repartition source topic partitions of its tasks. The heartbeating
// member comes last.
func (g *Group) endpoints(self *Member, md Metadata) []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint {
	out := []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint{}
	ids := slices.Sorted(maps.Keys(g.Members))
	ids = slices.DeleteFunc(ids, func(id string) bool { return id == self.ID })
	ids = append(ids, self.ID)
	for _, id := range ids {
		m := g.Members[id]
		if m.Endpoint == nil {
			continue
		}
		e := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpoint()
		e.UserEndpoint.Host, e.UserEndpoint.Port = m.Endpoint.Host, m.Endpoint.Port
		for topic, ps := range g.topicPartitions(m.Assigned.Active, md) {
			p := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpointActivePartition()
			p.Topic, p.Partitions = topic, ps
			e.ActivePartitions = append(e.ActivePartitions, p)
		}
		for topic, ps := range g.topicPartitions(m.Assigned.Standby, md) {
			p := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpointStandbyPartition()
			p.Topic, p.Partitions = topic, ps
			e.StandbyPartitions = append(e.StandbyPartitions, p)
		}
		slices.SortFunc(e.ActivePartitions, func(a, b kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointActivePartition) int {
			return strings.Compare(a.Topic, b.Topic)
		})
		slices.SortFunc(e.StandbyPartitions, func(a, b kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointStandbyPartition) int {
			return strings.Compare(a.Topic, b.Topic)
		})
		out = append(out, e)
	}
	return out
}

func (g *Group) topicPartitions(tasks TaskSet, md Metadata) map[string][]int32 {
	out := map[string][]int32{}
	if g.Topology == nil {
		return out
	}
	for _, s := range g.Topology.Subtopologies {
		ps := tasks[s.ID]
		if len(ps) == 0 {
			continue
		}
		topics := slices.Clone(s.SourceTopics)
		for _, ti := range s.RepartitionSourceTopics {
			topics = append(topics, ti.Name)
		}
		for _, topic := range topics {
			n, _ := md.Partitions(topic)
			for _, p := range ps {
				if p < n {
					out[topic] = append(out[topic], p)
				}
			}
		}
	}
	return out
}
