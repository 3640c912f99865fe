package authz

import (
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// An OffsetFetch partition refused for want of DESCRIBE on its topic is
// answered as Kafka answers it: TOPIC_AUTHORIZATION_FAILED, offset and
// leader epoch -1 and metadata "" (Kafka's NO_METADATA), not null, in the
// one-group (v<8) and the several-groups (v8+) forms.
func TestOffsetFetchRefusedTopicMetadata(t *testing.T) {
	acls := []auth.ACL{acl(auth.ResourceGroup, "g", auth.OpDescribe)}
	for _, v := range []int16{7, 8} {
		rc := authzConn(t, "User:alice", acls...)
		r := kmsg.NewPtrOffsetFetchRequest()
		r.SetVersion(v)
		r.Group = "g"
		r.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0}}}
		r.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t", Partitions: []int32{0}}}}}
		answer, after := authzOffsetFetch(rc, r)
		if answer != nil || after == nil {
			t.Fatalf("v%d: answered early (%v) or nothing to add", v, answer)
		}
		resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
		if v >= 8 {
			resp.Groups = []kmsg.OffsetFetchResponseGroup{{Group: "g"}} // the coordinator's answer
		}
		after(resp)
		var code int16
		var offset int64
		var md *string
		if v >= 8 {
			p := resp.Groups[0].Topics[0].Partitions[0]
			code, offset, md = p.ErrorCode, p.Offset, p.Metadata
		} else {
			p := resp.Topics[0].Partitions[0]
			code, offset, md = p.ErrorCode, p.Offset, p.Metadata
		}
		if code != kerr.TopicAuthorizationFailed.Code || offset != -1 || md == nil || *md != "" {
			t.Errorf("v%d: error %d offset %d metadata %v, want TOPIC_AUTHORIZATION_FAILED, -1, \"\"", v, code, offset, md)
		}
	}
}

// An OffsetCommit whose every topic is refused (READ on the group, none on
// the topics) is answered without the coordinator, as Kafka answers it:
// the coordinator would otherwise create the group for an empty commit.
func TestOffsetCommitAllTopicsRefused(t *testing.T) {
	rc := authzConn(t, "User:alice", acl(auth.ResourceGroup, "g", auth.OpRead), acl(auth.ResourceTopic, "t2", auth.OpRead))
	commit := func(topics ...string) *kmsg.OffsetCommitRequest {
		r := kmsg.NewPtrOffsetCommitRequest()
		r.Group, r.Generation = "g", -1
		for _, tp := range topics {
			r.Topics = append(r.Topics, kmsg.OffsetCommitRequestTopic{Topic: tp, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0}}})
		}
		return r
	}
	answer, _ := authzOffsetCommit(rc, commit("t"))
	if answer == nil {
		t.Fatal("a commit of refused topics only went to the coordinator")
	}
	if ts := answer.(*kmsg.OffsetCommitResponse).Topics; len(ts) != 1 || ts[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("answer %+v, want TOPIC_AUTHORIZATION_FAILED for t/0", ts)
	}
	r := commit("t", "t2")
	answer, after := authzOffsetCommit(rc, r)
	if answer != nil || after == nil || len(r.Topics) != 1 || r.Topics[0].Topic != "t2" {
		t.Fatalf("a commit with an allowed topic: answer %v, topics left %+v", answer, r.Topics)
	}
}
