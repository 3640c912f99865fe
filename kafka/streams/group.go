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

// Special member epochs of StreamsGroupHeartbeat.
const (
	EpochJoin        int32 = 0
	EpochLeave       int32 = -1
	EpochStaticLeave int32 = -2
)

// MemberState is a member's reconciliation state, as Kafka's.
type MemberState int8

const (
	Stable MemberState = iota
	UnrevokedTasks
	UnreleasedTasks
)

// Kafka's defaults for the streams group settings.
const (
	DefaultSessionTimeout     = 45 * time.Second // group.streams.session.timeout.ms
	DefaultHeartbeatInterval  = 5 * time.Second  // group.streams.heartbeat.interval.ms
	DefaultMaxWarmup          = 2                // max warm-up replicas
	DefaultAcceptableLag      = 10000            // acceptable.recovery.lag
	DefaultTaskOffsetInterval = 60 * time.Second // how often members report task offsets
	DefaultInitialDelay       = 3 * time.Second  // group.streams.initial.rebalance.delay.ms
)

// Config holds the group settings a heartbeat needs.
type Config struct {
	SessionTimeout     time.Duration
	HeartbeatInterval  time.Duration
	NumStandby         int
	MaxWarmup          int
	AcceptableLag      int64
	TaskOffsetInterval time.Duration
	MaxSize            int // group.max.size
	// InitialDelay is group.streams.initial.rebalance.delay.ms: the
	// first assignment of a group waits this long after its first member
	// joined, for the others (0: no wait).
	InitialDelay time.Duration
}

// WithDefaults fills zero fields with Kafka's defaults.
func (c Config) WithDefaults() Config {
	if c.SessionTimeout == 0 {
		c.SessionTimeout = DefaultSessionTimeout
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if c.MaxWarmup == 0 {
		c.MaxWarmup = DefaultMaxWarmup
	}
	if c.AcceptableLag == 0 {
		c.AcceptableLag = DefaultAcceptableLag
	}
	if c.TaskOffsetInterval == 0 {
		c.TaskOffsetInterval = DefaultTaskOffsetInterval
	}
	if c.MaxSize == 0 {
		c.MaxSize = 1 << 31 / 2
	}
	return c
}

// Endpoint is a member's user endpoint for interactive queries.
type Endpoint struct {
	Host string `json:"host"`
	Port uint16 `json:"port"`
}

// Member is one member of a streams group.
type Member struct {
	ID               string            `json:"id"`
	InstanceID       *string           `json:"instance,omitempty"`
	RackID           *string           `json:"rack,omitempty"`
	ClientID         string            `json:"client"`
	ClientHost       string            `json:"host"`
	ProcessID        string            `json:"process"`
	Endpoint         *Endpoint         `json:"endpoint,omitempty"`
	ClientTags       map[string]string `json:"tags,omitempty"`
	Epoch            int32             `json:"epoch"`
	PrevEpoch        int32             `json:"prevEpoch"`
	State            MemberState       `json:"state"`
	RebalanceTimeout int32             `json:"rebalanceTimeoutMs"`
	TopologyEpoch    int32             `json:"topologyEpoch"`
	// Assigned are the tasks the member owns at its epoch; Revoking
	// those it still owns and must give up first.
	Assigned Tasks `json:"assigned"`
	Revoking Tasks `json:"revoking"`
	// Offsets and EndOffsets are the last task changelog offsets the
	// member reported ("subtopology:partition" keys); Version its last
	// heartbeat version (warm-ups need v1).
	Offsets    map[string]int64 `json:"offsets,omitempty"`
	EndOffsets map[string]int64 `json:"endOffsets,omitempty"`
	Version    int16            `json:"version"`
}

// Group is a streams group's whole state; it is what is persisted.
type Group struct {
	ID              string             `json:"id"`
	Epoch           int32              `json:"epoch"`
	AssignmentEpoch int32              `json:"assignmentEpoch"`
	Topology        *Topology          `json:"topology,omitempty"`
	Signature       string             `json:"signature"`
	Ready           bool               `json:"ready"`
	Members         map[string]*Member `json:"members"`
	Static          map[string]string  `json:"static"`
	Target          map[string]Tasks   `json:"target"`
	EndpointEpoch   int32              `json:"endpointEpoch"`
	Shutdown        string             `json:"shutdown,omitempty"`
	// DelayUntil (unix ms) is when the initial rebalance delay ends;
	// Delayed: a target was left empty for it and is still to compute.
	DelayUntil int64 `json:"delayUntil,omitempty"`
	Delayed    bool  `json:"delayed,omitempty"`
	// Description is the topology description last pushed (KIP-1331,
	// description.go); DescriptionRefused the topology epoch whose push
	// was refused for good (not asked for again).
	Description        *Description `json:"description,omitempty"`
	DescriptionRefused *int32       `json:"descriptionRefused,omitempty"`

	configured *Configured
	askedUntil time.Time // a member was asked for the description; wait until then
}

// NewGroup is an empty group.
func NewGroup(id string) *Group {
	return &Group{ID: id, Members: map[string]*Member{}, Static: map[string]string{}, Target: map[string]Tasks{}}
}

// Encode is the persisted form; equal states encode equally.
func (g *Group) Encode() []byte {
	b, err := json.Marshal(g)
	if err != nil {
		panic(err) // only plain data: cannot fail
	}
	return b
}

// Decode is Encode's inverse.
func Decode(b []byte) (*Group, error) {
	g := NewGroup("")
	if err := json.Unmarshal(b, g); err != nil {
		return nil, fmt.Errorf("streams: decode group: %w", err)
	}
	if g.Members == nil || g.Static == nil || g.Target == nil {
		return nil, fmt.Errorf("streams: decode group %q: incomplete", g.ID)
	}
	return g, nil
}

// StateName is Kafka's streams group state: Empty, NotReady (the
// topology cannot be served yet), Assigning, Reconciling or Stable.
func (g *Group) StateName() string {
	switch {
	case len(g.Members) == 0:
		return "Empty"
	case !g.Ready:
		return "NotReady"
	case g.AssignmentEpoch != g.Epoch:
		return "Assigning"
	}
	for _, m := range g.Members {
		if m.Epoch != EpochStaticLeave && (m.Epoch != g.AssignmentEpoch || m.State != Stable) {
			return "Reconciling"
		}
	}
	return "Stable"
}

// Error is an error answer: a Kafka code and message.
type Error struct {
	Code int16
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func fail(e *kerr.Error, format string, args ...any) *Error {
	return &Error{e.Code, fmt.Sprintf(format, args...)}
}

// Validate is Kafka's request validation, before any state:
// INVALID_REQUEST, or STREAMS_INVALID_TOPOLOGY for a topology that
// cannot be right.
func Validate(req *kmsg.StreamsGroupHeartbeatRequest) *Error {
	bad := func(msg string) *Error { return &Error{kerr.InvalidRequest.Code, msg} }
	for _, t := range subtopologiesOf(req.Topology) {
		if len(t.SourceTopicRegex) > 0 {
			return bad("Regular expressions for source topics are not supported yet.")
		}
	}
	switch {
	case req.MemberID == "":
		return bad("MemberId can't be empty.")
	case req.Group == "":
		return bad("GroupId can't be empty.")
	case req.InstanceID != nil && *req.InstanceID == "":
		return bad("InstanceId can't be empty.")
	case req.RackID != nil && *req.RackID == "":
		return bad("RackId can't be empty.")
	}
	switch {
	case req.MemberEpoch == EpochJoin:
		switch {
		case req.RebalanceTimeoutMillis == -1:
			return bad("RebalanceTimeoutMs must be provided in first request.")
		// Empty, not absent: Kafka refuses null lists here too.
		case req.ActiveTasks == nil || len(req.ActiveTasks) > 0:
			return bad("ActiveTasks must be empty when (re-)joining.")
		case req.StandbyTasks == nil || len(req.StandbyTasks) > 0:
			return bad("StandbyTasks must be empty when (re-)joining.")
		case req.WarmupTasks == nil || len(req.WarmupTasks) > 0:
			return bad("WarmupTasks must be empty when (re-)joining.")
		case req.Topology == nil:
			return bad("Topology must be non-null when (re-)joining.")
		}
		if msg := validateTopology(req.Topology); msg != "" {
			return &Error{kerr.StreamsInvalidTopology.Code, msg}
		}
	case req.MemberEpoch == EpochStaticLeave:
		if req.InstanceID == nil {
			return bad("InstanceId can't be null.")
		}
	case req.MemberEpoch < EpochStaticLeave:
		return bad(fmt.Sprintf("MemberEpoch is %d, but must be greater than or equal to -2.", req.MemberEpoch))
	}
	if req.ActiveTasks != nil || req.StandbyTasks != nil || req.WarmupTasks != nil {
		if req.ActiveTasks == nil || req.StandbyTasks == nil || req.WarmupTasks == nil {
			return bad("If one task-type is non-null, all must be non-null.")
		}
	}
	if req.MemberEpoch != EpochJoin && req.Topology != nil {
		return bad("Topology can only be provided when (re-)joining.")
	}
	return nil
}

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
	m, prev, err := g.memberFor(env, req)
	if err != nil {
		return Result{}, err
	}
	if wasEmpty && prev == nil && env.Config.InitialDelay > 0 {
		g.DelayUntil = env.Now.Add(env.Config.InitialDelay).UnixMilli()
	}
	delayed := g.delayed(env.Now)
	var owned *Tasks
	if req.ActiveTasks != nil {
		owned = &Tasks{fromWire(req.ActiveTasks), fromWire(req.StandbyTasks), fromWire(req.WarmupTasks)}
	}
	bump := g.updateMember(m, prev, env, req)
	var status []kmsg.StreamsGroupHeartbeatResponseStatus
	if req.Topology != nil {
		t := TopologyFromRequest(req.Topology)
		switch {
		case g.Topology == nil || t.Epoch > g.Topology.Epoch:
			g.Topology, g.configured, bump = t, nil, true
		case t.Epoch == g.Topology.Epoch && string(mustJSON(t)) != string(mustJSON(g.Topology)):
			g.rollback(m, prev)
			return Result{}, fail(kerr.InvalidRequest, "Topology updates are not supported yet.")
		}
	}
	if g.Topology == nil {
		g.rollback(m, prev)
		return Result{}, fail(kerr.InvalidRequest, "The topology is null and the group topology is also null.")
	}
	if m.TopologyEpoch < g.Topology.Epoch {
		status = append(status, statusOf(StatusStaleTopology, fmt.Sprintf(
			"The member's topology epoch %d is behind the group's topology epoch %d.", m.TopologyEpoch, g.Topology.Epoch)))
	}
	cfg := Configure(g.Topology, env.Metadata)
	if cfg.Signature != g.Signature || cfg.Ready() != g.Ready {
		g.Signature, g.Ready, bump = cfg.Signature, cfg.Ready(), true
	}
	g.configured = cfg
	if cfg.Ready() && owned != nil {
		if bad := invalidTasks(cfg.Partitions, owned); bad != "" {
			g.rollback(m, prev)
			return Result{}, fail(kerr.InvalidRequest, "%s", bad)
		}
	}
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
	resp.MemberID, resp.MemberEpoch = m.ID, m.Epoch
	resp.HeartbeatIntervalMillis = int32(env.Config.HeartbeatInterval.Milliseconds())
	resp.TaskOffsetIntervalMillis = int32(env.Config.TaskOffsetInterval.Milliseconds())
	if req.Version == 0 { // v1 carries it as an int64
		resp.AcceptableRecoveryLagLegacy = int32(min(env.Config.AcceptableLag, 1<<31-1))
	}
	resp.AcceptableRecoveryLag = env.Config.AcceptableLag
	if req.MemberEpoch == EpochJoin || !before.equal(m.Assigned) {
		resp.ActiveTasks, resp.StandbyTasks, resp.WarmupTasks = toWire(m.Assigned.Active), toWire(m.Assigned.Standby), toWire(m.Assigned.Warmup)
		if m.Endpoint != nil && !created { // as Kafka, a new group's first join does not count
			g.EndpointEpoch++
		}
	}
	if g.EndpointEpoch != req.EndpointInformationEpoch {
		resp.PartitionsByUserEndpoint = g.endpoints(m, env.Metadata)
	}
	resp.EndpointInformationEpoch = g.EndpointEpoch
	var create []InternalTopic
	if delayed {
		status = append(status, statusOf(StatusAssignmentDelayed, "Assignment delayed due to the configured initial rebalance delay."))
	}
	if !cfg.Ready() {
		create = cfg.Create
		status = append(status, statusOf(cfg.Status, cfg.Detail))
	}
	if g.Shutdown != "" {
		status = append(status, statusOf(StatusShutdownApplication, fmt.Sprintf(
			"Streams group member %s encountered a fatal error and requested a shutdown for the entire application.", g.Shutdown)))
	}
	resp.Status = status
	resp.TopologyDescriptionRequired = g.askDescription(m, req.Version, env.Now)
	return Result{Resp: resp, Create: create}, nil
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

// memberFor finds or creates the heartbeating member: a join creates it
// (GROUP_MAX_SIZE_REACHED past the bound), a static join takes over the
// member its instance id left (UNRELEASED_INSTANCE_ID while that one has
// not left); otherwise the member must exist (UNKNOWN_MEMBER_ID), carry
// its instance id (FENCED_INSTANCE_ID) and its epoch, or the previous one
// with nothing it no longer has (FENCED_MEMBER_EPOCH). prev is the member
// as it was (nil if new), to undo on a later error.
func (g *Group) memberFor(env Env, req *kmsg.StreamsGroupHeartbeatRequest) (*Member, *Member, *Error) {
	m := g.Members[req.MemberID]
	if req.MemberEpoch == EpochJoin {
		if req.InstanceID != nil {
			if oldID, ok := g.Static[*req.InstanceID]; ok && oldID != req.MemberID {
				old := g.Members[oldID]
				if old != nil && old.Epoch != EpochStaticLeave {
					return nil, nil, fail(kerr.UnreleasedInstanceID, "Static member %s with instance id %s is not released yet.", oldID, *req.InstanceID)
				}
				if old != nil {
					m := g.replaceStatic(old, req.MemberID)
					c := *m
					return m, &c, nil
				}
			}
		}
		if m == nil {
			if len(g.Members) >= env.Config.MaxSize {
				return nil, nil, fail(kerr.GroupMaxSizeReached, "The streams group has reached its maximum capacity of %d members.", env.Config.MaxSize)
			}
			m = &Member{ID: req.MemberID, InstanceID: req.InstanceID, RebalanceTimeout: req.RebalanceTimeoutMillis}
			g.Members[m.ID] = m
			if m.InstanceID != nil {
				g.Static[*m.InstanceID] = m.ID
			}
			return m, nil, nil
		}
		c := *m
		return m, &c, nil
	}
	if m == nil {
		return nil, nil, fail(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.ID)
	}
	if req.InstanceID != nil && (m.InstanceID == nil || *m.InstanceID != *req.InstanceID) {
		return nil, nil, fail(kerr.FencedInstanceID, "Static member %s with instance id %s is fenced.", req.MemberID, *req.InstanceID)
	}
	if req.MemberEpoch != m.Epoch {
		ok := req.MemberEpoch == m.PrevEpoch && req.MemberEpoch < m.Epoch && req.ActiveTasks != nil &&
			fromWire(req.ActiveTasks).minus(m.Assigned.Active).size() == 0
		if !ok {
			return nil, nil, fail(kerr.FencedMemberEpoch, "The streams group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", req.MemberEpoch, m.Epoch)
		}
	}
	c := *m
	return m, &c, nil
}

// rollback undoes memberFor and updateMember when a later check fails.
func (g *Group) rollback(m, prev *Member) {
	if prev == nil {
		delete(g.Members, m.ID)
		if m.InstanceID != nil && g.Static[*m.InstanceID] == m.ID {
			delete(g.Static, *m.InstanceID)
		}
		return
	}
	*m = *prev
}

// replaceStatic: a static member that left with epoch -2 comes back
// under id and takes over its tasks and epoch, so nothing moves.
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

// delayed: the initial rebalance delay runs at now.
func (g *Group) delayed(now time.Time) bool {
	return g.DelayUntil > 0 && now.UnixMilli() < g.DelayUntil
}

// computeTarget recomputes every member's target assignment at the
// group epoch: empty while the topology is not ready or the initial
// rebalance delay runs.
func (g *Group) computeTarget(cfg Config, now time.Time) {
	g.AssignmentEpoch = g.Epoch
	g.Target = make(map[string]Tasks, len(g.Members))
	g.Delayed = g.delayed(now)
	if g.Delayed || !g.Ready || g.configured == nil || !g.configured.Ready() {
		for id := range g.Members {
			g.Target[id] = Tasks{}
		}
		return
	}
	spec := AssignSpec{
		Partitions: g.configured.Partitions, Stateful: map[string]bool{},
		NumStandby: cfg.NumStandby, MaxWarmup: cfg.MaxWarmup, AcceptableLag: cfg.AcceptableLag,
	}
	for _, s := range g.Topology.Subtopologies {
		spec.Stateful[s.ID] = s.stateful()
	}
	lags := map[string]map[Task]int64{}
	for _, id := range slices.Sorted(maps.Keys(g.Members)) {
		m := g.Members[id]
		if lags[m.ProcessID] == nil {
			lags[m.ProcessID] = g.lags(m.ProcessID)
		}
		prev := Tasks{
			Active:  union(m.Assigned.Active, m.Revoking.Active),
			Standby: union(m.Assigned.Standby, m.Revoking.Standby),
			Warmup:  union(m.Assigned.Warmup, m.Revoking.Warmup),
		}
		spec.Members = append(spec.Members, AssignMember{ID: id, Process: m.ProcessID, Prev: prev, Lags: lags[m.ProcessID], Warmups: m.Version >= 1})
	}
	for id, t := range Assign(spec) {
		g.Target[id] = t
	}
}

func union(a, b TaskSet) TaskSet { return setOf(append(a.list(), b.list()...)) }

// reconcile moves m toward its target (Kafka's CurrentAssignmentBuilder):
// tasks it must give up are revoked first, and m stays at its epoch
// until it reports (owned) that it no longer has them; then it moves to
// the target epoch with every target task no other member still holds.
// An active task goes to a member only when no other member owns it; a
// standby or warm-up only when no other member of the same process holds
// the task. Tasks held back are given on a later heartbeat.
func (g *Group) reconcile(m *Member, owned *Tasks) {
	target := g.Target[m.ID]
	switch m.State {
	case UnrevokedTasks:
		if owned == nil || !owned.intersect(m.Revoking).empty() {
			return
		}
	case Stable:
		if m.Epoch == g.AssignmentEpoch {
			return
		}
	}
	revoke := m.Assigned.minus(target)
	if !revoke.empty() {
		m.Assigned = m.Assigned.intersect(target)
		m.Revoking = revoke
		m.State = UnrevokedTasks
		return
	}
	next := Tasks{TaskSet{}, TaskSet{}, TaskSet{}}
	for _, t := range target.Active.list() {
		if m.Assigned.Active.has(t) || !g.heldActive(m, t) {
			next.Active = next.Active.add(t)
		}
	}
	for _, role := range []struct {
		from TaskSet
		to   *TaskSet
	}{{target.Standby, &next.Standby}, {target.Warmup, &next.Warmup}} {
		for _, t := range role.from.list() {
			if !g.heldInProcess(m, t) {
				*role.to = role.to.add(t)
			}
		}
	}
	if m.Epoch != g.AssignmentEpoch {
		m.PrevEpoch, m.Epoch = m.Epoch, g.AssignmentEpoch
	}
	m.Assigned, m.Revoking = next, Tasks{}
	m.State = Stable
	if !next.equal(target) {
		m.State = UnreleasedTasks
	}
}

func (g *Group) heldActive(self *Member, t Task) bool {
	for _, o := range g.Members {
		if o != self && (o.Assigned.Active.has(t) || o.Revoking.Active.has(t)) {
			return true
		}
	}
	return false
}

func (g *Group) heldInProcess(self *Member, t Task) bool {
	for _, o := range g.Members {
		if o == self || o.ProcessID != self.ProcessID {
			continue
		}
		for _, s := range []TaskSet{o.Assigned.Active, o.Assigned.Standby, o.Assigned.Warmup, o.Revoking.Active, o.Revoking.Standby, o.Revoking.Warmup} {
			if s.has(t) {
				return true
			}
		}
	}
	return false
}

// Converge lets members held back by tasks another member just released
// take them: the coordinator calls it for every member after a removal
// or revocation, as their next heartbeat would. It reports the members
// whose assignment changed.
func (g *Group) Converge() {
	for _, id := range slices.Sorted(maps.Keys(g.Members)) {
		m := g.Members[id]
		if m.State == UnreleasedTasks && m.Epoch != EpochStaticLeave {
			g.reconcile(m, nil)
		}
	}
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

func (c *Configured) internal(topic string) (int32, bool) {
	if c == nil {
		return 0, false
	}
	n, ok := c.Internal[topic]
	return n, ok && n > 0
}

// Reconfigure re-checks the topology against md (after the broker
// created internal topics, or on a load) without a heartbeat.
func (g *Group) Reconfigure(md Metadata) {
	if g.Topology != nil {
		g.configured = Configure(g.Topology, md)
	}
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

// Describe fills a StreamsGroupDescribe group.
func (g *Group) Describe(dg *kmsg.StreamsGroupDescribeResponseGroup) {
	dg.State, dg.Epoch, dg.AssignmentEpoch = g.StateName(), g.Epoch, g.AssignmentEpoch
	assignor := "sticky"
	dg.AssignorName = &assignor
	if g.Topology != nil {
		t := kmsg.NewStreamsGroupDescribeResponseGroupTopology()
		t.Epoch = g.Topology.Epoch
		for _, s := range g.Topology.Subtopologies {
			ds := kmsg.NewStreamsGroupDescribeResponseGroupTopologySubtopology()
			ds.SubtopologyID, ds.SourceTopics, ds.RepartitionSinkTopics = s.ID, nonNil(s.SourceTopics), nonNil(s.RepartitionSinkTopics)
			ds.StateChangelogTopics, ds.RepartitionSourceTopics = g.toInfo(s.StateChangelogTopics), g.toInfo(s.RepartitionSourceTopics)
			t.Subtopologies = append(t.Subtopologies, ds)
		}
		dg.Topology = &t
	}
	for _, id := range slices.Sorted(maps.Keys(g.Members)) {
		m := g.Members[id]
		dm := kmsg.NewStreamsGroupDescribeResponseGroupMember()
		dm.MemberID, dm.MemberEpoch, dm.InstanceID, dm.RackID = m.ID, m.Epoch, m.InstanceID, m.RackID
		dm.ClientID, dm.ClientHost, dm.TopologyEpoch, dm.ProcessID = m.ClientID, m.ClientHost, m.TopologyEpoch, m.ProcessID
		if m.Endpoint != nil {
			dm.UserEndpoint = &kmsg.StreamsGroupDescribeResponseGroupMemberUserEndpoint{Host: m.Endpoint.Host, Port: m.Endpoint.Port}
		}
		for _, k := range slices.Sorted(maps.Keys(m.ClientTags)) {
			dm.ClientTags = append(dm.ClientTags, kmsg.StreamsGroupDescribeResponseGroupMemberClientTag{Key: k, Value: m.ClientTags[k]})
		}
		dm.TaskOffsets, dm.TaskEndOffsets = offsetsOf(m.Offsets), offsetsOf(m.EndOffsets)
		dm.Assignment = wireAssignment(m.Assigned)
		dm.TargetAssignment = wireAssignment(g.Target[id])
		dg.Members = append(dg.Members, dm)
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// toInfo describes internal topics with their derived partition counts
// where the topology is configured, as Kafka describes them.
func (g *Group) toInfo(in []TopicInfo) []kmsg.TopicInfo {
	out := []kmsg.TopicInfo{}
	for _, ti := range in {
		x := kmsg.NewTopicInfo()
		x.Topic, x.NumPartitions, x.ReplicationFactor = ti.Name, ti.Partitions, ti.Replication
		if n, ok := g.configured.internal(ti.Name); ok && x.NumPartitions == 0 {
			x.NumPartitions = n
		}
		for _, k := range slices.Sorted(maps.Keys(ti.Configs)) {
			x.Configs = append(x.Configs, kmsg.TopicInfoConfig{Key: k, Value: ti.Configs[k]})
		}
		out = append(out, x)
	}
	return out
}

func offsetsOf(m map[string]int64) []kmsg.TaskOffset {
	out := []kmsg.TaskOffset{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		i := strings.LastIndexByte(k, ':')
		p, _ := strconv.Atoi(k[i+1:])
		o := kmsg.NewTaskOffset()
		o.SubtopologyID, o.Partition, o.Offset = k[:i], int32(p), m[k]
		out = append(out, o)
	}
	return out
}

func wireAssignment(t Tasks) kmsg.StreamsAssignment {
	return kmsg.StreamsAssignment{ActiveTasks: toWire(t.Active), StandbyTasks: toWire(t.Standby), WarmupTasks: toWire(t.Warmup)}
}

// ValidateCommit is Kafka's StreamsGroup.validateOffsetCommit: into a
// group with members only from a member (UNKNOWN_MEMBER_ID) at its
// current epoch (STALE_MEMBER_EPOCH); without members, a commit outside
// group management (epoch < 0) is taken.
func (g *Group) ValidateCommit(memberID string, epoch int32) int16 {
	if epoch < 0 && len(g.Members) == 0 {
		return 0
	}
	m := g.Members[memberID]
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	if epoch != m.Epoch {
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}

// Subscribes reports whether the topology reads topic (OffsetDelete's
// GROUP_SUBSCRIBED_TO_TOPIC while the group has members).
func (g *Group) Subscribes(topic string) bool {
	if g.Topology == nil || len(g.Members) == 0 {
		return false
	}
	for _, s := range g.Topology.Subtopologies {
		if slices.Contains(s.SourceTopics, topic) {
			return true
		}
		for _, ti := range s.RepartitionSourceTopics {
			if ti.Name == topic {
				return true
			}
		}
	}
	return false
}
