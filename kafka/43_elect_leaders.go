package kafka

// ElectLeaders (key 43), versions 0–2.
//
//   v0  preferred elections of the named partitions (null: all).
//   v1  election type (preferred 0, unclean 1); top-level error code.
//   v2  flexible.
//
// Each partition has one replica, its leader (kafka/replicas): a named
// partition with a leader is ELECTION_NOT_NEEDED; without one (a cluster
// partition between owners) PREFERRED_LEADER_NOT_AVAILABLE or
// ELIGIBLE_LEADERS_NOT_AVAILABLE; one that does not exist
// UNKNOWN_TOPIC_OR_PARTITION. Null topics elect every partition and, as
// Kafka, leave out the ones that needed no election: every topic is
// listed, with only its partitions that had an error. An unknown election
// type is INVALID_REQUEST, top-level and per partition.
// ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED, top-level and
// per partition.

import (
	"fmt"
	"slices"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/replicas"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleElectLeaders(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.ElectLeadersRequest)
	resp := r.ResponseKind().(*kmsg.ElectLeadersResponse)
	typ := r.ElectionType
	if r.Version == 0 {
		typ = replicas.Preferred
	}
	var fixed *replicas.Outcome // the same answer for every partition
	switch {
	case !rc.allowedCluster(auth.OpAlter):
		fixed = &replicas.Outcome{Code: kerr.ClusterAuthorizationFailed.Code}
	case !replicas.ValidElection(typ):
		fixed = &replicas.Outcome{Code: kerr.InvalidRequest.Code, Message: fmt.Sprintf("Unknown election type %d", typ)}
	}
	if fixed != nil {
		resp.ErrorCode = fixed.Code
	}
	if r.Topics == nil {
		if fixed == nil {
			resp.Topics = s.electAll(typ)
		}
		return resp, nil
	}
	for _, t := range r.Topics {
		et := kmsg.NewElectLeadersResponseTopic()
		et.Topic = t.Topic
		for _, p := range t.Partitions {
			o := s.elect(typ, t.Topic, p)
			if fixed != nil {
				o = *fixed
			}
			et.Partitions = append(et.Partitions, electPartition(p, o))
		}
		resp.Topics = append(resp.Topics, et)
	}
	return resp, nil
}

// elect is one named partition's answer.
func (s *Server) elect(typ int8, topic string, partition int32) replicas.Outcome {
	if _, err := s.partitionOf(topic, partition, false); err != nil {
		if _, ok := s.partitionCount(topic); ok {
			return replicas.Outcome{Code: kerr.UnknownTopicOrPartition.Code, Message: fmt.Sprintf("No such partition as %s-%d", topic, partition)}
		}
		return replicas.Outcome{Code: kerr.UnknownTopicOrPartition.Code, Message: "No such topic as " + topic}
	}
	_, _, ok := s.leader(topic, partition)
	return replicas.Elect(typ, ok)
}

// electAll elects every partition of every topic, listing each topic with
// the partitions whose election was not ELECTION_NOT_NEEDED.
func (s *Server) electAll(typ int8) []kmsg.ElectLeadersResponseTopic {
	var out []kmsg.ElectLeadersResponseTopic
	for _, name := range s.allTopicNames() {
		n, _ := s.partitionCount(name)
		et := kmsg.NewElectLeadersResponseTopic()
		et.Topic = name
		for p := range n {
			_, _, ok := s.leader(name, p)
			if o := replicas.Elect(typ, ok); o.Code != kerr.ElectionNotNeeded.Code {
				et.Partitions = append(et.Partitions, electPartition(p, o))
			}
		}
		out = append(out, et)
	}
	return out
}

func electPartition(p int32, o replicas.Outcome) kmsg.ElectLeadersResponseTopicPartition {
	ep := kmsg.NewElectLeadersResponseTopicPartition()
	ep.Partition, ep.ErrorCode = p, o.Code
	if o.Message != "" {
		ep.ErrorMessage = kmsg.StringPtr(o.Message)
	}
	return ep
}

// allTopicNames is every topic Metadata lists, internal ones included,
// in name order.
func (s *Server) allTopicNames() []string {
	var names []string
	for _, t := range s.res.Topics() {
		if !resolver.IsInternalTopic(t.Name) {
			names = append(names, t.Name)
		}
	}
	names = append(names, resolver.InternalTopics()...)
	slices.Sort(names)
	return names
}

// partitionCount is a topic's partition count, internal topics included;
// false when it does not exist.
func (s *Server) partitionCount(name string) (int32, bool) {
	if resolver.IsInternalTopic(name) {
		return internalPartitions, true
	}
	return s.res.Partitions(name)
}
