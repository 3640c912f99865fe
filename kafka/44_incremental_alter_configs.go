package kafka

// IncrementalAlterConfigs (key 44), versions 0–1.
//
//   v1  flexible.
//
// Applies SET, DELETE, APPEND and SUBTRACT to a topic's explicit configs
// (APPEND/SUBTRACT treat the value as a comma-separated list), then hands
// the result to the resolver, which validates it (INVALID_CONFIG);
// validate_only changes nothing. A config named twice in one resource is
// INVALID_REQUEST, as in Kafka.
// Left out: broker configs (INVALID_REQUEST), other resource types.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleIncrementalAlterConfigs(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.IncrementalAlterConfigsRequest)
	resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	for _, rr := range r.Resources {
		out := kmsg.NewIncrementalAlterConfigsResponseResource()
		out.ResourceType, out.ResourceName = rr.ResourceType, rr.ResourceName
		err := s.incrementalAlter(rr, r.ValidateOnly)
		out.ErrorCode, out.ErrorMessage = errCode(err), errMessage(err)
		resp.Resources = append(resp.Resources, out)
	}
	return resp, nil
}

func (s *Server) incrementalAlter(rr kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
	if rr.ResourceType != kmsg.ConfigResourceTypeTopic {
		return fmt.Errorf("%w: only topic configs can be altered", kerr.InvalidRequest)
	}
	t, ok := s.res.Topic(rr.ResourceName)
	if !ok {
		return fmt.Errorf("%w: %q", resolver.ErrUnknownTopic, rr.ResourceName)
	}
	configs := maps.Clone(t.Configs)
	if configs == nil {
		configs = make(map[string]string)
	}
	seen := make(map[string]bool, len(rr.Configs))
	for _, c := range rr.Configs {
		if seen[c.Name] {
			return fmt.Errorf("%w: config %q listed twice", kerr.InvalidRequest, c.Name)
		}
		seen[c.Name] = true
		if err := applyConfigOp(configs, c); err != nil {
			return err
		}
	}
	return s.res.AlterTopicConfigs(rr.ResourceName, configs, validateOnly)
}

// applyConfigOp applies one operation to configs.
func applyConfigOp(configs map[string]string, c kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	if c.Op != kmsg.IncrementalAlterConfigOpDelete && c.Value == nil {
		return fmt.Errorf("%w: null value for %q", kerr.InvalidRequest, c.Name)
	}
	switch c.Op {
	case kmsg.IncrementalAlterConfigOpSet:
		configs[c.Name] = *c.Value
	case kmsg.IncrementalAlterConfigOpDelete:
		delete(configs, c.Name)
	case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
		list := splitList(configs[c.Name])
		for _, v := range splitList(*c.Value) {
			has := slices.Contains(list, v)
			switch {
			case c.Op == kmsg.IncrementalAlterConfigOpAppend && !has:
				list = append(list, v)
			case c.Op == kmsg.IncrementalAlterConfigOpSubtract && has:
				list = slices.DeleteFunc(list, func(x string) bool { return x == v })
			}
		}
		configs[c.Name] = strings.Join(list, ",")
	default:
		return fmt.Errorf("%w: unknown operation %d for %q", kerr.InvalidRequest, c.Op, c.Name)
	}
	return nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
