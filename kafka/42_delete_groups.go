package kafka

// DeleteGroups (key 42), versions 0–3.
//
//   v1  throttle time applied after the response.
//   v2  flexible.
//   v3  an error message per group: every group answered with an error
//       says why, in words (Kafka fills it where it has a cause).
//
// Only Empty groups are deleted, with all their offsets (O2); others get
// NON_EMPTY_GROUP, unknown ones GROUP_ID_NOT_FOUND.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDeleteGroups(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	r := req.(*kmsg.DeleteGroupsRequest)
	shared, rest := s.coords().share.DeleteGroups(r.Groups)
	r.Groups = rest
	resp := c.DeleteGroups(r)
	resp.Groups = append(resp.Groups, shared...)
	explainGroupErrors(resp)
	return resp, nil
}

// explainGroupErrors gives every group answered with an error and no
// message the error's own description (v3+ carries it; older versions
// do not encode the field).
func explainGroupErrors(resp *kmsg.DeleteGroupsResponse) {
	for i := range resp.Groups {
		g := &resp.Groups[i]
		if g.ErrorCode == 0 || g.ErrorMessage != nil {
			continue
		}
		if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
			msg := err.(*kerr.Error).Description
			g.ErrorMessage = &msg
		}
	}
}
