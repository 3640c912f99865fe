package kafka

// DeleteAcls (key 31), versions 1–3 (v2 flexible).
//
// Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED per filter).
// Every ACL some valid filter selects (Kafka's ACL model) is removed, durably, before the
// answer (the durable ACL store); each filter's result lists the ACLs it selected. A filter
// with an unknown field: INVALID_REQUEST. Without an authorizer:
// SECURITY_DISABLED.

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

func handleDeleteAcls(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DeleteACLsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteACLsResponse)
	resp.Results = make([]kmsg.DeleteACLsResponseResult, len(r.Filters))
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewDeleteACLsResponseResult()
	}
	if code, msg := aclAPIError(rc, auth.OpAlter); code != 0 {
		for i := range resp.Results {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code, &msg
		}
		return resp, nil
	}
	var filters []auth.Filter
	var at []int
	for i, rf := range r.Filters {
		f := auth.Filter{ResourceType: auth.ResourceType(rf.ResourceType), ResourceName: rf.ResourceName,
			PatternType: auth.PatternType(rf.ResourcePatternType), Principal: rf.Principal, Host: rf.Host,
			Operation: auth.Operation(rf.Operation), Permission: auth.Permission(rf.PermissionType)}
		if err := f.Validate(); err != nil {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.InvalidRequest.Code, ptr(err.Error())
			continue
		}
		filters, at = append(filters, f), append(at, i)
	}
	if len(filters) == 0 {
		return resp, nil
	}
	matched, err := s.cfg.Authorizer.Store().Delete(filters)
	if err != nil {
		s.log.Warn("acls-delete-failed", zap.Error(err), zapPrincipal(rc))
		for _, i := range at {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.UnknownServerError.Code, ptr(err.Error())
		}
		return resp, nil
	}
	n := 0
	for j, i := range at {
		for _, a := range matched[j] {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName = kmsg.ACLResourceType(a.ResourceType), a.ResourceName
			m.ResourcePatternType = kmsg.ACLResourcePatternType(a.PatternType)
			m.Principal, m.Host = a.Principal, a.Host
			m.Operation, m.PermissionType = kmsg.ACLOperation(a.Operation), kmsg.ACLPermissionType(a.Permission)
			resp.Results[i].MatchingACLs = append(resp.Results[i].MatchingACLs, m)
			n++
		}
	}
	s.log.Info("acls-deleted", zap.Int("count", n), zapPrincipal(rc))
	return resp, nil
}
