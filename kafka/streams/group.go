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
