package test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// The streams group protocol (KIP-1071) driven with raw
// StreamsGroupHeartbeat and StreamsGroupDescribe requests against a real
// server: join, internal topics, task assignment, epochs, reconciliation,
// leave, fencing, errors, static membership, commits and a restart.

// streamsTopology is a two-subtopology application: subtopology 0 reads
// src and writes the repartition topic app-rep; subtopology 1 reads it
// into a state store with the changelog app-store-changelog.
func streamsTopology(app, src string) *kmsg.StreamsGroupHeartbeatRequestTopology {
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	t.Epoch = 1
	s0 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s0.SubtopologyID, s0.SourceTopics, s0.RepartitionSinkTopics = "0", []string{src}, []string{app + "-rep"}
	s1 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s1.SubtopologyID = "1"
	rep := kmsg.NewTopicInfo()
	rep.Topic = app + "-rep"
	s1.RepartitionSourceTopics = []kmsg.TopicInfo{rep}
	cl := kmsg.NewTopicInfo()
	cl.Topic = app + "-store-changelog"
	cl.Configs = []kmsg.TopicInfoConfig{{Key: "min.compaction.lag.ms", Value: "1000"}}
	s1.StateChangelogTopics = []kmsg.TopicInfo{cl}
	t.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{s0, s1}
	return &t
}

// streamsMember is one member as a Streams client keeps it: its id,
// epoch and the tasks it owns, which it reports after each change.
type streamsMember struct {
	t        *testing.T
	cl       *kgo.Client
	group    string
	id       string
	instance *string
	process  string
	topology *kmsg.StreamsGroupHeartbeatRequestTopology
	epoch    int32
	endpoint int32
	active   map[string][]int32
	standby  map[string][]int32
	warmup   map[string][]int32
	changed  bool // owned tasks changed since the last heartbeat: report them
	// offsets are the task changelog offsets the member reports (all
	// caught up: the end offsets reported are the same).
	offsets []kmsg.TaskOffset
	last    *kmsg.StreamsGroupHeartbeatResponse
}

func newStreamsMember(t *testing.T, g *gateway, groupID, id, process string, topo *kmsg.StreamsGroupHeartbeatRequestTopology) *streamsMember {
	return &streamsMember{t: t, cl: streamsClient(g), group: groupID, id: id, process: process, topology: topo}
}

// streamsClient is a client that sends the streams group APIs, which
// franz-go's default version table leaves out.
func streamsClient(g *gateway) *kgo.Client {
	v := kversion.Stable()
	v.SetMaxKeyVersion(88, 1)
	v.SetMaxKeyVersion(89, 1)
	v.SetMaxKeyVersion(93, 0)
	return g.client(kgo.MaxVersions(v))
}

func (m *streamsMember) request() *kmsg.StreamsGroupHeartbeatRequest {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch, req.InstanceID = m.group, m.id, m.epoch, m.instance
	req.EndpointInformationEpoch = m.endpoint
	req.RebalanceTimeoutMillis = -1
	if m.epoch == 0 {
		req.RebalanceTimeoutMillis = 30000
		req.Topology = m.topology
		req.ProcessID = kmsg.StringPtr(m.process)
		req.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "app-" + m.process, Port: 8080}
	}
	if m.offsets != nil {
		req.TaskOffsets, req.TaskEndOffsets = m.offsets, m.offsets
	}
	if m.changed || m.epoch == 0 {
		if m.epoch == 0 {
			m.active, m.standby, m.warmup = nil, nil, nil // a (re)join owns nothing
		}
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = taskIDs(m.active), taskIDs(m.standby), taskIDs(m.warmup)
		m.changed = false
	}
	return req
}

func taskIDs(s map[string][]int32) []kmsg.TaskIDs {
	out := []kmsg.TaskIDs{}
	for _, id := range sortedKeys(s) {
		out = append(out, kmsg.TaskIDs{SubtopologyID: id, Partitions: s[id]})
	}
	return out
}

func sortedKeys(s map[string][]int32) []string {
	var out []string
	for k := range s {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func taskMap(ids []kmsg.TaskIDs) map[string][]int32 {
	out := map[string][]int32{}
	for _, x := range ids {
		if len(x.Partitions) > 0 {
			out[x.SubtopologyID] = append([]int32(nil), x.Partitions...)
		}
	}
	return out
}

// send sends req and returns the raw answer.
func (m *streamsMember) send(req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
	m.t.Helper()
	return toNode[*kmsg.StreamsGroupHeartbeatResponse](m.t, m.cl, req)
}

// toNode sends req to the (one) broker directly: franz-go does not route
// the streams group APIs to the coordinator itself.
func toNode[R kmsg.Response](t *testing.T, cl *kgo.Client, req kmsg.Request) R {
	t.Helper()
	meta := request[*kmsg.MetadataResponse](t, cl, kmsg.NewPtrMetadataRequest())
	resp, err := cl.Broker(int(meta.Brokers[0].NodeID)).Request(testCtx(t), req)
	if err != nil {
		t.Fatalf("request key %d: %v", req.Key(), err)
	}
	return resp.(R)
}

// beat heartbeats and applies the answer as a Streams client does: a
// new task list replaces what it owns (it revokes at once).
func (m *streamsMember) beat() *kmsg.StreamsGroupHeartbeatResponse {
	m.t.Helper()
	resp := m.send(m.request())
	if resp.ErrorCode != 0 {
		m.t.Fatalf("member %s heartbeat: %v %v", m.id, kerr.ErrorForCode(resp.ErrorCode), strPtr(resp.ErrorMessage))
	}
	m.epoch, m.endpoint, m.last = resp.MemberEpoch, resp.EndpointInformationEpoch, resp
	if resp.ActiveTasks != nil {
		m.active, m.standby, m.warmup = taskMap(resp.ActiveTasks), taskMap(resp.StandbyTasks), taskMap(resp.WarmupTasks)
		m.changed = true
	}
	return resp
}

func strPtr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func countTasks(s map[string][]int32) int {
	n := 0
	for _, ps := range s {
		n += len(ps)
	}
	return n
}

// activeOwnedOnce: no task is active on two members, and with all set,
// every task of parts is active on one.
func activeOwnedOnce(t *testing.T, parts map[string]int32, all bool, ms ...*streamsMember) bool {
	t.Helper()
	seen := map[string]int{}
	for _, m := range ms {
		for id, ps := range m.active {
			for _, p := range ps {
				seen[fmt.Sprintf("%s_%d", id, p)]++
			}
		}
	}
	for k, n := range seen {
		if n > 1 {
			t.Fatalf("task %s is active on %d members", k, n)
		}
	}
	if !all {
		return true
	}
	want := 0
	for _, n := range parts {
		want += int(n)
	}
	return len(seen) == want
}

func statusCodes(resp *kmsg.StreamsGroupHeartbeatResponse) []int8 {
	var out []int8
	for _, s := range resp.Status {
		out = append(out, s.StatusCode)
	}
	return out
}

func fastStreams() group.Config {
	return group.Config{StreamsSessionTimeout: 3 * time.Second, StreamsHeartbeatInterval: 100 * time.Millisecond}
}

// settle heartbeats every member until a round changes nothing, all
// are at one epoch and every task is active exactly once (never twice
// meanwhile).
func settle(t *testing.T, parts map[string]int32, ms ...*streamsMember) {
	t.Helper()
	eventually(t, "the members to converge", func() bool {
		quiet := true
		for _, m := range ms {
			before := m.epoch
			if m.beat().ActiveTasks != nil || m.epoch != before {
				quiet = false
			}
			activeOwnedOnce(t, parts, false, ms...)
		}
		for _, m := range ms[1:] {
			if m.epoch != ms[0].epoch {
				return false
			}
		}
		return quiet && activeOwnedOnce(t, parts, true, ms...)
	})
}

// The first member's topology makes the broker create the internal
// topics (the repartition topic with the derived partition count, the
// changelog compacted with the configs asked for), and once they exist
// the member gets every task.
func TestStreamsJoinCreatesInternalTopicsAndAssigns(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: fastStreams()})
	g.createTopic("st-in", 3)
	a := newStreamsMember(t, g, "st-app", "a", "p1", streamsTopology("st-app", "st-in"))
	resp := a.beat()
	if !slices.Contains(statusCodes(resp), 3) { // MISSING_INTERNAL_TOPICS
		t.Fatalf("first join: status %v, want MISSING_INTERNAL_TOPICS", resp.Status)
	}
	if countTasks(a.active) != 0 {
		t.Fatalf("tasks %v before the internal topics exist", a.active)
	}
	topics, err := g.admin().ListTopics(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"st-app-rep", "st-app-store-changelog"} {
		td, ok := topics[name]
		if !ok || len(td.Partitions) != 3 {
			t.Fatalf("internal topic %s: present %v, partitions %d, want 3", name, ok, len(td.Partitions))
		}
	}
	cfgs, err := g.admin().DescribeTopicConfigs(testCtx(t), "st-app-store-changelog", "st-app-rep")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{
		"st-app-store-changelog": {"cleanup.policy": "compact", "min.compaction.lag.ms": "1000"},
		"st-app-rep":             {"cleanup.policy": "delete"},
	}
	for _, rc := range cfgs {
		got := map[string]string{}
		for _, c := range rc.Configs {
			got[c.Key] = c.MaybeValue()
		}
		for k, v := range want[rc.Name] {
			if got[k] != v {
				t.Fatalf("%s %s = %q, want %q", rc.Name, k, got[k], v)
			}
		}
	}
	joinEpoch := a.epoch
	resp = a.beat()
	if len(resp.Status) != 0 || a.epoch <= joinEpoch {
		t.Fatalf("after creation: status %v epoch %d (join epoch %d)", resp.Status, a.epoch, joinEpoch)
	}
	if !activeOwnedOnce(t, map[string]int32{"0": 3, "1": 3}, true, a) {
		t.Fatalf("one member owns %v, want every task", a.active)
	}
	if len(resp.PartitionsByUserEndpoint) != 1 || resp.PartitionsByUserEndpoint[0].UserEndpoint.Host != "app-p1" {
		t.Fatalf("endpoints %+v, want the member's", resp.PartitionsByUserEndpoint)
	}
}

// A topology whose source topic is missing is reported in the member's
// status and gets no task; once the topic exists it is served.
func TestStreamsMissingSourceTopic(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: fastStreams(), noAutoCreate: true})
	a := newStreamsMember(t, g, "st-miss", "a", "p1", streamsTopology("st-miss", "st-miss-in"))
	resp := a.beat()
	if !slices.Equal(statusCodes(resp), []int8{1}) || !strings.Contains(resp.Status[0].StatusDetail, "st-miss-in") {
		t.Fatalf("status %+v, want MISSING_SOURCE_TOPICS naming st-miss-in", resp.Status)
	}
	d := describeStreams(t, g, "st-miss")
	if d.State != "NotReady" {
		t.Fatalf("state %s, want NotReady", d.State)
	}
	g.createTopic("st-miss-in", 2)
	settle(t, map[string]int32{"0": 2, "1": 2}, a)
}

// Two members: the first gives up tasks before the second gets them
// (never a task active twice), both end at one epoch; the stateful tasks
// the balance moves go first as warm-ups to the new member, whose
// process has not restored them, and become active there once it
// reports them caught up; the second leaving gives everything back.
func TestStreamsReconciliationAndLeave(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: fastStreams()})
	g.createTopic("st-rc-in", 4)
	topo := streamsTopology("st-rc", "st-rc-in")
	agg := kmsg.NewTopicInfo()
	agg.Topic = "st-rc-agg-changelog"
	topo.Subtopologies[0].StateChangelogTopics = []kmsg.TopicInfo{agg} // every task stateful
	parts := map[string]int32{"0": 4, "1": 4}
	a := newStreamsMember(t, g, "st-rc", "a", "p1", topo)
	a.beat()
	settle(t, parts, a)
	b := newStreamsMember(t, g, "st-rc", "b", "p2", topo)
	b.beat()
	if countTasks(b.active) != 0 {
		t.Fatalf("b got %v before a revoked", b.active)
	}
	aEpoch := a.epoch
	a.beat() // told to revoke: fewer tasks, same epoch
	if a.epoch != aEpoch || countTasks(a.active) >= 8 {
		t.Fatalf("a revoking: epoch %d (was %d), %d active tasks, want fewer than 8 at the old epoch", a.epoch, aEpoch, countTasks(a.active))
	}
	settle(t, parts, a, b)
	if countTasks(b.warmup) != 2 || countTasks(a.active) != 6 || countTasks(b.active) != 2 {
		t.Fatalf("before b restored: a %v, b %v warm-up %v; want 6 active on a, 2 active and 2 warm-ups on b", a.active, b.active, b.warmup)
	}
	for _, id := range sortedKeys(b.warmup) { // b restored its warm-ups
		for _, p := range b.warmup[id] {
			b.offsets = append(b.offsets, kmsg.TaskOffset{SubtopologyID: id, Partition: p, Offset: 100})
		}
	}
	settle(t, parts, a, b)
	if countTasks(a.active) != 4 || countTasks(b.active) != 4 || countTasks(b.warmup) != 0 {
		t.Fatalf("after b restored: a %v b %v warm-up %v; want 4 and 4", a.active, b.active, b.warmup)
	}
	d := describeStreams(t, g, "st-rc")
	if d.State != "Stable" || len(d.Members) != 2 || d.Epoch != a.epoch {
		t.Fatalf("describe: state %s members %d epoch %d, want Stable 2 %d", d.State, len(d.Members), d.Epoch, a.epoch)
	}
	if d.Topology == nil || len(d.Topology.Subtopologies) != 2 {
		t.Fatalf("described topology %+v", d.Topology)
	}
	b.epoch = -1
	if resp := b.send(b.request()); resp.ErrorCode != 0 || resp.MemberEpoch != -1 {
		t.Fatalf("leave: %v epoch %d", kerr.ErrorForCode(resp.ErrorCode), resp.MemberEpoch)
	}
	settle(t, parts, a)
}

// Kafka's errors: validation, an unknown group, an unknown member, a
// wrong epoch, and another group type's id.
func TestStreamsErrors(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: fastStreams()})
	g.createTopic("st-err-in", 1)
	topo := streamsTopology("st-err", "st-err-in")
	a := newStreamsMember(t, g, "st-err", "a", "p1", topo)
	a.beat()
	a.beat()
	expect := func(what string, req *kmsg.StreamsGroupHeartbeatRequest, want *kerr.Error) {
		t.Helper()
		if resp := a.send(req); resp.ErrorCode != want.Code || resp.HeartbeatIntervalMillis != 0 {
			t.Fatalf("%s: %v (%s), interval %d; want %v", what, kerr.ErrorForCode(resp.ErrorCode), strPtr(resp.ErrorMessage), resp.HeartbeatIntervalMillis, want)
		}
	}
	req := a.request()
	req.MemberID = ""
	expect("empty member id", req, kerr.InvalidRequest)
	rejoin := func() *kmsg.StreamsGroupHeartbeatRequest {
		req := a.request()
		req.MemberEpoch, req.RebalanceTimeoutMillis, req.Topology = 0, 1000, topo
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		return req
	}
	req = rejoin()
	req.ActiveTasks = nil
	expect("join with null tasks", req, kerr.InvalidRequest)
	req = rejoin()
	req.Topology = nil
	expect("join without topology", req, kerr.InvalidRequest)
	req = rejoin()
	bad := streamsTopology("st-err", "st-err-in")
	bad.Subtopologies[1].StateChangelogTopics[0].NumPartitions = 3
	req.Topology = bad
	expect("changelog with a partition count", req, kerr.StreamsInvalidTopology)
	req = a.request()
	req.MemberEpoch = a.epoch + 1
	expect("epoch from the future", req, kerr.FencedMemberEpoch)
	req = a.request()
	req.MemberID = "nobody"
	expect("unknown member", req, kerr.UnknownMemberID)
	req = a.request()
	req.Group = "st-err-none"
	expect("unknown group", req, kerr.GroupIDNotFound)

	// A group id is one type's.
	cg := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	cg.Group, cg.MemberID, cg.MemberEpoch, cg.RebalanceTimeoutMillis = "st-err", "c1", 0, 30000
	cg.SubscribedTopicNames, cg.Topics = []string{"st-err-in"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if resp := request[*kmsg.ConsumerGroupHeartbeatResponse](t, a.cl, cg); resp.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("consumer heartbeat to a streams group: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Group, jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis, jg.ProtocolType = "st-err", 10000, 10000, "consumer"
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{}}}
	if resp := request[*kmsg.JoinGroupResponse](t, a.cl, jg); resp.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("JoinGroup to a streams group: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	cg.Group = "st-err-consumer"
	if resp := request[*kmsg.ConsumerGroupHeartbeatResponse](t, a.cl, cg); resp.ErrorCode != 0 {
		t.Fatalf("consumer join: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	other := newStreamsMember(t, g, "st-err-consumer", "x", "p9", topo)
	if resp := other.send(other.request()); resp.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("streams join to a consumer group: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	lg, err := g.admin().ListGroups(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := lg["st-err"]; !ok || l.GroupType != "streams" || l.ProtocolType != "streams" {
		t.Fatalf("ListGroups: %+v", lg["st-err"])
	}
}

// A static member that leaves with epoch -2 keeps its tasks; its
// instance id rejoining under a new member id takes them over at the
// same epoch, nothing moving.
func TestStreamsStaticMembership(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: fastStreams()})
	g.createTopic("st-st-in", 2)
	topo := streamsTopology("st-st", "st-st-in")
	parts := map[string]int32{"0": 2, "1": 2}
	a := newStreamsMember(t, g, "st-st", "a1", "p1", topo)
	a.instance = kmsg.StringPtr("inst-a")
	b := newStreamsMember(t, g, "st-st", "b", "p2", topo)
	a.beat()
	b.beat()
	settle(t, parts, a, b)
	epoch, owned := a.epoch, a.active
	req := a.request()
	req.MemberEpoch = -2
	if resp := a.send(req); resp.ErrorCode != 0 || resp.MemberEpoch != -2 {
		t.Fatalf("static leave: %v %d", kerr.ErrorForCode(resp.ErrorCode), resp.MemberEpoch)
	}
	b.beat()
	if countTasks(b.active) != 2 {
		t.Fatalf("b took %v while a's instance is away", b.active)
	}
	a2 := newStreamsMember(t, g, "st-st", "a2", "p1", topo)
	a2.instance = a.instance
	a2.beat()
	if a2.epoch != epoch || fmt.Sprint(a2.active) != fmt.Sprint(owned) {
		t.Fatalf("rejoined: epoch %d tasks %v, want %d %v", a2.epoch, a2.active, epoch, owned)
	}
	// The old member id is gone, and another member with the instance id
	// while a2 is there is refused.
	a3 := newStreamsMember(t, g, "st-st", "a3", "p1", topo)
	a3.instance = a.instance
	if resp := a3.send(a3.request()); resp.ErrorCode != kerr.UnreleasedInstanceID.Code {
		t.Fatalf("second static member: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
}

// Members go on through a restart of the server at their epochs with
// their tasks (the group is durable); commits are checked against the
// member epoch.
func TestStreamsSurvivesRestart(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: fastStreams()})
	g.createTopic("st-rs-in", 4)
	topo := streamsTopology("st-rs", "st-rs-in")
	parts := map[string]int32{"0": 4, "1": 4}
	a := newStreamsMember(t, g, "st-rs", "a", "p1", topo)
	b := newStreamsMember(t, g, "st-rs", "b", "p2", topo)
	a.beat()
	b.beat()
	settle(t, parts, a, b)
	commit := func(m *streamsMember, epoch int32) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.MemberID, req.Generation = m.group, m.id, epoch
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "st-rs-in"
		rt.Partitions = []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 7, LeaderEpoch: -1}}
		req.Topics = []kmsg.OffsetCommitRequestTopic{rt}
		return request[*kmsg.OffsetCommitResponse](t, m.cl, req).Topics[0].Partitions[0].ErrorCode
	}
	if code := commit(a, a.epoch); code != 0 {
		t.Fatalf("commit at the member epoch: %v", kerr.ErrorForCode(code))
	}
	if code := commit(a, a.epoch-1); code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("commit at an old epoch: %v", kerr.ErrorForCode(code))
	}
	fetch := func(m *streamsMember, epoch int32) int16 {
		req := kmsg.NewPtrOffsetFetchRequest()
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group, rg.MemberID, rg.MemberEpoch = m.group, kmsg.StringPtr(m.id), epoch
		req.Groups = []kmsg.OffsetFetchRequestGroup{rg}
		return request[*kmsg.OffsetFetchResponse](t, m.cl, req).Groups[0].ErrorCode
	}
	if code := fetch(a, a.epoch); code != 0 {
		t.Fatalf("fetch at the member epoch: %v", kerr.ErrorForCode(code))
	}
	if code := fetch(a, a.epoch-1); code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("fetch at an old epoch: %v", kerr.ErrorForCode(code))
	}
	epoch, aTasks, bTasks := a.epoch, fmt.Sprint(a.active), fmt.Sprint(b.active)
	g.restart()
	a.cl, b.cl = streamsClient(g), streamsClient(g)
	for _, m := range []*streamsMember{a, b, a, b} {
		m.beat()
	}
	if a.epoch != epoch || b.epoch != epoch || fmt.Sprint(a.active) != aTasks || fmt.Sprint(b.active) != bTasks {
		t.Fatalf("after the restart: epochs %d %d tasks %v %v; want %d %s %s", a.epoch, b.epoch, a.active, b.active, epoch, aTasks, bTasks)
	}
	off, err := g.admin().FetchOffsets(testCtx(t), "st-rs")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := off.Lookup("st-rs-in", 0); !ok || o.At != 7 {
		t.Fatalf("committed offset after the restart: %+v", o)
	}
}

// A member not heard from for the session timeout is removed and its
// tasks go to the others.
func TestStreamsSessionTimeout(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: fastStreams()})
	g.createTopic("st-to-in", 2)
	topo := streamsTopology("st-to", "st-to-in")
	parts := map[string]int32{"0": 2, "1": 2}
	a := newStreamsMember(t, g, "st-to", "a", "p1", topo)
	b := newStreamsMember(t, g, "st-to", "b", "p2", topo)
	a.beat()
	b.beat()
	settle(t, parts, a, b)
	eventually(t, "b to be removed and a to own every task", func() bool {
		a.beat()
		return countTasks(a.active) == 4
	})
	if d := describeStreams(t, g, "st-to"); len(d.Members) != 1 {
		t.Fatalf("%d members after b's session timeout", len(d.Members))
	}
}

// Standby tasks go to another process than their active task, and only
// for stateful subtopologies.
func TestStreamsStandbyTasks(t *testing.T) {
	cfg := fastStreams()
	cfg.StreamsNumStandby = 1
	g := newGatewayWith(t, gatewayOptions{group: cfg})
	g.createTopic("st-sb-in", 2)
	topo := streamsTopology("st-sb", "st-sb-in")
	a := newStreamsMember(t, g, "st-sb", "a", "p1", topo)
	b := newStreamsMember(t, g, "st-sb", "b", "p2", topo)
	a.beat()
	b.beat()
	settle(t, map[string]int32{"0": 2, "1": 2}, a, b)
	eventually(t, "standbys to be given", func() bool {
		a.beat()
		b.beat()
		return countTasks(a.standby)+countTasks(b.standby) == 2
	})
	for _, m := range []*streamsMember{a, b} {
		if _, ok := m.standby["0"]; ok {
			t.Fatalf("%s has a standby of the stateless subtopology: %v", m.id, m.standby)
		}
		for _, p := range m.standby["1"] {
			if slices.Contains(m.active["1"], p) {
				t.Fatalf("%s has task 1_%d both active and standby", m.id, p)
			}
		}
	}
}

func describeStreams(t *testing.T, g *gateway, id string) kmsg.StreamsGroupDescribeResponseGroup {
	t.Helper()
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{id}
	resp := toNode[*kmsg.StreamsGroupDescribeResponse](t, streamsClient(g), req)
	if len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
		t.Fatalf("describe %s: %+v", id, resp.Groups)
	}
	return resp.Groups[0]
}

// streams.version is a finalized feature: at 0 (UpdateFeatures, a
// downgrade) the streams group APIs answer UNSUPPORTED_VERSION, at 1
// again they serve.
func TestStreamsVersionFeature(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: fastStreams()})
	g.createTopic("st-fv-in", 1)
	a := newStreamsMember(t, g, "st-fv", "a", "p1", streamsTopology("st-fv", "st-fv-in"))
	set := func(level int16, typ int8) {
		t.Helper()
		req := kmsg.NewPtrUpdateFeaturesRequest()
		u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
		u.Feature, u.MaxVersionLevel, u.UpgradeType = "streams.version", level, typ
		req.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{u}
		if resp := request[*kmsg.UpdateFeaturesResponse](t, a.cl, req); resp.ErrorCode != 0 {
			t.Fatalf("streams.version to %d: %v", level, kerr.ErrorForCode(resp.ErrorCode))
		}
	}
	set(0, 2) // safe downgrade
	if resp := a.send(a.request()); resp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("heartbeat at streams.version 0: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	set(1, 1) // upgrade
	a.beat()
}

// Topology descriptions (KIP-1331) kept by the group: the first member
// is asked for its description, pushes it, and StreamsGroupDescribe v1
// hands it back whole, also after a restart; a push from a non-member
// or to a group that does not exist is refused.
func TestStreamsTopologyDescription(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: fastStreams()})
	g.createTopic("st-td-in", 2)
	a := newStreamsMember(t, g, "st-td", "a", "p1", streamsTopology("st-td", "st-td-in"))
	if !a.beat().TopologyDescriptionRequired {
		t.Fatal("first join: not asked for the topology description")
	}
	node := kmsg.NewTopologyDescriptionNode()
	node.Name, node.NodeType, node.SourceTopics, node.Successors = "KSTREAM-SOURCE-0000000000", 1, []string{"st-td-in"}, []string{}
	sink := kmsg.NewTopologyDescriptionNode()
	sink.Name, sink.NodeType, sink.SinkTopic = "KSTREAM-SINK-0000000001", 3, kmsg.StringPtr("st-td-rep")
	node.Successors = []string{sink.Name}
	st := kmsg.NewTopologyDescriptionSubtopology()
	st.SubtopologyID, st.Nodes = "0", []kmsg.TopologyDescriptionNode{node, sink}
	push := func(groupID, member string) int16 {
		req := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
		req.Group, req.MemberID, req.TopologyEpoch = groupID, member, 1
		req.TopologyDescription.Subtopologies = []kmsg.TopologyDescriptionSubtopology{st}
		return toNode[*kmsg.StreamsGroupTopologyDescriptionUpdateResponse](t, a.cl, req).ErrorCode
	}
	if code := push("st-td", "stranger"); code != kerr.UnknownMemberID.Code {
		t.Fatalf("push from a non-member: %v", kerr.ErrorForCode(code))
	}
	if code := push("st-td-none", "a"); code != kerr.GroupIDNotFound.Code {
		t.Fatalf("push to no group: %v", kerr.ErrorForCode(code))
	}
	if code := push("st-td", "a"); code != 0 {
		t.Fatalf("push: %v", kerr.ErrorForCode(code))
	}
	describe := func() kmsg.StreamsGroupDescribeResponseGroup {
		req := kmsg.NewPtrStreamsGroupDescribeRequest()
		req.Groups, req.IncludeTopologyDescription = []string{"st-td"}, true
		return toNode[*kmsg.StreamsGroupDescribeResponse](t, a.cl, req).Groups[0]
	}
	check := func(when string) {
		d := describe()
		if d.ErrorCode != 0 || d.TopologyDescriptionStatus != 3 || d.TopologyDescription == nil {
			t.Fatalf("%s: describe %v status %d", when, kerr.ErrorForCode(d.ErrorCode), d.TopologyDescriptionStatus)
		}
		got := d.TopologyDescription.Subtopologies
		if len(got) != 1 || len(got[0].Nodes) != 2 || got[0].Nodes[0].Name != node.Name || strPtr(got[0].Nodes[1].SinkTopic) != "st-td-rep" {
			t.Fatalf("%s: described %+v", when, got)
		}
	}
	check("after the push")
	if a.beat().TopologyDescriptionRequired {
		t.Fatal("asked again once stored")
	}
	g.restart()
	a.cl = streamsClient(g)
	check("after a restart")
}
