package scram

// DescribeUserScramCredentials (key 50), version 0 (flexible).
//
// Lists users' SCRAM mechanisms and iterations from the credential store
// (the SCRAM credential store), never a salt or key. No users (null or empty) lists every user; a
// user named twice gets DUPLICATE_RESOURCE, an unknown one
// RESOURCE_NOT_FOUND. Without a store: SECURITY_DISABLED.

import (
	"slices"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Describe answers DescribeUserScramCredentials from store (nil: no
// store). err is why the store could not be read (the answer is then
// UNKNOWN_SERVER_ERROR), for the caller to log.
func Describe(store Store, r *kmsg.DescribeUserSCRAMCredentialsRequest) (*kmsg.DescribeUserSCRAMCredentialsResponse, error) {
	resp := r.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if store == nil {
		resp.ErrorCode = kerr.SecurityDisabled.Code
		return resp, nil
	}
	users, err := store.Users()
	if err != nil {
		resp.ErrorCode = kerr.UnknownServerError.Code
		return resp, err
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
			res.ErrorMessage = kmsg.StringPtr("Cannot describe SCRAM credentials for the same user twice in a single request")
		case !ok:
			res.ErrorCode = kerr.ResourceNotFound.Code
			res.ErrorMessage = kmsg.StringPtr("Attempt to describe a user credential that does not exist")
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
