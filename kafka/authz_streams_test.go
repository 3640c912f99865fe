package kafka

import (
	"slices"
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/streams"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Streams internal topics are created only with CREATE on the cluster or
// the topic (KafkaApis.streamsGroupHeartbeat): with CREATE on one
// internal topic only, that one is created (compacted, a changelog), the
// other reported.
func TestStreamsInternalTopicsNeedCreate(t *testing.T) {
	rc := authzConn(t, "User:alice", acl(auth.ResourceTopic, "app-store-changelog", auth.OpCreate))
	rc.conn.s.cfg.MaxPartitions = DefaultMaxPartitions
	refused := rc.conn.s.createInternalTopics(rc, []streams.InternalTopic{
		{Name: "app-store-changelog", Partitions: 2, Configs: map[string]string{"cleanup.policy": "compact"}, Changelog: true},
		{Name: "app-rep", Partitions: 2, Configs: map[string]string{"cleanup.policy": "delete"}},
	})
	if !slices.Equal(refused, []string{"app-rep"}) {
		t.Fatalf("refused %v, want [app-rep]", refused)
	}
	if n, ok := rc.conn.s.res.Partitions("app-store-changelog"); !ok || n != 2 {
		t.Fatalf("changelog: %d partitions (exists %v)", n, ok)
	}
	if _, ok := rc.conn.s.res.Partitions("app-rep"); ok {
		t.Fatal("app-rep created without CREATE")
	}
	cfgs, err := rc.conn.s.res.TopicConfigs("app-store-changelog")
	if err != nil {
		t.Fatal(err)
	}
	policy := ""
	for _, c := range cfgs {
		if c.Name == "cleanup.policy" {
			policy = c.Value
		}
	}
	if policy != "compact" {
		t.Fatalf("changelog cleanup.policy %q", policy)
	}
}

// A topology description push (KIP-1331) needs READ on the group, as
// Kafka's KafkaApis: DESCRIBE is not enough; READ lets it through to the
// coordinator.
func TestStreamsDescriptionPushNeedsRead(t *testing.T) {
	req := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
	req.Group, req.MemberID, req.TopologyEpoch = "app", "m", 1
	for _, tc := range []struct {
		op   auth.Operation
		code int16
	}{{auth.OpDescribe, kerr.GroupAuthorizationFailed.Code}, {auth.OpRead, 0}} {
		rc := authzConn(t, "User:alice", acl(auth.ResourceGroup, "app", tc.op))
		resp, _ := rule(93)(rc, req)
		code := int16(0)
		if resp != nil {
			code = resp.(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse).ErrorCode
		}
		if code != tc.code {
			t.Errorf("with %v on the group: %v, want %v", tc.op, kerr.ErrorForCode(code), kerr.ErrorForCode(tc.code))
		}
	}
}
