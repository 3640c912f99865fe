package kafka

// UpdateFeatures (key 57), versions 0–2.
//
//   v0  per feature: a level and allow_downgrade (a downgrade is then a
//       safe downgrade).
//   v1  upgrade_type (upgrade, safe or unsafe downgrade, KIP-778);
//       validate_only.
//   v2  no per-feature results: the top-level error says it all.
//
// Changes the finalized levels ApiVersions reports (kafka/features), with
// Kafka's checks and messages, all or nothing: the first update refused
// fails the request INVALID_UPDATE_VERSION and nothing changes. Applied
// levels persist in the log dir before the answer. Supported:
// transaction.version 0–2, share.version 0–2 (1: no dead-letter
// queues), group.version and streams.version 0–1 (18_api_versions.go;
// at 0 a group protocol is off, kafka/featuregate). In cluster mode no feature may be changed (each is
// refused as not supported): levels are kept per node, and groups and
// transactions are served alike by whichever nodes coordinate and lead.
// Before v2 a success lists each feature with NONE.
// ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED and no results.

import (
	"errors"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/features"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

func handleUpdateFeatures(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.UpdateFeaturesRequest)
	resp := r.ResponseKind().(*kmsg.UpdateFeaturesResponse)
	if !rc.allowedCluster(auth.OpAlter) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	updates := make([]features.Update, len(r.FeatureUpdates))
	for i, u := range r.FeatureUpdates {
		typ := features.UpgradeType(u.UpgradeType)
		if r.Version == 0 {
			typ = features.Upgrade
			if u.AllowDowngrade {
				typ = features.SafeDowngrade
			}
		}
		updates[i] = features.Update{Name: u.Feature, Level: u.MaxVersionLevel, Type: typ}
	}
	err := s.features.Apply(s.cfg.NodeID, updates, r.ValidateOnly, s.featureFixed)
	var refused *features.Error
	switch {
	case errors.As(err, &refused):
		resp.ErrorCode, resp.ErrorMessage = kerr.InvalidUpdateVersion.Code, kmsg.StringPtr(err.Error())
		return resp, nil
	case err != nil:
		s.log.Error("update-features: persisting the levels failed", zap.Error(err))
		resp.ErrorCode, resp.ErrorMessage = kerr.KafkaStorageError.Code, kmsg.StringPtr(err.Error())
		return resp, nil
	}
	if r.Version < 2 {
		seen := map[string]bool{}
		for _, u := range updates {
			if !seen[u.Name] {
				seen[u.Name] = true
				res := kmsg.NewUpdateFeaturesResponseResult()
				res.Feature = u.Name
				resp.Results = append(resp.Results, res)
			}
		}
	}
	return resp, nil
}
