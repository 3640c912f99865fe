package kafka

// AlterConfigs (key 33), versions 0–2.
//
//   v1  nothing new.     v2  flexible.
//
// Replaces a topic's explicit configs with exactly those given (the
// non-incremental semantics: what is not listed returns to its default).
// The resolver validates names and values (INVALID_CONFIG); validate_only
// changes nothing.
// Left out: broker configs (INVALID_REQUEST: there are no dynamic broker
// configs), other resource types.

import (
	"fmt"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleAlterConfigs(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.AlterConfigsRequest)
	resp := r.ResponseKind().(*kmsg.AlterConfigsResponse)
	for _, rr := range r.Resources {
		out := kmsg.NewAlterConfigsResponseResource()
		out.ResourceType, out.ResourceName = rr.ResourceType, rr.ResourceName
		err := s.alterConfigs(rr, r.ValidateOnly)
		out.ErrorCode, out.ErrorMessage = errCode(err), errMessage(err)
		resp.Resources = append(resp.Resources, out)
	}
	return resp, nil
}

func (s *Server) alterConfigs(rr kmsg.AlterConfigsRequestResource, validateOnly bool) error {
	if rr.ResourceType != kmsg.ConfigResourceTypeTopic {
		return fmt.Errorf("%w: only topic configs can be altered", kerr.InvalidRequest)
	}
	configs := make(map[string]string, len(rr.Configs))
	for _, c := range rr.Configs {
		if _, dup := configs[c.Name]; dup {
			return fmt.Errorf("%w: config %q listed twice", kerr.InvalidRequest, c.Name)
		}
		if c.Value == nil {
			return fmt.Errorf("%w: null value for %q", resolver.ErrInvalidConfig, c.Name)
		}
		configs[c.Name] = *c.Value
	}
	return s.res.AlterTopicConfigs(rr.ResourceName, configs, validateOnly)
}
