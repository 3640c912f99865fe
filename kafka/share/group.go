package share

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// member is one share-group member.
type member struct {
	id         string
	epoch      int32
	prevEpoch  int32
	rack       *string
	clientID   string
	clientHost string
	// principal joined the member (with authorization on; "" else):
	// only it may heartbeat, fetch and acknowledge as the member.
	principal string
	topics    []string // subscribed, sorted
	assigned  []offsets.TopicPartition
	lastSeen  time.Time
}

// group is one share group. mu guards everything but id; lock order:
// group.mu, then partition.mu, then Coordinator.mu.
type group struct {
	id string
	mu struct {
		sync.Mutex
		epoch   int32
		members map[string]*member
		parts   map[offsets.TopicPartition]*partition
		// shape is the subscription and partition counts the current
		// assignment was computed for.
		shape   string
		deleted bool
		// epochWrite is the write of the epoch's group record
		// (assignLocked); nil when the epoch is the one loaded.
		epochWrite *flight
		// initing holds the write of each partition's initial state
		// under way (initParts).
		initing map[offsets.TopicPartition]*flight
	}
}

func newGroup(id string) *group {
	g := &group{id: id}
	g.mu.members = make(map[string]*member)
	g.mu.parts = make(map[offsets.TopicPartition]*partition)
	return g
}

// stateLocked is the group's state as Kafka names it. Needs mu.
func (g *group) stateLocked() string {
	if len(g.mu.members) == 0 {
		return "Empty"
	}
	return "Stable"
}

// Client is what a heartbeat tells of the member's client; Principal is
// set only with authorization on.
type Client struct{ ID, Host, Principal string }

// Heartbeat handles ShareGroupHeartbeat (one group-id namespace, share member epochs).
func (c *Coordinator) Heartbeat(cl Client, req *kmsg.ShareGroupHeartbeatRequest) *kmsg.ShareGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	resp.HeartbeatIntervalMillis = int32(c.heartbeatInterval(req.GroupID).Milliseconds())
	fail := func(e *kerr.Error, msg string) *kmsg.ShareGroupHeartbeatResponse {
		resp.ErrorCode = e.Code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return resp
	}
	switch {
	case strings.TrimSpace(req.GroupID) == "":
		return fail(kerr.InvalidRequest, "GroupId can't be empty.")
	case req.MemberID == "" || len(req.MemberID) > maxMemberIDLen:
		return fail(kerr.InvalidRequest, "MemberId must be a non-empty UUID.")
	case req.MemberEpoch < -1:
		return fail(kerr.InvalidRequest, "MemberEpoch is invalid.")
	case req.MemberEpoch == 0 && len(req.SubscribedTopicNames) == 0:
		return fail(kerr.InvalidRequest, "SubscribedTopicNames must be set in first request.")
	case len(req.SubscribedTopicNames) > maxSessionPartitions:
		return fail(kerr.InvalidRequest, "too many subscribed topics")
	}
	g, err := c.getOrCreate(req.GroupID, req.MemberEpoch == 0)
	if err != nil {
		return fail(kerr.CoordinatorNotAvailable, "")
	}
	if g == nil {
		return fail(kerr.GroupIDNotFound, "Group "+req.GroupID+" is not a share group.")
	}
	g.mu.Lock()
	resp = c.heartbeatLocked(g, cl, req, resp, fail)
	written := c.epochWriteLocked(g)
	g.mu.Unlock()
	if err := written.wait(); err != nil {
		// The epoch it would answer is not durable: nothing of it is
		// answered (the member's next heartbeat writes it again).
		out := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
		out.HeartbeatIntervalMillis, out.ErrorCode = resp.HeartbeatIntervalMillis, kerr.CoordinatorNotAvailable.Code
		return out
	}
	return resp
}

// heartbeatLocked is Heartbeat's work on the group. Needs g.mu.
func (c *Coordinator) heartbeatLocked(g *group, cl Client, req *kmsg.ShareGroupHeartbeatRequest, resp *kmsg.ShareGroupHeartbeatResponse, fail func(*kerr.Error, string) *kmsg.ShareGroupHeartbeatResponse) *kmsg.ShareGroupHeartbeatResponse {
	if g.mu.deleted {
		return fail(kerr.GroupIDNotFound, "")
	}
	now := c.cfg.Now()
	c.expireMembersLocked(g, now)
	if m := g.mu.members[req.MemberID]; m != nil && m.principal != cl.Principal {
		// Another principal's member: it is not this caller's to drive.
		return fail(kerr.UnknownMemberID, "")
	}
	if req.MemberEpoch == -1 {
		return c.leaveLocked(g, req, resp)
	}
	m := g.mu.members[req.MemberID]
	switch {
	case m == nil && req.MemberEpoch != 0:
		return fail(kerr.UnknownMemberID, "")
	case m != nil && req.MemberEpoch != 0 && req.MemberEpoch != m.epoch && req.MemberEpoch != m.prevEpoch:
		return fail(kerr.FencedMemberEpoch, "")
	case m == nil && len(g.mu.members) >= c.cfg.MaxSize:
		return fail(kerr.GroupMaxSizeReached, "")
	case m == nil:
		m = &member{id: req.MemberID, principal: cl.Principal}
		g.mu.members[m.id] = m
	}
	m.clientID, m.clientHost, m.lastSeen = cl.ID, cl.Host, now
	if req.RackID != nil {
		m.rack = req.RackID
	}
	if req.SubscribedTopicNames != nil {
		m.topics = slices.Compact(slices.Sorted(slices.Values(req.SubscribedTopicNames)))
	}
	before := m.epoch
	c.assignLocked(g)
	if m.epoch != g.mu.epoch {
		m.prevEpoch, m.epoch = m.epoch, g.mu.epoch
	}
	resp.MemberID, resp.MemberEpoch = &m.id, m.epoch
	if req.SubscribedTopicNames != nil || m.epoch != before || req.MemberEpoch == 0 {
		resp.Assignment = c.assignmentOf(m)
	}
	return resp
}

// leaveLocked removes a member (epoch -1): its sessions close and its
// acquired records are released (releases on lock expiry). Needs g.mu.
func (c *Coordinator) leaveLocked(g *group, req *kmsg.ShareGroupHeartbeatRequest, resp *kmsg.ShareGroupHeartbeatResponse) *kmsg.ShareGroupHeartbeatResponse {
	if g.mu.members[req.MemberID] == nil {
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return resp
	}
	c.removeMemberLocked(g, req.MemberID)
	c.assignLocked(g)
	resp.MemberID, resp.MemberEpoch = &req.MemberID, -1
	return resp
}

// removeMemberLocked drops a member, its sessions and its locks. Needs
// g.mu.
func (c *Coordinator) removeMemberLocked(g *group, id string) {
	delete(g.mu.members, id)
	c.mu.Lock()
	c.dropSessionLocked(sessKey{g.id, id})
	c.mu.Unlock()
	c.releaseMemberLocked(g, id)
}

// releaseMemberLocked releases every record id holds in g and persists
// the partitions that changed. Needs g.mu.
func (c *Coordinator) releaseMemberLocked(g *group, id string) {
	limit := c.deliveryLimit()
	dlq := c.dlqOn(g.id)
	var waits []func() error
	for tp, p := range g.mu.parts {
		p.mu.Lock()
		p.dlq = dlq
		if p.releaseMemberLocked(id, limit) {
			waits = append(waits, c.persistLocked(g.id, tp, p))
		}
		p.mu.Unlock()
	}
	for _, wait := range waits {
		_ = wait() // logged; the releases stay in memory, as they would after a restart
	}
}

// expireMembersLocked removes members whose session timed out (share member epochs).
// Needs g.mu.
func (c *Coordinator) expireMembersLocked(g *group, now time.Time) {
	timeout := c.sessionTimeout(g.id)
	changed := false
	for id, m := range g.mu.members {
		if now.Sub(m.lastSeen) > timeout {
			c.removeMemberLocked(g, id)
			changed = true
		}
	}
	if changed {
		c.assignLocked(g)
	}
}

func (c *Coordinator) sessionTimeout(id string) time.Duration {
	if v, ok := parseMillis(c.groupConfig(id, ConfigSessionTimeout)); ok {
		return v
	}
	return c.cfg.SessionTimeout
}

func (c *Coordinator) heartbeatInterval(id string) time.Duration {
	if v, ok := parseMillis(c.groupConfig(id, ConfigHeartbeatInterval)); ok {
		return v
	}
	return c.cfg.HeartbeatInterval
}

// assignLocked recomputes the assignment when the members, their
// subscriptions or the partition counts changed, and then bumps the group
// epoch and submits its record to the state writer (epochWriteLocked):
// concurrent joins, and the share states of fetches and acknowledgements,
// share one synced write instead of one each, in turn, under the group's
// lock. The write is waited for, and fails, outside the lock (Heartbeat,
// describeGroup). Needs g.mu.
func (c *Coordinator) assignLocked(g *group) {
	ids := make([]string, 0, len(g.mu.members))
	for id := range g.mu.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	counts := map[string]int32{}
	var shape strings.Builder
	for _, id := range ids {
		shape.WriteString(id)
		for _, t := range g.mu.members[id].topics {
			if _, ok := counts[t]; !ok {
				counts[t], _ = c.log.Partitions(t)
			}
			shape.WriteString("\x00" + t + "\x00" + string(rune(counts[t])))
		}
		shape.WriteString("\x01")
	}
	if shape.String() == g.mu.shape {
		return
	}
	g.mu.epoch++
	g.mu.shape = shape.String()
	simpleAssign(g.mu.members, ids, counts)
	g.mu.epochWrite = c.writer.submit(offsets.ShareWrite{Group: g.id, Record: true, Epoch: g.mu.epoch})
}

// epochWriteLocked is the write a request that shows the group's epoch
// (or an assignment of it) waits for, after releasing g.mu, before it
// answers: the write of the latest epoch, so that no member or describe
// sees an epoch before it is durable (share member epochs). A write that
// failed is submitted again, so that the epoch in memory becomes durable
// or every request showing it fails. Needs g.mu.
func (c *Coordinator) epochWriteLocked(g *group) *flight {
	f := g.mu.epochWrite
	if f == nil || g.mu.deleted {
		return doneFlight() // a deleted group's record is never written again
	}
	if over, err := f.finished(); over && err != nil {
		f = c.writer.submit(offsets.ShareWrite{Group: g.id, Record: true, Epoch: g.mu.epoch})
		g.mu.epochWrite = f
	}
	return f
}

// simpleAssign spreads each topic's partitions over its subscribers
// (Kafka's SimpleAssignor in spirit): with at least as many partitions as
// members each partition goes to one member, round robin; with more
// members than partitions each member gets one partition, round robin, so
// several members share a partition (share assignment).
func simpleAssign(members map[string]*member, ids []string, counts map[string]int32) {
	subs := map[string][]string{}
	for _, id := range ids {
		members[id].assigned = nil
		for _, t := range members[id].topics {
			subs[t] = append(subs[t], id)
		}
	}
	topics := make([]string, 0, len(subs))
	for t := range subs {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		n, ms := int(counts[t]), subs[t]
		if n == 0 {
			continue
		}
		if n >= len(ms) {
			for p := range n {
				m := members[ms[p%len(ms)]]
				m.assigned = append(m.assigned, offsets.TopicPartition{Topic: t, Partition: int32(p)})
			}
			continue
		}
		for i, id := range ms {
			members[id].assigned = append(members[id].assigned, offsets.TopicPartition{Topic: t, Partition: int32(i % n)})
		}
	}
}

// assignmentOf is m's assignment on the wire, by topic id.
func (c *Coordinator) assignmentOf(m *member) *kmsg.ShareGroupHeartbeatResponseAssignment {
	a := kmsg.NewShareGroupHeartbeatResponseAssignment()
	a.TopicPartitions = []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{}
	for _, tp := range m.assigned {
		id, ok := c.log.TopicID(tp.Topic)
		if !ok {
			continue
		}
		n := len(a.TopicPartitions)
		if n == 0 || a.TopicPartitions[n-1].TopicID != id {
			t := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
			t.TopicID = id
			a.TopicPartitions = append(a.TopicPartitions, t)
			n++
		}
		a.TopicPartitions[n-1].Partitions = append(a.TopicPartitions[n-1].Partitions, tp.Partition)
	}
	return &a
}

// Describe handles ShareGroupDescribe; ops fills authorized operations
// when asked.
func (c *Coordinator) Describe(req *kmsg.ShareGroupDescribeRequest) *kmsg.ShareGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	for _, id := range req.GroupIDs {
		dg := kmsg.NewShareGroupDescribeResponseGroup()
		dg.GroupID = id
		g := c.lookup(id)
		if g == nil {
			dg.ErrorCode = kerr.GroupIDNotFound.Code
			msg := "Group " + id + " not found."
			if c.ns != nil && c.ns.OtherGroup(id) {
				msg = "Group " + id + " is not a share group."
			}
			dg.ErrorMessage = &msg
			resp.Groups = append(resp.Groups, dg)
			continue
		}
		if err := c.describeGroup(g, &dg).wait(); err != nil {
			dg = kmsg.NewShareGroupDescribeResponseGroup()
			dg.GroupID, dg.ErrorCode = id, kerr.CoordinatorNotAvailable.Code
		}
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

// describeGroup fills dg and returns the write of the epoch it shows, to
// be waited for before answering (epochWriteLocked).
func (c *Coordinator) describeGroup(g *group, dg *kmsg.ShareGroupDescribeResponseGroup) *flight {
	g.mu.Lock()
	defer g.mu.Unlock()
	c.expireMembersLocked(g, c.cfg.Now())
	written := c.epochWriteLocked(g)
	dg.GroupState, dg.GroupEpoch, dg.AssignmentEpoch, dg.Assignor = g.stateLocked(), g.mu.epoch, g.mu.epoch, "simple"
	ids := make([]string, 0, len(g.mu.members))
	for id := range g.mu.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		m := g.mu.members[id]
		dm := kmsg.NewShareGroupDescribeResponseGroupMember()
		dm.MemberID, dm.RackID, dm.MemberEpoch, dm.ClientID, dm.ClientHost = m.id, m.rack, m.epoch, m.clientID, m.clientHost
		dm.SubscribedTopicNames = m.topics
		for _, tp := range m.assigned {
			tid, _ := c.log.TopicID(tp.Topic)
			ts := &dm.Assignment.TopicPartitions
			if n := len(*ts); n == 0 || (*ts)[n-1].Topic != tp.Topic {
				t := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
				t.TopicID, t.Topic = tid, tp.Topic
				*ts = append(*ts, t)
			}
			(*ts)[len(*ts)-1].Partitions = append((*ts)[len(*ts)-1].Partitions, tp.Partition)
		}
		dg.Members = append(dg.Members, dm)
	}
	return written
}
