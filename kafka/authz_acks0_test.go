package kafka

import (
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// An acks=0 Produce with a topic the principal may not write closes the
// connection, as Kafka's handleProduceRequest closes it on any error of
// a response it does not send (unauthorized topics included); one whose
// every topic is allowed leaves it open.
func TestAcksZeroRefusedClosesConnection(t *testing.T) {
	store, err := auth.OpenACLStore(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Create([]auth.ACL{acl(auth.ResourceTopic, "ok", auth.OpWrite), acl(auth.ResourceTopic, "ok", auth.OpCreate)}); err != nil {
		t.Fatal(err)
	}
	res := openResolver(t)
	if _, err := res.CreateTopic("ok", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	_, addr := saslServer(t, Config{Resolver: res, Authorizer: auth.NewAuthorizer(store, nil, false)})
	produce := func(topics ...string) *rawConn {
		c := dialRaw(t, addr)
		if resp := c.scramLogin("alice", "alice-pw"); resp.ErrorCode != 0 {
			t.Fatalf("login: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(9)
		req.Acks, req.TimeoutMillis = 0, 10_000
		for _, topic := range topics {
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Records = plainBatch(1, func(int) bool { return false })
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
		}
		c.send(10, req)
		return c
	}
	// Allowed: no response, and the connection still answers.
	c := produce("ok")
	c.send(11, apiVersionsReq(3))
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 3
	if corr := c.recv(resp); corr != 11 {
		t.Fatalf("correlation id %d after an acks=0 produce, want 11", corr)
	}
	// Refused, alone or beside an allowed topic: closed.
	produce("denied").expectClosed()
	produce("ok", "denied").expectClosed()
}
