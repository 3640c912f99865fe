package kafka

// DescribeAcls (key 29), versions 1–3 (v0, without pattern types, was
// removed in Kafka 4; v2 flexible; v3 adds no field).
//
// Needs DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED). The filter selects ACLs as Kafka's
// AclBindingFilter (Kafka's ACL model), one with an UNKNOWN element closes the connection (Kafka's
// parse); the answer groups them by resource pattern (kafka/acls). No authorizer: SECURITY_DISABLED.

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/acls"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

func handleDescribeAcls(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	return acls.DescribeRequest(aclStore(s), req.(*kmsg.DescribeACLsRequest), aclAPIError(rc, auth.OpDescribe))
}

// aclAPIError is the error of an ACL API before its content is looked at:
// SECURITY_DISABLED without an authorizer, CLUSTER_AUTHORIZATION_FAILED
// without op on the cluster.
func aclAPIError(rc *reqCtx, op auth.Operation) acls.Refusal {
	if rc.conn.s.cfg.Authorizer == nil {
		return acls.Refusal{Code: kerr.SecurityDisabled.Code, Message: "No Authorizer is configured (authorizer.class.name)"}
	}
	if !rc.allowedCluster(op) {
		return acls.Refusal{Code: kerr.ClusterAuthorizationFailed.Code, Message: kerr.ClusterAuthorizationFailed.Message}
	}
	return acls.Refusal{}
}

// aclStore is the authorizer's ACL store; nil without an authorizer
// (aclAPIError refuses then, and the store is not reached).
func aclStore(s *Server) acls.Store {
	if s.cfg.Authorizer == nil {
		return nil
	}
	return s.cfg.Authorizer.Store()
}

// logACLChange logs what CreateAcls or DeleteAcls did to the store.
func logACLChange(s *Server, rc *reqCtx, what string, o acls.Outcome) {
	switch {
	case !o.Stored:
	case o.Err != nil:
		s.log.Warn("acls-"+what+"-failed", zap.Error(o.Err), zapPrincipal(rc))
	default:
		s.log.Info("acls-"+what+"d", zap.Int("count", o.Count), zapPrincipal(rc))
	}
}
