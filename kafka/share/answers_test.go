package share

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestOffsetCommitAnswer(t *testing.T) {
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0}, {Partition: 3}}}}
	resp := OffsetCommitAnswer(r)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("answer %+v", resp.Topics)
	}
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != kerr.GroupIDNotFound.Code {
			t.Fatalf("partition %d: code %d, want GROUP_ID_NOT_FOUND", p.Partition, p.ErrorCode)
		}
	}
}

func TestNilCoordinatorAnswers(t *testing.T) {
	var c *Coordinator
	resp := kmsg.NewPtrListGroupsResponse()
	resp.Groups = []kmsg.ListGroupsResponseGroup{{Group: "b"}, {Group: "a"}}
	c.ListInto(kmsg.NewPtrListGroupsRequest(), resp)
	if len(resp.Groups) != 2 || resp.Groups[0].Group != "b" {
		t.Fatalf("a nil coordinator changed the answer: %+v", resp.Groups)
	}
	answered, rest := c.DeleteGroups([]string{"x", "y"})
	if len(answered) != 0 || len(rest) != 2 {
		t.Fatalf("nil coordinator: answered %v rest %v", answered, rest)
	}
}

func TestNameFetchLeaders(t *testing.T) {
	resp := kmsg.NewPtrShareFetchResponse()
	id := [16]byte{1}
	resp.Topics = []kmsg.ShareFetchResponseTopic{{TopicID: id, Partitions: []kmsg.ShareFetchResponseTopicPartition{
		{Partition: 0, ErrorCode: kerr.NotLeaderForPartition.Code},
		{Partition: 1},
	}}}
	leaderOf := func(tid [16]byte, p int32, code int16) (int32, int32, bool) {
		if tid != id || code != kerr.NotLeaderForPartition.Code {
			return -1, -1, false
		}
		return 2, 5, true
	}
	NameFetchLeaders(resp, leaderOf, []Endpoint{{NodeID: 1, Host: "a"}, {NodeID: 2, Host: "b", Port: 9}})
	p := resp.Topics[0].Partitions
	if p[0].CurrentLeader.LeaderID != 2 || p[0].CurrentLeader.LeaderEpoch != 5 || p[1].CurrentLeader.LeaderID == 2 {
		t.Fatalf("leaders %+v %+v", p[0].CurrentLeader, p[1].CurrentLeader)
	}
	if len(resp.NodeEndpoints) != 1 || resp.NodeEndpoints[0].NodeID != 2 || resp.NodeEndpoints[0].Host != "b" || resp.NodeEndpoints[0].Port != 9 {
		t.Fatalf("endpoints %+v: want node 2 only", resp.NodeEndpoints)
	}
}
