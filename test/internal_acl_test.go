package test

import (
	"testing"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The internal topics' partitions are authorized like any topic's: without
// ACLs alice may not describe one by id, fetch it or delete it by id; with
// READ on __consumer_offsets she fetches it (empty).
func TestInternalTopicACLs(t *testing.T) {
	a := newACLServer(t)
	cl := a.client("alice")
	id, _ := a.srv.Resolver().InternalTopicID(resolver.OffsetsTopic)
	want := func(what string, got int16, err *kerr.Error) {
		t.Helper()
		if (err == nil && got != 0) || (err != nil && got != err.Code) {
			t.Fatalf("%s: %v, want %v", what, code(got), err)
		}
	}

	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.TopicID = id
	md.Topics = append(md.Topics, mt)
	want("metadata by id", seedRequest[*kmsg.MetadataResponse](t, cl, md).Topics[0].ErrorCode, kerr.TopicAuthorizationFailed)
	want("fetch", fetchCode(t, cl, id), kerr.TopicAuthorizationFailed)
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dtt := kmsg.NewDeleteTopicsRequestTopic()
	dtt.TopicID = id
	dt.Topics, dt.TimeoutMillis = append(dt.Topics, dtt), 10_000
	want("delete by id", seedRequest[*kmsg.DeleteTopicsResponse](t, cl, dt).Topics[0].ErrorCode, kerr.TopicAuthorizationFailed)

	a.grant(allowAlice().Topics(resolver.OffsetsTopic).Operations(kadm.OpRead))
	want("metadata by id, granted", seedRequest[*kmsg.MetadataResponse](t, cl, md).Topics[0].ErrorCode, nil)
	want("fetch, granted", fetchCode(t, cl, id), nil)
}
