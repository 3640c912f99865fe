package share

// Answers the share coordinator gives to requests kafka/ dispatches
// elsewhere (one group-id namespace: share groups share it with the
// classic coordinator), and the current leaders a ShareFetch or
// ShareAcknowledge answer names in cluster mode (KIP-951; share reads at the leaders).

import (
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetCommitAnswer answers an OffsetCommit to a share group's id:
// GROUP_ID_NOT_FOUND on every partition, as Kafka.
func OffsetCommitAnswer(r *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.GroupIDNotFound.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// ListInto adds the share groups to a ListGroups answer, as Kafka lists
// every type when no types filter is given (one group-id namespace), and sorts the answer's
// groups by id. A nil Coordinator adds none.
func (c *Coordinator) ListInto(r *kmsg.ListGroupsRequest, resp *kmsg.ListGroupsResponse) {
	if c == nil {
		return
	}
	for _, g := range c.List() {
		if len(r.StatesFilter) > 0 && !slices.ContainsFunc(r.StatesFilter, func(f string) bool { return strings.EqualFold(f, g.State) }) {
			continue
		}
		if len(r.TypesFilter) > 0 && !slices.ContainsFunc(r.TypesFilter, func(f string) bool { return strings.EqualFold(f, "share") }) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = g.ID, "share", g.State, "share"
		resp.Groups = append(resp.Groups, lg)
	}
	sort.Slice(resp.Groups, func(i, j int) bool { return resp.Groups[i].Group < resp.Groups[j].Group })
}

// DeleteGroups deletes the share groups among ids (DeleteGroups) and
// returns their answers; rest are the ids that are not share groups (the
// classic coordinator's). A nil Coordinator holds no group.
func (c *Coordinator) DeleteGroups(ids []string) (answered []kmsg.DeleteGroupsResponseGroup, rest []string) {
	for _, id := range ids {
		if c == nil || !c.IsShareGroup(id) {
			rest = append(rest, id)
			continue
		}
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group = id
		switch ok, err := c.Delete(id); {
		case !ok:
			rg.ErrorCode = kerr.GroupIDNotFound.Code
		case errors.Is(err, ErrNotEmpty):
			rg.ErrorCode = kerr.NonEmptyGroup.Code
		case err != nil:
			rg.ErrorCode = kerr.CoordinatorNotAvailable.Code
		}
		answered = append(answered, rg)
	}
	return answered, rest
}

// Endpoint is a cluster node as a share answer names it.
type Endpoint struct {
	NodeID int32
	Host   string
	Port   int32
	Rack   *string
}

// LeaderOf names a partition's current leader and its epoch for a
// partition answered with code; ok false: name none.
type LeaderOf func(topicID [16]byte, partition int32, code int16) (node, epoch int32, ok bool)

// NameFetchLeaders sets, on each partition of resp leaderOf names a
// leader for, its current leader, and adds the endpoints of the nodes
// named (KIP-951), so that the share consumer moves without a Metadata
// round trip.
func NameFetchLeaders(resp *kmsg.ShareFetchResponse, leaderOf LeaderOf, nodes []Endpoint) {
	named := map[int32]bool{}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if node, epoch, ok := leaderOf(t.TopicID, p.Partition, p.ErrorCode); ok {
				p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = node, epoch
				named[node] = true
			}
		}
	}
	for _, b := range nodes {
		if named[b.NodeID] {
			e := kmsg.NewShareFetchResponseNodeEndpoint()
			e.NodeID, e.Host, e.Port, e.Rack = b.NodeID, b.Host, b.Port, b.Rack
			resp.NodeEndpoints = append(resp.NodeEndpoints, e)
		}
	}
}

// NameAckLeaders is NameFetchLeaders for a ShareAcknowledge answer.
func NameAckLeaders(resp *kmsg.ShareAcknowledgeResponse, leaderOf LeaderOf, nodes []Endpoint) {
	named := map[int32]bool{}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if node, epoch, ok := leaderOf(t.TopicID, p.Partition, p.ErrorCode); ok {
				p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = node, epoch
				named[node] = true
			}
		}
	}
	for _, b := range nodes {
		if named[b.NodeID] {
			e := kmsg.NewShareAcknowledgeResponseNodeEndpoint()
			e.NodeID, e.Host, e.Port, e.Rack = b.NodeID, b.Host, b.Port, b.Rack
			resp.NodeEndpoints = append(resp.NodeEndpoints, e)
		}
	}
}
