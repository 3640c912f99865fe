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

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/replicas"
	"github.com/kgateway/kgateway/kafka/topicview"
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
			resp.Topics = topicview.ElectAll(s.view(), typ)
		}
		return resp, nil
	}
	for _, t := range r.Topics {
		et := kmsg.NewElectLeadersResponseTopic()
		et.Topic = t.Topic
		for _, p := range t.Partitions {
			o := topicview.Elect(s.view(), typ, t.Topic, p)
			if fixed != nil {
				o = *fixed
			}
			et.Partitions = append(et.Partitions, topicview.ElectPartition(p, o))
		}
		resp.Topics = append(resp.Topics, et)
	}
	return resp, nil
}
