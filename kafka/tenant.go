package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// tenantOf is the principal whose per-principal bounds a request's growth
// counts against (docs/DESIGN.md "Bounds"): the connection's principal
// with an authorizer; "" without one, where there are no tenants (any
// client may delete any topic or group) and only the global bounds apply.
func tenantOf(rc *reqCtx) string {
	if rc.conn.s.cfg.Authorizer == nil {
		return ""
	}
	return rc.conn.Principal()
}

// admitGroup reports whether the request may name group id: an existing
// group always, a new one within its principal's groups.max.per.principal
// (kafka/tenancy). A refused request gets POLICY_VIOLATION: Kafka has no
// bound on groups.
func (s *Server) admitGroup(rc *reqCtx, id string) bool {
	return s.groupBound.Admit(tenantOf(rc), id, s.groupExists)
}

// groupExists reports whether id is a live group of any type.
func (s *Server) groupExists(id string) bool {
	if g := s.coords().groups; g != nil && g.HasGroup(id) {
		return true
	}
	return s.isShareGroup(id)
}

// commitRefused answers every partition of an OffsetCommit with code.
func commitRefused(r *kmsg.OffsetCommitRequest, code int16) *kmsg.OffsetCommitResponse {
	resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// errGroupBound is the code of a new group beyond its principal's bound.
var errGroupBound = kerr.PolicyViolation.Code
