package kafka

// DeleteGroups (key 42), versions 0–2.
//
//   v1  throttle time applied after the response.
//   v2  flexible.
//
// Only Empty groups are deleted, with all their offsets (O2); others get
// NON_EMPTY_GROUP, unknown ones GROUP_ID_NOT_FOUND. Left out: v3 error
// messages.

import "github.com/twmb/franz-go/pkg/kmsg"

func handleDeleteGroups(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	r := req.(*kmsg.DeleteGroupsRequest)
	shared, rest := s.deleteShareGroups(r.Groups)
	if len(shared) == 0 {
		return c.DeleteGroups(r), nil
	}
	r.Groups = rest
	resp := c.DeleteGroups(r)
	resp.Groups = append(resp.Groups, shared...)
	return resp, nil
}
