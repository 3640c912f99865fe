package kafka

// AlterClientQuotas (key 49), versions 0–1 (v1 flexible).
//
// Sets and removes quotas of user, client-id and ip entities, checked as
// Kafka checks them (kafka/quota: entity types and combinations, known
// keys, values above 0, whole numbers for the byte and connection rates),
// and stores the accepted ones together, durably (the data directory's
// quotas.json, or the cluster's etcd document). One answer per entity:
// a refused one is INVALID_REQUEST with Kafka's message. validate_only
// checks and stores nothing. Needs ALTER_CONFIGS on the cluster
// (kafka/authz, per-API authorization).

import (
	"github.com/kgateway/kgateway/kafka/quota"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

func handleAlterClientQuotas(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.AlterClientQuotasRequest)
	resp := r.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	alts := make([]quota.Alteration, len(r.Entries))
	for i, en := range r.Entries {
		for _, c := range en.Entity {
			alts[i].Entity = append(alts[i].Entity, quota.Component{Type: c.Type, Name: c.Name})
		}
		for _, op := range en.Ops {
			alts[i].Ops = append(alts[i].Ops, quota.Op{Key: op.Key, Value: op.Value, Remove: op.Remove})
		}
	}
	results, err := s.quotaStore.Alter(alts, r.ValidateOnly)
	if err != nil {
		s.log.Warn("client-quotas-write-failed", zap.Error(err))
		for _, a := range alts {
			resp.Entries = append(resp.Entries, alterQuotasEntry(a.Entity, kerr.UnknownServerError.Code, ptr(err.Error())))
		}
		return resp, nil
	}
	for _, res := range results {
		var code int16
		var msg *string
		if res.Err != nil {
			code, msg = res.Err.Code, ptr(res.Err.Msg)
		}
		resp.Entries = append(resp.Entries, alterQuotasEntry(res.Entity, code, msg))
	}
	if !r.ValidateOnly {
		s.log.Info("client-quotas-altered", zap.Int("entries", len(r.Entries)), zapPrincipal(rc))
	}
	return resp, nil
}

func alterQuotasEntry(cs []quota.Component, code int16, msg *string) kmsg.AlterClientQuotasResponseEntry {
	e := kmsg.NewAlterClientQuotasResponseEntry()
	e.ErrorCode, e.ErrorMessage = code, msg
	for _, c := range cs {
		ec := kmsg.NewAlterClientQuotasResponseEntryEntity()
		ec.Type, ec.Name = c.Type, c.Name
		e.Entity = append(e.Entity, ec)
	}
	return e
}
