package kafka

// CreateAcls (key 30), versions 1–3 (v2 flexible).
//
// Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED per creation).
// Each creation is checked as Kafka's controller does (Kafka's ACL model): a LITERAL or
// PREFIXED pattern, ALLOW or DENY, a TYPE:NAME principal, an operation the
// resource type supports, the cluster named kafka-cluster, and (the durable ACL store)
// fields of at most 1024 bytes, else INVALID_REQUEST. The valid ones are
// stored together, durably, before the answer (the durable ACL store); creating an ACL that
// exists is a success. Beyond the store's bound every valid creation of
// the request gets POLICY_VIOLATION. Without an authorizer:
// SECURITY_DISABLED.

import (
	"errors"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

func handleCreateAcls(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.CreateACLsRequest)
	resp := r.ResponseKind().(*kmsg.CreateACLsResponse)
	resp.Results = make([]kmsg.CreateACLsResponseResult, len(r.Creations))
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewCreateACLsResponseResult()
	}
	if code, msg := aclAPIError(rc, auth.OpAlter); code != 0 {
		for i := range resp.Results {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code, &msg
		}
		return resp, nil
	}
	var valid []auth.ACL
	var at []int
	for i, c := range r.Creations {
		a := aclOf(c)
		if err := a.Validate(); err != nil {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.InvalidRequest.Code, ptr(err.Error())
			continue
		}
		valid, at = append(valid, a), append(at, i)
	}
	if len(valid) == 0 {
		return resp, nil
	}
	if err := s.cfg.Authorizer.Store().Create(valid); err != nil {
		code := kerr.UnknownServerError.Code
		if errors.Is(err, auth.ErrTooManyACLs) {
			code = kerr.PolicyViolation.Code
		}
		s.log.Warn("acls-create-failed", zap.Error(err), zapPrincipal(rc))
		for _, i := range at {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code, ptr(err.Error())
		}
		return resp, nil
	}
	s.log.Info("acls-created", zap.Int("count", len(valid)), zapPrincipal(rc))
	return resp, nil
}

func aclOf(c kmsg.CreateACLsRequestCreation) auth.ACL {
	return auth.ACL{ResourceType: auth.ResourceType(c.ResourceType), ResourceName: c.ResourceName,
		PatternType: auth.PatternType(c.ResourcePatternType), Principal: c.Principal, Host: c.Host,
		Operation: auth.Operation(c.Operation), Permission: auth.Permission(c.PermissionType)}
}
