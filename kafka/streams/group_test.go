package streams

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type md map[string]int32

func (m md) Partitions(t string) (int32, bool) { n, ok := m[t]; return n, ok }

func topo(epoch int32) *kmsg.StreamsGroupHeartbeatRequestTopology {
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	t.Epoch = epoch
	s0 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s0.SubtopologyID, s0.SourceTopics, s0.RepartitionSinkTopics = "0", []string{"in"}, []string{"rep"}
	s1 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s1.SubtopologyID = "1"
	s1.SourceTopics = []string{"table"}
	s1.RepartitionSourceTopics = []kmsg.TopicInfo{{Topic: "rep"}}
	s1.StateChangelogTopics = []kmsg.TopicInfo{{Topic: "store-changelog"}}
	s1.CopartitionGroups = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup{{SourceTopics: []int16{0}, RepartitionSourceTopics: []int16{0}}}
	t.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{s0, s1}
	return &t
}

// Configure derives the repartition topic's count from its copartition
// group (the table's 3, not the writer's 5), the changelog's from its
// subtopology, and reports what is missing or wrong.
func TestConfigure(t *testing.T) {
	tp := TopologyFromRequest(topo(1))
	c := Configure(tp, md{})
	if c.Ready() || c.Status != StatusMissingSourceTopics {
		t.Fatalf("no topics: %+v", c)
	}
	c = Configure(tp, md{"in": 5, "table": 3})
	if c.Ready() || c.Status != StatusMissingInternalTopics || len(c.Create) != 2 {
		t.Fatalf("no internal topics: %+v", c)
	}
	for _, it := range c.Create {
		if it.Partitions != 3 {
			t.Fatalf("%s: %d partitions, want the copartitioned 3", it.Name, it.Partitions)
		}
		if it.Changelog != (it.Configs["cleanup.policy"] == "compact") {
			t.Fatalf("%s: configs %v", it.Name, it.Configs)
		}
	}
	c = Configure(tp, md{"in": 5, "table": 3, "rep": 3, "store-changelog": 3})
	if !c.Ready() || c.Partitions["0"] != 5 || c.Partitions["1"] != 3 {
		t.Fatalf("ready: %+v", c)
	}
	c = Configure(tp, md{"in": 5, "table": 3, "rep": 4, "store-changelog": 3})
	if c.Ready() || c.Status != StatusIncorrectlyPartitions {
		t.Fatalf("a repartition topic with another count: %+v", c)
	}
	// Two co-partitioned source topics with different counts.
	bad := topo(1)
	bad.Subtopologies[1].SourceTopics = []string{"table", "other"}
	bad.Subtopologies[1].CopartitionGroups[0].SourceTopics = []int16{0, 1}
	c = Configure(TopologyFromRequest(bad), md{"in": 5, "table": 3, "other": 2})
	if c.Ready() || c.Status != StatusIncorrectlyPartitions {
		t.Fatalf("co-partitioned sources with 3 and 2 partitions: %+v", c)
	}
}

func env() Env {
	return Env{Config: Config{}.WithDefaults(), Metadata: md{"in": 2, "table": 2, "rep": 2, "store-changelog": 2}}
}

func join(id string) *kmsg.StreamsGroupHeartbeatRequest {
	r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	r.Version = 1
	r.Group, r.MemberID, r.RebalanceTimeoutMillis, r.Topology = "g", id, 1000, topo(1)
	r.ProcessID = kmsg.StringPtr("proc-" + id)
	r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	return r
}

func beat(id string, epoch int32, active []kmsg.TaskIDs) *kmsg.StreamsGroupHeartbeatRequest {
	r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	r.Version = 1
	r.Group, r.MemberID, r.MemberEpoch, r.RebalanceTimeoutMillis = "g", id, epoch, -1
	if active != nil {
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = active, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	}
	return r
}

func mustBeat(t *testing.T, g *Group, req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
	t.Helper()
	if e := Validate(req); e != nil {
		t.Fatalf("validate: %v", e)
	}
	res, e := g.Heartbeat(env(), req)
	if e != nil {
		t.Fatalf("heartbeat: %v", e)
	}
	return res.Resp
}

// The state machine: a join gets every task; a second member's join
// makes the first revoke before the second gets them; fencing; a stale
// epoch with what the member still owns is accepted (a lost answer);
// leave; and the state survives Encode/Decode.
func TestGroupReconciliation(t *testing.T) {
	g := NewGroup("g")
	a := mustBeat(t, g, join("a"))
	if a.MemberEpoch != 1 || len(a.ActiveTasks) != 2 {
		t.Fatalf("first join: epoch %d tasks %v", a.MemberEpoch, a.ActiveTasks)
	}
	all := a.ActiveTasks
	b := mustBeat(t, g, join("b"))
	if b.MemberEpoch != 2 || len(b.ActiveTasks) != 0 {
		t.Fatalf("second join: epoch %d tasks %v; nothing while a holds them", b.MemberEpoch, b.ActiveTasks)
	}
	ra := mustBeat(t, g, beat("a", 1, nil))
	if ra.MemberEpoch != 1 || ra.ActiveTasks == nil || fromWire(ra.ActiveTasks).size() != 2 {
		t.Fatalf("a told to revoke: epoch %d tasks %v", ra.MemberEpoch, ra.ActiveTasks)
	}
	if _, e := g.Heartbeat(env(), beat("a", 3, nil)); e == nil || e.Code != kerr.FencedMemberEpoch.Code {
		t.Fatalf("future epoch: %v", e)
	}
	if _, e := g.Heartbeat(env(), beat("c", 1, nil)); e == nil || e.Code != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown member: %v", e)
	}
	// a still reports everything: it stays revoking.
	if r := mustBeat(t, g, beat("a", 1, all)); r.MemberEpoch != 1 {
		t.Fatalf("a before revoking: epoch %d", r.MemberEpoch)
	}
	kept := ra.ActiveTasks
	ra = mustBeat(t, g, beat("a", 1, kept))
	if ra.MemberEpoch != 2 {
		t.Fatalf("a after revoking: epoch %d", ra.MemberEpoch)
	}
	rb := mustBeat(t, g, beat("b", 2, []kmsg.TaskIDs{}))
	if n := fromWire(rb.ActiveTasks).size(); n != 2 || fromWire(kept).intersect(fromWire(rb.ActiveTasks)).size() != 0 {
		t.Fatalf("after reconciliation: a %v b %v", kept, rb.ActiveTasks)
	}
	if g.StateName() != "Stable" {
		t.Fatalf("state %s", g.StateName())
	}
	d, err := Decode(g.Encode())
	if err != nil || string(d.Encode()) != string(g.Encode()) {
		t.Fatalf("Encode/Decode: %v", err)
	}
	mustBeat(t, g, beat("b", -1, nil))
	if _, ok := g.Members["b"]; ok || g.Epoch != 3 {
		t.Fatalf("after b left: members %v epoch %d", g.Members, g.Epoch)
	}
}

// Validation: Kafka's messages before any state.
func TestValidate(t *testing.T) {
	r := join("a")
	r.Topology.Subtopologies[1].StateChangelogTopics[0].NumPartitions = 2
	if e := Validate(r); e == nil || e.Code != kerr.StreamsInvalidTopology.Code {
		t.Fatalf("changelog with partitions: %v", e)
	}
	r = join("a")
	r.Topology = nil
	if e := Validate(r); e == nil || e.Msg != "Topology must be non-null when (re-)joining." {
		t.Fatalf("join without topology: %v", e)
	}
	r = beat("a", 1, nil)
	r.Topology = topo(1)
	if e := Validate(r); e == nil || e.Msg != "Topology can only be provided when (re-)joining." {
		t.Fatalf("topology on a heartbeat: %v", e)
	}
	r = join("a")
	r.ActiveTasks = nil
	if e := Validate(r); e == nil || e.Msg != "ActiveTasks must be empty when (re-)joining." {
		t.Fatalf("join with null tasks: %v", e)
	}
	r = beat("a", -2, nil)
	if e := Validate(r); e == nil || e.Msg != "InstanceId can't be null." {
		t.Fatalf("static leave without instance: %v", e)
	}
	r = beat("a", 1, nil)
	r.ActiveTasks = []kmsg.TaskIDs{}
	if e := Validate(r); e == nil || e.Code != kerr.InvalidRequest.Code {
		t.Fatalf("one task type only: %v", e)
	}
}

// The initial rebalance delay: a new group's first assignment waits,
// with the status saying so, and comes with the first heartbeat after.
func TestInitialDelay(t *testing.T) {
	g := NewGroup("g")
	e := env()
	e.Config.InitialDelay = 3 * time.Second
	e.Now = time.Unix(1000, 0)
	res, err := g.Heartbeat(e, join("a"))
	if err != nil || len(res.Resp.ActiveTasks) != 0 || len(res.Resp.Status) != 1 || res.Resp.Status[0].StatusCode != StatusAssignmentDelayed {
		t.Fatalf("join during the delay: %v %+v", err, res.Resp)
	}
	e.Now = e.Now.Add(3 * time.Second)
	res, err = g.Heartbeat(e, beat("a", res.Resp.MemberEpoch, []kmsg.TaskIDs{}))
	if err != nil || fromWire(res.Resp.ActiveTasks).size() != 4 || len(res.Resp.Status) != 0 {
		t.Fatalf("after the delay: %v %+v", err, res.Resp)
	}
}

// Topology epochs: a join with a higher epoch replaces the group's
// topology and a member still at the old one is told STALE_TOPOLOGY; a
// different topology at the same epoch is refused.
func TestTopologyEpochs(t *testing.T) {
	g := NewGroup("g")
	a := mustBeat(t, g, join("a"))
	same := join("b")
	same.Topology.Subtopologies[0].SourceTopics = []string{"table"}
	if _, e := g.Heartbeat(env(), same); e == nil || e.Code != kerr.InvalidRequest.Code {
		t.Fatalf("another topology at the same epoch: %v", e)
	}
	if _, ok := g.Members["b"]; ok {
		t.Fatal("a refused join left its member")
	}
	next := join("b")
	next.Topology = topo(2)
	mustBeat(t, g, next)
	if g.Topology.Epoch != 2 {
		t.Fatalf("group topology epoch %d, want 2", g.Topology.Epoch)
	}
	r := mustBeat(t, g, beat("a", a.MemberEpoch, nil))
	if len(r.Status) == 0 || r.Status[0].StatusCode != StatusStaleTopology {
		t.Fatalf("a at topology epoch 1: status %+v, want STALE_TOPOLOGY", r.Status)
	}
}

// A heartbeat answered with an error leaves the group as it was (as
// Kafka's coordinator, which writes nothing for a refused heartbeat): a
// static member's return under a new member id, refused for a topology
// that differs at the same epoch, neither replaces the member that left
// nor moves its tasks.
func TestRefusedHeartbeatChangesNothing(t *testing.T) {
	g := NewGroup("g")
	a := join("a")
	a.InstanceID = kmsg.StringPtr("i")
	ra := mustBeat(t, g, a)
	leave := beat("a", EpochStaticLeave, nil)
	leave.InstanceID = kmsg.StringPtr("i")
	mustBeat(t, g, leave)
	before := string(g.Encode())

	back := join("a2")
	back.InstanceID, back.ProcessID = kmsg.StringPtr("i"), a.ProcessID
	back.Topology.Subtopologies[0].SourceTopics = []string{"table"}
	if _, e := g.Heartbeat(env(), back); e == nil || e.Code != kerr.InvalidRequest.Code {
		t.Fatalf("a return with another topology at the same epoch: %v", e)
	}
	if after := string(g.Encode()); after != before {
		t.Fatalf("a refused heartbeat changed the group:\nbefore %s\nafter  %s", before, after)
	}
	if m := g.Members["a"]; m == nil || m.Epoch != EpochStaticLeave || g.Static["i"] != "a" {
		t.Fatalf("the member that left: %+v, static %v", m, g.Static)
	}
	// The same return with the group's topology takes the member's
	// place, its epoch and its tasks.
	back.Topology = topo(1)
	r := mustBeat(t, g, back)
	if r.MemberEpoch != ra.MemberEpoch || fromWire(r.ActiveTasks).size() != fromWire(ra.ActiveTasks).size() {
		t.Fatalf("static return: epoch %d tasks %v, want %d %v", r.MemberEpoch, r.ActiveTasks, ra.MemberEpoch, ra.ActiveTasks)
	}
}
