package kafka

// DescribeClientQuotas (key 48), versions 0–1 (v1 flexible).
//
// Lists the quotas of the user, client-id and ip entities the filter
// selects (kafka/quota): an exact name, the default entity (null name,
// `<default>` in kafka-configs) or any entity of a type; strict keeps only
// entities with no other type. A malformed filter is INVALID_REQUEST, an
// unknown entity type UNSUPPORTED_VERSION, both in the top-level error.
// Needs DESCRIBE_CONFIGS on the cluster (kafka/authz, per-API authorization).

import (
	"github.com/kgateway/kgateway/kafka/quota"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDescribeClientQuotas(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DescribeClientQuotasRequest)
	resp := r.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	resp.ErrorMessage = ptr("")
	var cs []quota.FilterComponent
	for _, c := range r.Components {
		cs = append(cs, quota.FilterComponent{Type: c.EntityType, Match: int8(c.MatchType), Name: c.Match})
	}
	f, qerr := quota.ParseFilter(cs, r.Strict)
	if qerr != nil {
		resp.ErrorCode, resp.ErrorMessage = qerr.Code, ptr(qerr.Msg)
		return resp, nil
	}
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	for _, en := range s.quotaStore.Quotas().Describe(f) {
		e := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, c := range en.Entity.Components() {
			ec := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			ec.Type, ec.Name = c.Type, c.Name
			e.Entity = append(e.Entity, ec)
		}
		for i, k := range en.Keys {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = k, en.Values[i]
			e.Values = append(e.Values, v)
		}
		resp.Entries = append(resp.Entries, e)
	}
	return resp, nil
}
