package group

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConsumerGroupDescribe handles ConsumerGroupDescribe v0–1. A group that
// does not exist or is not a consumer group answers GROUP_ID_NOT_FOUND
// with Kafka's message (the admin client keeps it when its retry with
// DescribeGroups fails too, and kafka-consumer-groups prints it).
func (c *Coordinator) ConsumerGroupDescribe(req *kmsg.ConsumerGroupDescribeRequest) *kmsg.ConsumerGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	for _, id := range req.Groups {
		dg := kmsg.NewConsumerGroupDescribeResponseGroup()
		dg.Group = id
		g := c.lookup(id)
		if g == nil {
			dg.ErrorCode = errGroupNotFound
			dg.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("Group %s not found.", id))
		} else {
			g.describeConsumer(&dg)
		}
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

func (g *group) describeConsumer(dg *kmsg.ConsumerGroupDescribeResponseGroup) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.typ != typeConsumer || g.mu.state == stateDead {
		dg.ErrorCode = errGroupNotFound
		dg.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("Group %s is not a consumer group.", g.id))
		if g.mu.state == stateDead {
			dg.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("Group %s not found.", g.id))
		}
		return
	}
	cs := g.mu.cons
	dg.State, dg.Epoch, dg.AssignmentEpoch, dg.AssignorName = cs.stateName(), cs.epoch, cs.assignmentEpoch, cs.assignor
	if dg.AssignorName == "" {
		dg.AssignorName = g.c.cfg.ConsumerAssignors[0] // no target yet: the default, as Kafka
	}
	for _, m := range cs.sortedMembers() {
		dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		dm.MemberID, dm.InstanceID, dm.RackID, dm.MemberEpoch = m.id, m.instanceID, m.rackID, m.epoch
		dm.ClientID, dm.ClientHost = m.clientID, m.clientHost
		dm.SubscribedTopics = append([]string{}, m.topics...)
		re := m.regex // "" without one, not null, as Kafka sends it
		dm.SubscribedTopicRegex = &re
		dm.Assignment = cs.describeAssignment(m.assigned)
		dm.TargetAssignment = cs.describeAssignment(cs.target[m.id])
		dm.MemberType = 1 // consumer protocol (v1)
		if m.classic != nil {
			dm.MemberType = 0 // classic protocol
		}
		dg.Members = append(dg.Members, dm)
	}
}

func (cs *consumerState) describeAssignment(a assignment) kmsg.Assignment {
	var out kmsg.Assignment
	for _, t := range sortedTopicsOf(a) {
		at := kmsg.NewAssignmentTopicPartition()
		at.TopicID, at.Topic, at.Partitions = t, cs.topics[t].name, append([]int32{}, a[t]...)
		out.TopicPartitions = append(out.TopicPartitions, at)
	}
	return out
}
