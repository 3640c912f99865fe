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
