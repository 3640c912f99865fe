package test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataByIDWithEmptyName asks Metadata v12 for topic id with the name
// "" beside it, as the Java Admin's describeTopics(TopicCollection.ofTopicIds)
// sends it.
func metadataByIDWithEmptyName(t *testing.T, id [16]byte) *kmsg.MetadataRequest {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	req.AllowAutoTopicCreation = false
	rt := kmsg.NewMetadataRequestTopic()
	rt.TopicID = id
	rt.Topic = kmsg.StringPtr("")
	req.Topics = append(req.Topics, rt)
	return req
}

// Metadata names a topic by id whenever the id is not zero, whatever the
// name beside it (Kafka's KafkaApis): the Java Admin sends name "" with
// the id. The answer carries the topic's name and id; an unknown id is
// UNKNOWN_TOPIC_ID with that id, never a topic of zero id (the Java
// Admin fails the whole call on one).
func TestMetadataByIDIgnoresName(t *testing.T) {
	g := newGateway(t)
	g.createTopic("by-id-named", 2)
	cl := g.client()
	id := topicID(t, cl, "by-id-named")
	resp := request[*kmsg.MetadataResponse](t, cl, metadataByIDWithEmptyName(t, id))
	if len(resp.Topics) != 1 {
		t.Fatalf("topics %+v", resp.Topics)
	}
	mt := resp.Topics[0]
	if mt.ErrorCode != 0 || mt.TopicID != id || mt.Topic == nil || *mt.Topic != "by-id-named" || len(mt.Partitions) != 2 {
		t.Fatalf("by id: error %d id %x name %v partitions %d", mt.ErrorCode, mt.TopicID, mt.Topic, len(mt.Partitions))
	}
	unknown := [16]byte{9, 9, 9}
	resp = request[*kmsg.MetadataResponse](t, cl, metadataByIDWithEmptyName(t, unknown))
	if mt := resp.Topics[0]; mt.ErrorCode != kerr.UnknownTopicID.Code || mt.TopicID != unknown {
		t.Fatalf("unknown id: error %d id %x", mt.ErrorCode, mt.TopicID)
	}
}

// With an authorizer, a topic asked for by id is authorized by the name
// the id resolves to, not by the "" beside it.
func TestMetadataByIDAuthorizesResolvedName(t *testing.T) {
	a := newACLServer(t)
	a.createTopics("by-id-acl")
	a.grant(allowAlice().Topics("by-id-acl").Operations(kadm.OpDescribe))
	id := aclTopicID(t, a, "by-id-acl")
	cl := a.client("alice")
	resp := request[*kmsg.MetadataResponse](t, cl, metadataByIDWithEmptyName(t, id))
	if mt := resp.Topics[0]; mt.ErrorCode != 0 || mt.TopicID != id || mt.Topic == nil || *mt.Topic != "by-id-acl" {
		t.Fatalf("alice by id: error %d id %x name %v", mt.ErrorCode, mt.TopicID, mt.Topic)
	}
}
