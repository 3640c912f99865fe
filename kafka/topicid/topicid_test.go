package topicid

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// lookup is a fixed catalog: name by id and back.
type lookup map[[16]byte]string

func (l lookup) NameOf(id [16]byte) (string, bool) { n, ok := l[id]; return n, ok }

func (l lookup) IDOf(name string) ([16]byte, bool) {
	for id, n := range l {
		if n == name {
			return id, true
		}
	}
	return [16]byte{}, false
}

var (
	idA     = [16]byte{1}
	idB     = [16]byte{2}
	unknown = [16]byte{9}
	cat     = lookup{idA: "a", idB: "b"}
)

// A request below the id versions passes untouched.
func TestNamesPassUntouched(t *testing.T) {
	r := kmsg.NewPtrProduceRequest()
	r.SetVersion(12)
	r.Topics = []kmsg.ProduceRequestTopic{{Topic: "a"}}
	if c := Translate(r, cat); c != nil || r.Topics[0].Topic != "a" {
		t.Fatalf("v12 translated: %v %+v", c, r.Topics)
	}
}

// Produce v13: known ids get their names for the handler and their ids
// back in the response; an unknown id leaves the request and is answered
// UNKNOWN_TOPIC_ID after the handler's topics, or with the request-level
// refusal that outranks it.
func TestProduceByID(t *testing.T) {
	for _, outrank := range []int16{0, kerr.TransactionalIDAuthorizationFailed.Code} {
		r := kmsg.NewPtrProduceRequest()
		r.SetVersion(13)
		r.Topics = []kmsg.ProduceRequestTopic{{TopicID: unknown, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 3}}}, {TopicID: idA}}
		c := Translate(r, cat)
		c.Outranked(outrank)
		if !c.Unknown || c.NoneKnown || len(r.Topics) != 1 || r.Topics[0].Topic != "a" {
			t.Fatalf("translated: %+v, unknown %v none known %v", r.Topics, c.Unknown, c.NoneKnown)
		}
		resp := r.ResponseKind().(*kmsg.ProduceResponse)
		resp.Topics = []kmsg.ProduceResponseTopic{{Topic: "a", Partitions: []kmsg.ProduceResponseTopicPartition{{}}}}
		c.Complete(resp)
		want := kerr.UnknownTopicID.Code
		if outrank != 0 {
			want = outrank
		}
		if len(resp.Topics) != 2 || resp.Topics[0].TopicID != idA || resp.Topics[1].TopicID != unknown ||
			resp.Topics[1].Partitions[0].Partition != 3 || resp.Topics[1].Partitions[0].ErrorCode != want || resp.Topics[1].Partitions[0].BaseOffset != -1 {
			t.Fatalf("outranked by %d: response %+v", outrank, resp.Topics)
		}
	}
}

// OffsetCommit v10 naming only unknown ids: nothing is left for the
// handler (NoneKnown), and the unknown ids come first in the answer, as
// in Kafka.
func TestOffsetCommitNoneKnown(t *testing.T) {
	r := kmsg.NewPtrOffsetCommitRequest()
	r.SetVersion(10)
	r.Topics = []kmsg.OffsetCommitRequestTopic{{TopicID: unknown, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0}}}}
	c := Translate(r, cat)
	if !c.NoneKnown || len(r.Topics) != 0 {
		t.Fatalf("none known %v, left %+v", c.NoneKnown, r.Topics)
	}
	r.Topics = []kmsg.OffsetCommitRequestTopic{{TopicID: idB}, {TopicID: unknown, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0}}}}
	c = Translate(r, cat)
	resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
	resp.Topics = []kmsg.OffsetCommitResponseTopic{{Topic: "b"}}
	c.Complete(resp)
	if c.NoneKnown || len(resp.Topics) != 2 || resp.Topics[0].TopicID != unknown || resp.Topics[1].TopicID != idB ||
		resp.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("response %+v", resp.Topics)
	}
}

// OffsetFetch v10: a group's unknown ids answer UNKNOWN_TOPIC_ID with
// metadata ""; a topic of an all-topics answer the lookup no longer knows
// is left out; a group answered with its own error gets nothing added.
func TestOffsetFetchByID(t *testing.T) {
	r := kmsg.NewPtrOffsetFetchRequest()
	r.SetVersion(10)
	r.Groups = []kmsg.OffsetFetchRequestGroup{
		{Group: "g", Topics: []kmsg.OffsetFetchRequestGroupTopic{{TopicID: idA, Partitions: []int32{0}}, {TopicID: unknown, Partitions: []int32{1}}}},
		{Group: "all"},
		{Group: "refused", Topics: []kmsg.OffsetFetchRequestGroupTopic{{TopicID: unknown, Partitions: []int32{0}}}},
	}
	c := Translate(r, cat)
	if r.Groups[0].Topics[0].Topic != "a" || len(r.Groups[0].Topics) != 1 || r.Groups[1].Topics != nil || r.Groups[2].Topics == nil {
		t.Fatalf("translated: %+v", r.Groups)
	}
	resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
	resp.Groups = []kmsg.OffsetFetchResponseGroup{
		{Group: "g", Topics: []kmsg.OffsetFetchResponseGroupTopic{{Topic: "a"}}},
		{Group: "all", Topics: []kmsg.OffsetFetchResponseGroupTopic{{Topic: "b"}, {Topic: "deleted"}}},
		{Group: "refused", ErrorCode: kerr.GroupAuthorizationFailed.Code},
	}
	c.Complete(resp)
	g := resp.Groups[0]
	if len(g.Topics) != 2 || g.Topics[0].TopicID != idA || g.Topics[1].TopicID != unknown {
		t.Fatalf("group g: %+v", g.Topics)
	}
	if p := g.Topics[1].Partitions[0]; p.Partition != 1 || p.ErrorCode != kerr.UnknownTopicID.Code || p.Offset != -1 || p.Metadata == nil || *p.Metadata != "" {
		t.Fatalf("unknown id's partition %+v", p)
	}
	if all := resp.Groups[1].Topics; len(all) != 1 || all[0].TopicID != idB {
		t.Fatalf("all topics: %+v", all)
	}
	if len(resp.Groups[2].Topics) != 0 {
		t.Fatalf("refused group got topics %+v", resp.Groups[2].Topics)
	}
}

// TxnOffsetCommit v6 translates as OffsetCommit does.
func TestTxnOffsetCommitByID(t *testing.T) {
	r := kmsg.NewPtrTxnOffsetCommitRequest()
	r.SetVersion(6)
	r.Topics = []kmsg.TxnOffsetCommitRequestTopic{{TopicID: idA}, {TopicID: unknown, Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 2}}}}
	c := Translate(r, cat)
	c.Outranked(kerr.GroupAuthorizationFailed.Code)
	resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	resp.Topics = []kmsg.TxnOffsetCommitResponseTopic{{Topic: "a"}}
	c.Complete(resp)
	if len(resp.Topics) != 2 || resp.Topics[0].TopicID != unknown || resp.Topics[0].Partitions[0].ErrorCode != kerr.GroupAuthorizationFailed.Code || resp.Topics[1].TopicID != idA {
		t.Fatalf("response %+v", resp.Topics)
	}
}
