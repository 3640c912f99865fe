package kafka

// InitProducerId (key 22), versions 0–4.
//
//   v1  throttle time.   v2  flexible.
//   v3  an existing producer id and epoch may be passed to bump the epoch
//       (KIP-360) instead of allocating a new id.
//   v4  PRODUCER_FENCED may be returned (transactions only).
//
// Without a transactional id the resolver allocates or bumps (durably, so
// producer ids survive restarts); with one the transaction coordinator
// answers (kafka/txn X11, X12): epoch bumps that fence the previous
// incarnation, the abort of an ongoing transaction, KIP-360 recovery.
// In cluster mode a transactional id is served by the coordinator node
// only (Y19; elsewhere NOT_COORDINATOR). Left out: v5+ (KIP-890 part 2).

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
