package test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Per-API authorization for KIP-848 subscriptions, over the wire: with READ on the group
// and DESCRIBE on one topic only, mallory subscribing by name to a
// topic she may not describe is TOPIC_AUTHORIZATION_FAILED, as Kafka's
// KafkaApis; subscribing by the regex ".*" assigns her only the topic
// she may describe: neither the other topic nor the internal topics
// the regex also matches (their ids and partition counts would
// otherwise leak, and probing regexes would enumerate every name).
func TestConsumerSubscriptionNeedsTopicDescribe(t *testing.T) {
	a := &aclServer{t: t, dir: t.TempDir()}
	for _, u := range []string{"admin", "alice", "mallory"} {
		addUser(t, a.dir, u, u+"-pw")
	}
	a.start()
	const group = "g-re"
	a.createTopics("re-pub", "re-secret")
	a.grant(kadm.NewACLs().Allow("User:mallory").Groups(group).Operations(kadm.OpRead))
	a.grant(kadm.NewACLs().Allow("User:mallory").Topics("re-pub").Operations(kadm.OpDescribe))
	mal := a.client("mallory")

	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.RebalanceTimeoutMillis = group, "mallory-named-000001", 10_000
	req.SubscribedTopicNames, req.Topics = []string{"re-secret"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if c := request[*kmsg.ConsumerGroupHeartbeatResponse](t, mal, req).ErrorCode; c != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("subscribing by name to a topic without DESCRIBE: %v, want TOPIC_AUTHORIZATION_FAILED", kerr.ErrorForCode(c))
	}

	all := ".*"
	got := heartbeat848(t, mal, group, "mallory-regex-000001", nil, &all)
	pub := aclTopicID(t, a, "re-pub")
	if len(got) != 1 || got[pub] == nil {
		names := map[[16]byte]string{pub: "re-pub", aclTopicID(t, a, "re-secret"): "re-secret"}
		for id := range got {
			if names[id] == "" {
				names[id] = "another (internal) topic"
			}
			t.Errorf("regex .* assigned %s %v", names[id], got[id])
		}
		t.Fatalf("want only re-pub, the one topic mallory may describe")
	}
}
