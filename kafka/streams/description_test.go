package streams

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// description is a small topology description: a source feeding a
// processor with a store, feeding a sink, and one global store.
func description(sink string) kmsg.TopologyDescription {
	node := func(name string, typ int8, succ ...string) kmsg.TopologyDescriptionNode {
		n := kmsg.NewTopologyDescriptionNode()
		n.Name, n.NodeType, n.Successors = name, typ, succ
		return n
	}
	src := node("KSTREAM-SOURCE-0000000000", 1, "KSTREAM-PROCESSOR-0000000001")
	src.SourceTopics = []string{"in"}
	proc := node("KSTREAM-PROCESSOR-0000000001", 2, "KSTREAM-SINK-0000000002")
	proc.Stores = []string{"store"}
	out := node("KSTREAM-SINK-0000000002", 3)
	out.SinkTopic = kmsg.StringPtr(sink)
	d := kmsg.NewTopologyDescription()
	st := kmsg.NewTopologyDescriptionSubtopology()
	st.SubtopologyID, st.Nodes = "0", []kmsg.TopologyDescriptionNode{src, proc, out}
	d.Subtopologies = []kmsg.TopologyDescriptionSubtopology{st}
	gs := kmsg.NewTopologyDescriptionGlobalStore()
	gs.Source, gs.Processor = node("KSTREAM-SOURCE-0000000003", 1, "KTABLE-SOURCE-0000000004"), node("KTABLE-SOURCE-0000000004", 2)
	gs.Source.SourceTopics, gs.Processor.Stores = []string{"global"}, []string{"global-store"}
	d.GlobalStores = []kmsg.TopologyDescriptionGlobalStore{gs}
	return d
}

func push(g *Group, member string, epoch int32, d kmsg.TopologyDescription) *Error {
	r := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
	r.Group, r.MemberID, r.TopologyEpoch, r.TopologyDescription = g.ID, member, epoch, d
	return g.PutDescription(r, EncodeDescription(d), "User:app")
}

func describeDescription(g *Group, include bool) kmsg.StreamsGroupDescribeResponseGroup {
	dg := kmsg.NewStreamsGroupDescribeResponseGroup()
	g.DescribeDescription(&dg, include)
	return dg
}

func beatAt(t *testing.T, g *Group, req *kmsg.StreamsGroupHeartbeatRequest, now time.Time) *kmsg.StreamsGroupHeartbeatResponse {
	t.Helper()
	e := env()
	e.Now = now
	res, err := g.Heartbeat(e, req)
	if err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	return res.Resp
}

// Asked for while missing: one member of the group's topology epoch is
// asked (v1 only), again after DescriptionRetry, no longer once stored;
// a new topology epoch asks again.
func TestDescriptionAskedWhileMissing(t *testing.T) {
	g := NewGroup("g")
	t0 := time.Unix(1000, 0)
	a := beatAt(t, g, join("a"), t0)
	if !a.TopologyDescriptionRequired {
		t.Fatal("first join of a group without a description: not asked for it")
	}
	if b := beatAt(t, g, join("b"), t0.Add(time.Second)); b.TopologyDescriptionRequired {
		t.Fatal("a second member asked while the first one's push is awaited")
	}
	v0 := beat("a", a.MemberEpoch, nil)
	v0.Version = 0
	if r := beatAt(t, g, v0, t0.Add(DescriptionRetry)); r.TopologyDescriptionRequired {
		t.Fatal("a v0 heartbeat (no TopologyDescriptionRequired field) asked")
	}
	if r := beatAt(t, g, beat("a", a.MemberEpoch, nil), t0.Add(DescriptionRetry)); !r.TopologyDescriptionRequired {
		t.Fatal("not asked again after DescriptionRetry without a push")
	}
	if e := push(g, "a", 1, description("out")); e != nil {
		t.Fatalf("push: %v", e)
	}
	if r := beatAt(t, g, beat("a", a.MemberEpoch, nil), t0.Add(time.Hour)); r.TopologyDescriptionRequired {
		t.Fatal("asked though the description of the topology epoch is stored")
	}
	next := join("c")
	next.Topology = topo(2)
	if r := beatAt(t, g, next, t0.Add(time.Hour)); !r.TopologyDescriptionRequired {
		t.Fatal("a new topology epoch: its description not asked for")
	}
}

// Stored per topology epoch: only a member pushes, only the description
// of the group's topology epoch; a pushed description is described back
// whole (AVAILABLE) while its epoch is the group's, survives
// Encode/Decode, and is NOT_STORED once the topology epoch moves on;
// not asked for, no status (NOT_REQUESTED).
func TestDescriptionStoredPerEpoch(t *testing.T) {
	g := NewGroup("g")
	mustBeat(t, g, join("a"))
	if dg := describeDescription(g, true); dg.TopologyDescriptionStatus != DescriptionNotStored || dg.TopologyDescription != nil {
		t.Fatalf("before a push: status %d", dg.TopologyDescriptionStatus)
	}
	if e := push(g, "stranger", 1, description("out")); e == nil || e.Code != kerr.UnknownMemberID.Code {
		t.Fatalf("push from a non-member: %v", e)
	}
	if e := push(g, "a", 2, description("out")); e == nil || e.Code != kerr.InvalidRequest.Code {
		t.Fatalf("push of another topology epoch: %v", e)
	}
	want := description("out")
	if e := push(g, "a", 1, want); e != nil {
		t.Fatalf("push: %v", e)
	}
	d, err := Decode(g.Encode())
	if err != nil {
		t.Fatal(err)
	}
	dg := describeDescription(d, true)
	if dg.TopologyDescriptionStatus != DescriptionAvailable || dg.TopologyDescription == nil {
		t.Fatalf("after a push and a decode: status %d", dg.TopologyDescriptionStatus)
	}
	got := dg.TopologyDescription
	if !reflect.DeepEqual(got.Subtopologies, want.Subtopologies) || !reflect.DeepEqual(got.GlobalStores, want.GlobalStores) {
		t.Fatalf("described %+v, pushed %+v", *got, want)
	}
	if dg := describeDescription(d, false); dg.TopologyDescriptionStatus != DescriptionNotRequested || dg.TopologyDescription != nil {
		t.Fatalf("not asked for: status %d", dg.TopologyDescriptionStatus)
	}
	next := join("b")
	next.Topology = topo(2)
	mustBeat(t, d, next)
	if dg := describeDescription(d, true); dg.TopologyDescriptionStatus != DescriptionNotStored {
		t.Fatalf("topology epoch 2, description of 1: status %d", dg.TopologyDescriptionStatus)
	}
}

// Bounded: a description over MaxDescriptionBytes is refused
// (STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED), keeps the stored one out,
// and its epoch is not asked for again, also after Encode/Decode.
func TestDescriptionTooLarge(t *testing.T) {
	g := NewGroup("g")
	t0 := time.Unix(1000, 0)
	a := beatAt(t, g, join("a"), t0)
	e := push(g, "a", 1, description(strings.Repeat("x", MaxDescriptionBytes)))
	if e == nil || e.Code != kerr.StreamsTopologyDescriptionUpdateFailed.Code {
		t.Fatalf("push of %d bytes: %v", MaxDescriptionBytes, e)
	}
	if g.Description != nil {
		t.Fatal("a refused description was stored")
	}
	d, err := Decode(g.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if r := beatAt(t, d, beat("a", a.MemberEpoch, nil), t0.Add(time.Hour)); r.TopologyDescriptionRequired {
		t.Fatal("asked again for the epoch whose description was too large")
	}
}
