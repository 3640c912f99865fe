package group

import (
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// Node is the broker that coordinates every group: this one, at the address
// the asking connection should dial.
type Node struct {
	ID   int32
	Host string
	Port int32
}

// Coordinator key types of FindCoordinator.
const (
	keyTypeGroup       int8 = 0
	keyTypeTransaction int8 = 1
)

// FindCoordinator handles FindCoordinator v0–4 (v4: batched keys, KIP-699).
// This node coordinates every group and, single-node, every transactional
// id; other key types are INVALID_REQUEST.
func (c *Coordinator) FindCoordinator(req *kmsg.FindCoordinatorRequest, self Node) *kmsg.FindCoordinatorResponse {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	code := errNone
	if req.CoordinatorType != keyTypeGroup && req.CoordinatorType != keyTypeTransaction {
		code = errInvalidRequest
	} else if c.closing.Load() {
		code = errCoordinatorNA
	}
	if req.Version < 4 {
		resp.ErrorCode = code
		if code == errNone {
			resp.NodeID, resp.Host, resp.Port = self.ID, self.Host, self.Port
		} else {
			resp.NodeID, resp.Port = -1, -1
		}
		return resp
	}
	for _, key := range req.CoordinatorKeys {
		rc := kmsg.NewFindCoordinatorResponseCoordinator()
		rc.Key, rc.ErrorCode = key, code
		if code == errNone {
			rc.NodeID, rc.Host, rc.Port = self.ID, self.Host, self.Port
		} else {
			rc.NodeID, rc.Port = -1, -1
		}
		resp.Coordinators = append(resp.Coordinators, rc)
	}
	return resp
}

// DescribeGroups handles DescribeGroups v0–6. Before v6 an unknown group
// is described as Dead with no error, and so is a consumer-protocol group
// (it is no classic group); from v6 (KIP-1043) both are GROUP_ID_NOT_FOUND
// with Kafka's message and state Dead, which the admin client turns into
// GroupIdNotFoundException. Member metadata and assignments are returned
// only for Stable groups (as Kafka).
func (c *Coordinator) DescribeGroups(req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		dg := kmsg.NewDescribeGroupsResponseGroup()
		dg.Group, dg.State = id, stateDead.String()
		g := c.lookup(id)
		if g != nil {
			g.describe(&dg)
		}
		if req.Version >= 6 && (g == nil || g.isConsumer()) {
			msg := fmt.Sprintf("Group %s not found.", id)
			if g != nil {
				msg = fmt.Sprintf("Group %s is not a classic group.", id)
			}
			dg = kmsg.NewDescribeGroupsResponseGroup()
			dg.Group, dg.ErrorCode, dg.ErrorMessage = id, kerr.GroupIDNotFound.Code, &msg
			dg.State = stateDead.String() // as Kafka 4.4 names it beside the error
		}
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

// isConsumer reports whether g speaks the consumer (KIP-848) protocol.
func (g *group) isConsumer() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.typ == typeConsumer || g.mu.typ == typeStreams
}

func (g *group) describe(dg *kmsg.DescribeGroupsResponseGroup) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.typ == typeConsumer || g.mu.typ == typeStreams {
		return // Kafka describes a consumer group as Dead (not classic) before v6
	}
	stable := g.mu.state == stateStable
	dg.State, dg.ProtocolType = g.mu.state.String(), g.mu.protocolType
	if stable {
		dg.Protocol = g.mu.protocol
	}
	for _, m := range g.sortedMembersLocked() {
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID, dm.InstanceID, dm.ClientID, dm.ClientHost = m.id, m.instanceID, m.clientID, m.clientHost
		if stable {
			dm.ProtocolMetadata, dm.MemberAssignment = m.metadataFor(g.mu.protocol), m.assignment
		}
		dg.Members = append(dg.Members, dm)
	}
}

// ListGroups handles ListGroups v0–5 (v4: states filter, v5: types
// filter, both case-insensitive). A consumer group reports its own states
// (Empty, Assigning, Reconciling, Stable) and type "consumer".
func (c *Coordinator) ListGroups(req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	want := func(filter []string, v string) bool {
		if len(filter) == 0 {
			return true
		}
		for _, f := range filter {
			if strings.EqualFold(f, v) {
				return true
			}
		}
		return false
	}
	for _, g := range c.snapshot() {
		g.mu.Lock()
		st, ptype, typ := g.mu.state, g.mu.protocolType, g.mu.typ
		name := st.String()
		if typ == typeConsumer && st != stateDead {
			name, ptype = g.mu.cons.stateName(), "consumer"
		}
		if typ == typeStreams && st != stateDead {
			name, ptype = g.mu.strm.StateName(), "streams"
		}
		g.mu.Unlock()
		if st == stateDead || !want(req.StatesFilter, name) || !want(req.TypesFilter, typ.String()) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState = g.id, ptype, name
		lg.GroupType = typ.String()
		resp.Groups = append(resp.Groups, lg)
	}
	sort.Slice(resp.Groups, func(i, j int) bool { return resp.Groups[i].Group < resp.Groups[j].Group })
	return resp
}

// DeleteGroups handles DeleteGroups v0–2: only Empty groups go, with all
// their offsets (O2) and every transaction's pending offsets in them (as
// Kafka, pending offsets do not keep a group); others get
// NON_EMPTY_GROUP, unknown ones GROUP_ID_NOT_FOUND.
func (c *Coordinator) DeleteGroups(req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group, rg.ErrorCode = id, c.deleteGroup(id)
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

func (c *Coordinator) deleteGroup(id string) int16 {
	g := c.lookup(id)
	if g == nil {
		return errGroupNotFound
	}
	g.mu.Lock()
	switch g.mu.state {
	case stateDead:
		g.mu.Unlock()
		return errGroupNotFound
	case stateEmpty:
	default:
		g.mu.Unlock()
		return errNonEmptyGroup
	}
	if g.hasConsumerMembersLocked() {
		g.mu.Unlock()
		return errNonEmptyGroup
	}
	if err := c.store.DeleteGroup(id); err != nil {
		g.mu.Unlock()
		c.log.Warn("group-delete-failed", zap.String("group", id), zap.Error(err))
		return errCoordinatorNA
	}
	g.markDeadLocked()
	g.mu.Unlock()
	c.forget(g)
	return errNone
}
