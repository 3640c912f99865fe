package test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShareFetch's Records field is non-nullable from v1 (Kafka's
// ShareFetchResponse schema): a partition answered with no records carries
// empty records, never null, or Kafka's share consumer fails to parse the
// response (kafka-console-share-consumer's network thread died on it).
func TestShareFetchEmptyRecordsNotNull(t *testing.T) {
	g := newGateway(t)
	g.createTopic("idle", 1)
	m := joinRaw(t, g.addr, "idle-group", "idle", "m1")
	for _, version := range []int16{1, 2} {
		req := kmsg.NewPtrShareFetchRequest()
		req.Version = version
		req.GroupID, req.MemberID = &m.group, &m.id
		req.ShareSessionEpoch, req.MaxWaitMillis, req.MaxBytes, req.MaxRecords = 0, 10, 1<<20, 100
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = m.topic
		rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
		resp := request[*kmsg.ShareFetchResponse](t, m.cl, req)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			t.Fatalf("v%d share fetch: %v", version, err)
		}
		var parts int
		for _, tp := range resp.Topics {
			for _, p := range tp.Partitions {
				parts++
				if p.Records == nil {
					t.Errorf("v%d: partition %d answered with null records", version, p.Partition)
				}
			}
		}
		if parts == 0 {
			t.Fatalf("v%d: no partition in the response of a session's first fetch", version)
		}
		// Close the session so that the next version starts a new one.
		close := kmsg.NewPtrShareFetchRequest()
		close.Version = version
		close.GroupID, close.MemberID, close.ShareSessionEpoch = &m.group, &m.id, -1
		request[*kmsg.ShareFetchResponse](t, m.cl, close)
	}
}
