package routing

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Coordinator routing, share groups in cluster mode, cluster transactions: every API only the coordinator serves gets an answer of
// its own kind from a node that does not coordinate, at every version;
// any other API (Produce, Fetch, Metadata) is left to its handler.
func TestNotCoordinatorAnswersEveryCoordinatorAPI(t *testing.T) {
	for key := range coordinatorAPIs {
		req := kmsg.RequestForKey(key)
		for v := req.MaxVersion(); v >= 0; v-- {
			req.SetVersion(v)
			resp := NotCoordinator(key, req)
			if resp == nil || resp.Key() != key {
				t.Fatalf("%s v%d: answer %T", kmsg.NameForKey(key), v, resp)
			}
		}
	}
	for _, key := range []int16{0, 1, 3, 18, 78, 79} {
		if resp := NotCoordinator(key, kmsg.RequestForKey(key)); resp != nil {
			t.Errorf("%s answered %T in place of its handler", kmsg.NameForKey(key), resp)
		}
	}
}

// InitProducerId goes to the coordinator only with a transactional id.
func TestNotCoordinatorInitProducerID(t *testing.T) {
	r := kmsg.NewPtrInitProducerIDRequest()
	if resp := NotCoordinator(22, r); resp != nil {
		t.Fatalf("idempotent InitProducerId answered %T", resp)
	}
	r.TransactionalID = kmsg.StringPtr("tx")
	resp, ok := NotCoordinator(22, r).(*kmsg.InitProducerIDResponse)
	if !ok || resp.ErrorCode != kerr.NotCoordinator.Code || resp.ProducerID != -1 {
		t.Fatalf("transactional InitProducerId answered %+v", resp)
	}
}
