package kafkadiff

import "github.com/twmb/franz-go/pkg/kmsg"

// tokenRequests sends each delegation token API (KIP-48) once, at every
// version both sides serve, the create naming a renewer and another
// owner.
func tokenRequests(r *run, when string) {
	for _, v := range []int16{1, 3} {
		cr := kmsg.NewPtrCreateDelegationTokenRequest()
		cr.Renewers = []kmsg.CreateDelegationTokenRequestRenewer{{PrincipalType: "User", PrincipalName: "bob"}}
		cr.MaxLifetimeMillis = 3600_000
		r.doV("create token "+when+" v"+itoa(int(v)), v, cr)
	}
	cr := kmsg.NewPtrCreateDelegationTokenRequest()
	cr.OwnerPrincipalType, cr.OwnerPrincipalName = kmsg.StringPtr("User"), kmsg.StringPtr("bob")
	r.doV("create token for another owner "+when, 3, cr)
	rn := kmsg.NewPtrRenewDelegationTokenRequest()
	rn.HMAC, rn.RenewTimeMillis = []byte("not a token's"), 1000
	r.do("renew token "+when, rn)
	ex := kmsg.NewPtrExpireDelegationTokenRequest()
	ex.HMAC, ex.ExpiryPeriodMillis = []byte("not a token's"), -1
	r.do("expire token "+when, ex)
	for _, v := range []int16{1, 3} {
		r.doV("describe tokens "+when+" v"+itoa(int(v)), v, kmsg.NewPtrDescribeDelegationTokenRequest())
	}
}

// caseTokensPlaintext: over an unauthenticated PLAINTEXT connection every
// token API is DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, before anything else.
func caseTokensPlaintext(r *run) { tokenRequests(r, "over plaintext") }

// caseAuthzTokensDisabled: authenticated, but with no
// delegation.token.secret.key on either side, every token API is
// DELEGATION_TOKEN_AUTH_DISABLED, after the owner's authorization.
func caseAuthzTokensDisabled(r *run) {
	r.as("alice")
	tokenRequests(r, "without a secret")
}
