package kafka

// InitProducerId (key 22), versions 0–5.
//
//   v1  throttle time.   v2  flexible.
//   v3  an existing producer id and epoch may be passed to bump the epoch
//       (KIP-360) instead of allocating a new id.
//   v4  PRODUCER_FENCED may be returned (transactions only).
//   v5  TRANSACTION_ABORTABLE may be returned (KIP-890); as in Kafka's
//       coordinator, initializing never leaves a transaction abortable,
//       so it never is. (v6, KIP-939 two-phase commit, is not served:
//       Apache Kafka 4.4 does not advertise it either.)
//
// Without a transactional id the resolver allocates or bumps (durably, so
// producer ids survive restarts); with one the transaction coordinator
// answers (Kafka's transaction errors, the InitProducerId bump): epoch bumps that fence the previous
// incarnation, the abort of an ongoing transaction, KIP-360 recovery.
// In cluster mode a transactional id is served by the coordinator node
// only (cluster transactions; elsewhere NOT_COORDINATOR).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleInitProducerID(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.InitProducerIDRequest)
	resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if r.TransactionalID != nil {
		c, err := s.txnCoordinator()
		if err != nil {
			resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
			return resp, nil
		}
		return c.InitProducerID(rc.ctx, r, tenantOf(rc)), nil
	}
	pid, epoch := int64(-1), int16(-1)
	if r.Version >= 3 {
		pid, epoch = r.ProducerID, r.ProducerEpoch
	}
	id, ep, err := s.res.InitProducerID(rc.ctx, pid, epoch)
	if err != nil {
		resp.ErrorCode = errCode(err)
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = id, ep
	return resp, nil
}
