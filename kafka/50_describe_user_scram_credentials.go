package kafka

// DescribeUserScramCredentials (key 50), version 0 (flexible).
//
// Lists users' SCRAM mechanisms and iterations from the credential store
// (the SCRAM credential store), never a salt or key. No users (null or empty) lists every user; a
// user named twice gets DUPLICATE_RESOURCE, an unknown one
// RESOURCE_NOT_FOUND. Without a store: SECURITY_DISABLED. Left out:
// authorization (DESCRIBE on the cluster).

import (
	"slices"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDescribeUserScramCredentials(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	store := s.cfg.SASL.Credentials
	if store == nil {
		resp.ErrorCode = kerr.SecurityDisabled.Code
		return resp, nil
	}
	users, err := store.Users()
	if err != nil {
		s.log.Warn("credential-store-read-failed")
		resp.ErrorCode = kerr.UnknownServerError.Code
		return resp, nil
	}
	var names []string
	for _, u := range r.Users {
		names = append(names, u.Name)
	}
	if len(names) == 0 {
		for n := range users {
			names = append(names, n)
		}
		slices.Sort(names)
	}
	count := map[string]int{}
	for _, n := range names {
		count[n]++
	}
	answered := map[string]bool{}
	for _, n := range names {
		if answered[n] {
			continue // answered once
		}
		answered[n] = true
		res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		res.User = n
		switch u, ok := users[n]; {
		case count[n] > 1:
			res.ErrorCode = kerr.DuplicateResource.Code
			res.ErrorMessage = ptr("Cannot describe SCRAM credentials for the same user twice in a single request")
		case !ok:
			res.ErrorCode = kerr.ResourceNotFound.Code
			res.ErrorMessage = ptr("Attempt to describe a user credential that does not exist")
		default:
			res.CredentialInfos = credentialInfos(u)
		}
		resp.Results = append(resp.Results, res)
	}
	return resp, nil
}

func credentialInfos(u auth.User) []kmsg.DescribeUserSCRAMCredentialsResponseResultCredentialInfo {
	var out []kmsg.DescribeUserSCRAMCredentialsResponseResultCredentialInfo
	for _, t := range []int8{1, 2} {
		c, ok := u[auth.ScramMechanismName(t)]
		if !ok {
			continue
		}
		ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
		ci.Mechanism, ci.Iterations = t, int32(c.Iterations)
		out = append(out, ci)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
