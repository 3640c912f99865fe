package streams

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Topology descriptions (KIP-1331). A streams group's members describe
// their whole processing graph (the nodes, their successors, stores and
// topics: what Topology#describe() prints) when the coordinator asks in
// a heartbeat answer (TopologyDescriptionRequired, v1), with a
// StreamsGroupTopologyDescriptionUpdate; StreamsGroupDescribe v1 hands
// it back. Kafka passes it to a broker plugin
// (group.streams.topology.description.plugin.class; without one it asks
// for nothing and refuses pushes); here the group keeps it itself, in its
// persisted state, as Kafka with a plugin configured does:
//
//   - Stored per topology epoch: a push is of the group's topology epoch
//     (else INVALID_REQUEST) and is served only while that is the
//     group's topology epoch (AVAILABLE, else NOT_STORED).
//   - Asked for while missing: a heartbeat of a member at the group's
//     topology epoch is asked for it while the group has none for that
//     epoch, one member at a time (DescriptionRetry between askings), and
//     not again for an epoch whose push was refused as too large.
//   - Bounded: at most MaxDescriptionBytes per group (encoded); a larger
//     one is STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED for good for that
//     epoch. The caller bounds what one principal stores over all groups.
//   - Gone with the group: deleting or expiring the group deletes it.

// Description statuses of StreamsGroupDescribe v1.
const (
	DescriptionNotRequested int8 = 0
	DescriptionNotStored    int8 = 1
	DescriptionAvailable    int8 = 3
)

// MaxDescriptionBytes bounds one group's description, encoded (a
// topology of a few hundred nodes takes tens of KiB).
const MaxDescriptionBytes = 256 << 10

// DescriptionRetry is how long after asking a member for the description
// the group waits for it before asking again.
const DescriptionRetry = 30 * time.Second

// Description is the topology description pushed for a group.
type Description struct {
	// Epoch is the topology epoch it describes.
	Epoch int32 `json:"epoch"`
	// Principal pushed it (the per-principal bound counts it).
	Principal string `json:"principal"`
	// Wire is the description encoded as the body of a v0
	// StreamsGroupTopologyDescriptionUpdate with no group or member.
	Wire []byte `json:"wire"`
}

// EncodeDescription is d's wire form (Description.Wire).
func EncodeDescription(d kmsg.TopologyDescription) []byte {
	r := kmsg.NewStreamsGroupTopologyDescriptionUpdateRequest()
	r.TopologyDescription = d
	return r.AppendTo(nil)
}

// decodeDescription is EncodeDescription's inverse.
func decodeDescription(b []byte) (kmsg.TopologyDescription, error) {
	r := kmsg.NewStreamsGroupTopologyDescriptionUpdateRequest()
	if err := r.ReadFrom(b); err != nil {
		return kmsg.TopologyDescription{}, fmt.Errorf("streams: decode topology description: %w", err)
	}
	return r.TopologyDescription, nil
}

// wantsDescription reports whether the group lacks the description of
// its topology epoch and may still ask for it.
func (g *Group) wantsDescription() bool {
	if g.Topology == nil {
		return false
	}
	e := g.Topology.Epoch
	return (g.Description == nil || g.Description.Epoch != e) && (g.DescriptionRefused == nil || *g.DescriptionRefused != e)
}

// askDescription reports whether member m's heartbeat (version v) at now
// asks for the description, and notes the asking.
func (g *Group) askDescription(m *Member, v int16, now time.Time) bool {
	if v < 1 || !g.wantsDescription() || m.TopologyEpoch != g.Topology.Epoch || now.Before(g.askedUntil) {
		return false
	}
	g.askedUntil = now.Add(DescriptionRetry)
	return true
}

// PutDescription stores a pushed description: the member must be in the
// group (UNKNOWN_MEMBER_ID), the description of the group's topology
// epoch (INVALID_REQUEST, as Kafka) and within MaxDescriptionBytes (else
// refused for its epoch). wire is
// EncodeDescription of the request's. On an error g is unchanged but for
// the refusal.
func (g *Group) PutDescription(req *kmsg.StreamsGroupTopologyDescriptionUpdateRequest, wire []byte, principal string) *Error {
	if g.Members[req.MemberID] == nil {
		return fail(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.ID)
	}
	if g.Topology == nil || req.TopologyEpoch != g.Topology.Epoch {
		return fail(kerr.InvalidRequest, "Topology epoch %d does not match the group's current topology epoch %d.", req.TopologyEpoch, g.topologyEpoch())
	}
	if len(wire) > MaxDescriptionBytes {
		e := req.TopologyEpoch
		g.DescriptionRefused = &e
		return fail(kerr.StreamsTopologyDescriptionUpdateFailed,
			"The topology description is %d bytes, more than the %d a group may store.", len(wire), MaxDescriptionBytes)
	}
	g.Description = &Description{Epoch: req.TopologyEpoch, Principal: principal, Wire: wire}
	g.askedUntil = time.Time{}
	return nil
}

func (g *Group) topologyEpoch() int32 {
	if g.Topology == nil {
		return -1
	}
	return g.Topology.Epoch
}

// DescribeDescription fills a StreamsGroupDescribe v1 group's
// description and its status, when asked (include).
func (g *Group) DescribeDescription(dg *kmsg.StreamsGroupDescribeResponseGroup, include bool) {
	if !include {
		return
	}
	dg.TopologyDescriptionStatus = DescriptionNotStored
	if g.Topology == nil || g.Description == nil || g.Description.Epoch != g.Topology.Epoch {
		return
	}
	d, err := decodeDescription(g.Description.Wire)
	if err != nil {
		return
	}
	dg.TopologyDescriptionStatus = DescriptionAvailable
	dg.TopologyDescription = &kmsg.StreamsGroupDescribeResponseGroupTopologyDescription{Subtopologies: d.Subtopologies, GlobalStores: d.GlobalStores}
}

// DescriptionBytes is the size of the description principal pushed to
// g, or 0.
func (g *Group) DescriptionBytes(principal string) int {
	if g.Description == nil || g.Description.Principal != principal {
		return 0
	}
	return len(g.Description.Wire)
}
