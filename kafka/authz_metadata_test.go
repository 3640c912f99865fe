package kafka

import (
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/resolvertest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Metadata naming a missing topic the principal may describe but not
// create: TOPIC_AUTHORIZATION_FAILED only when the topic would be created
// (the request allows it and auto.create.topics.enable is on), else
// UNKNOWN_TOPIC_OR_PARTITION, as Kafka's handleTopicMetadataRequest asks
// CREATE only then.
func TestMetadataMissingTopicWithoutCreate(t *testing.T) {
	for _, tc := range []struct {
		autoCreate, allow bool
		want              int16
	}{
		{true, true, kerr.TopicAuthorizationFailed.Code},
		{true, false, kerr.UnknownTopicOrPartition.Code},
		{false, true, kerr.UnknownTopicOrPartition.Code},
	} {
		store, err := auth.OpenACLStore(t.TempDir(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Create([]auth.ACL{acl(auth.ResourceTopic, "missing", auth.OpDescribe)}); err != nil {
			t.Fatal(err)
		}
		res := resolvertest.Open(t, resolver.Config{NumPartitions: 1, AutoCreate: tc.autoCreate})
		_, addr := saslServer(t, Config{Resolver: res, Authorizer: auth.NewAuthorizer(store, nil, false)})
		c := dialRaw(t, addr)
		if resp := c.scramLogin("alice", "alice-pw"); resp.ErrorCode != 0 {
			t.Fatalf("login: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(12)
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr("missing")
		req.Topics = append(req.Topics, mt)
		req.AllowAutoTopicCreation = tc.allow
		resp := ask(c, req).(*kmsg.MetadataResponse)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != tc.want {
			t.Fatalf("auto-create %v, allowed %v: %+v, want code %d", tc.autoCreate, tc.allow, resp.Topics, tc.want)
		}
		if _, ok := res.Topic("missing"); ok {
			t.Fatal("the topic was created")
		}
	}
}
