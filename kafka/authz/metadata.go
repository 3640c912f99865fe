package authz

// Metadata's authorization (per-API authorization), as Kafka's KafkaApis: a topic the
// principal may not DESCRIBE is left out of an all-topics answer and
// answered TOPIC_AUTHORIZATION_FAILED when named; a named topic that does
// not exist is auto-created only with CREATE on the cluster or the topic,
// else TOPIC_AUTHORIZATION_FAILED (when auto-creation is off, CREATE is not
// asked and the answer is UNKNOWN_TOPIC_OR_PARTITION). authorized_operations
// are filled when asked.

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/topicid"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func authzMetadata(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.MetadataRequest)
	describe := TopicAllowed(rc, auth.OpDescribe)
	all := r.Topics == nil || (r.Version == 0 && len(r.Topics) == 0)
	// CREATE matters only when the topic would be created: asked for and
	// auto.create.topics.enable on. Else a missing topic is the handler's
	// UNKNOWN_TOPIC_OR_PARTITION, as in Kafka's handleTopicMetadataRequest.
	allowCreate := (r.Version < 4 || r.AllowAutoTopicCreation) && rc.AutoCreateTopics()
	var createCluster *bool // asked once, when a topic would be created
	refused := filterOut(&r.Topics, func(t *kmsg.MetadataRequestTopic) bool {
		name := ""
		byID := topicid.RequestedByID(t)
		if !byID {
			name = *t.Topic
		} else if n, ok := rc.TopicByID(t.TopicID); ok { // internal ones too
			name = n
		} else {
			return true // an unknown id is the handler's answer
		}
		if !describe(name) {
			return false
		}
		if rc.TopicExists(name) || !allowCreate || byID || rc.IsInternal(name) {
			return true
		}
		if createCluster == nil {
			v := allowedCluster(rc, auth.OpCreate)
			createCluster = &v
		}
		return *createCluster || rc.Allowed(auth.OpCreate, auth.ResourceTopic, name)
	})
	return nil, func(resp kmsg.Response) {
		mr := resp.(*kmsg.MetadataResponse)
		if all {
			filterOut(&mr.Topics, func(t *kmsg.MetadataResponseTopic) bool { return t.Topic == nil || describe(*t.Topic) })
		}
		if r.IncludeTopicAuthorizedOperations {
			for i := range mr.Topics {
				// Named topics answered with an error (unknown, invalid)
				// carry them too, as in Kafka; unknown ids, without a
				// name, and refused topics (appended below) do not.
				if t := &mr.Topics[i]; t.Topic != nil {
					t.AuthorizedOperations = rc.Operations(auth.ResourceTopic, *t.Topic)
				}
			}
		}
		if r.IncludeClusterAuthorizedOperations && r.Version >= 8 && r.Version <= 10 {
			mr.AuthorizedOperations = clusterOps(rc)
		}
		for _, t := range refused {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic, mt.TopicID = t.Topic, t.TopicID
			mt.ErrorCode = kerr.TopicAuthorizationFailed.Code
			mt.AuthorizedOperations = OperationsNotRequested
			mr.Topics = append(mr.Topics, mt)
		}
	}
}
