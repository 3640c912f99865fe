package topicview

import (
	"fmt"

	"github.com/kgateway/kgateway/kafka/replicas"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Elect is one named partition's ElectLeaders answer.
func Elect(h Host, typ int8, topic string, partition int32) replicas.Outcome {
	n, ok := h.PartitionCount(topic)
	if !ok {
		return replicas.Outcome{Code: kerr.UnknownTopicOrPartition.Code, Message: "No such topic as " + topic}
	}
	if partition < 0 || partition >= n {
		return replicas.Outcome{Code: kerr.UnknownTopicOrPartition.Code, Message: fmt.Sprintf("No such partition as %s-%d", topic, partition)}
	}
	_, _, led := h.Leader(topic, partition)
	return replicas.Elect(typ, led)
}

// ElectAll elects every partition of every topic, listing each topic with
// the partitions whose election was not ELECTION_NOT_NEEDED.
func ElectAll(h Host, typ int8) []kmsg.ElectLeadersResponseTopic {
	var out []kmsg.ElectLeadersResponseTopic
	for _, name := range AllTopicNames(h) {
		n, _ := h.PartitionCount(name)
		et := kmsg.NewElectLeadersResponseTopic()
		et.Topic = name
		for p := range n {
			_, _, ok := h.Leader(name, p)
			if o := replicas.Elect(typ, ok); o.Code != kerr.ElectionNotNeeded.Code {
				et.Partitions = append(et.Partitions, ElectPartition(p, o))
			}
		}
		out = append(out, et)
	}
	return out
}

// ElectPartition is one partition's answer.
func ElectPartition(p int32, o replicas.Outcome) kmsg.ElectLeadersResponseTopicPartition {
	ep := kmsg.NewElectLeadersResponseTopicPartition()
	ep.Partition, ep.ErrorCode = p, o.Code
	if o.Message != "" {
		ep.ErrorMessage = kmsg.StringPtr(o.Message)
	}
	return ep
}

// Reassign answers AlterPartitionReassignments' partitions
// (kafka/replicas.Reassign, against the live nodes), or
// CLUSTER_AUTHORIZATION_FAILED for each when the caller may not
// (allowed false).
func Reassign(h Host, topics []kmsg.AlterPartitionAssignmentsRequestTopic, allowed, allowRF bool, live func(int32) bool) []kmsg.AlterPartitionAssignmentsResponseTopic {
	var out []kmsg.AlterPartitionAssignmentsResponseTopic
	for _, t := range topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			o := replicas.Outcome{Code: kerr.ClusterAuthorizationFailed.Code}
			if allowed {
				o = reassign(h, t.Topic, p.Partition, p.Replicas, live, allowRF)
			}
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, o.Code
			if o.Message != "" {
				rp.ErrorMessage = kmsg.StringPtr(o.Message)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		out = append(out, rt)
	}
	return out
}

func reassign(h Host, topic string, partition int32, target []int32, live func(int32) bool, allowRF bool) replicas.Outcome {
	n, ok := h.PartitionCount(topic)
	switch {
	case !ok:
		return replicas.Outcome{Code: kerr.UnknownTopicOrPartition.Code, Message: fmt.Sprintf("Unable to find a topic named %s.", topic)}
	case partition < 0 || partition >= n:
		return replicas.Outcome{Code: kerr.UnknownTopicOrPartition.Code, Message: fmt.Sprintf("Unable to find partition %s:%d.", topic, partition)}
	}
	var current []int32
	if node, _, ok := h.Leader(topic, partition); ok {
		current = []int32{node}
	}
	return replicas.Reassign(current, target, live, allowRF)
}
