package kafka

// ListGroups (key 16), versions 0–5.
//
//   v1  throttle time.
//   v3  flexible.
//   v4  states filter (KIP-518) and each group's state.
//   v5  types filter and each group's type: classic or consumer (KIP-848).
//
// Groups restored from the offset store after a restart are listed as
// Empty. Share groups are listed too, with type "share" (v5) and
// protocol type "share".

import "github.com/twmb/franz-go/pkg/kmsg"

func handleListGroups(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	r := req.(*kmsg.ListGroupsRequest)
	resp := c.ListGroups(r)
	s.coords().share.ListInto(r, resp)
	return resp, nil
}
