package token

import (
	"errors"
	"strings"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Caller is who sends a token request.
type Caller struct {
	// Principal is the connection's, "User:alice" (auth.Anonymous when
	// it did not authenticate).
	Principal string
	// TokenAuthenticated: the connection authenticated with a token.
	TokenAuthenticated bool
	// Allowed is the authorizer's decision (true for all without one).
	Allowed func(op auth.Operation, rt auth.ResourceType, name string) bool
}

// mayUseTokens is Kafka's allowTokenRequests: not over a token, and not
// without authentication (PLAINTEXT, or TLS without a client
// certificate: the anonymous principal).
func (c Caller) mayUseTokens() bool {
	return !c.TokenAuthenticated && c.Principal != auth.Anonymous
}

// errorTimestamp is what Kafka's broker answers for times when it refuses
// a request itself; its controller's refusals leave them 0.
const errorTimestamp = -1

// Serve answers one of the four token requests (nil for another) from
// the connection of principal, authenticated with a token or not, with
// the authorizer's decisions allowed (true for all without one).
func (m *Manager) Serve(principal string, tokenAuthenticated bool, allowed func(auth.Operation, auth.ResourceType, string) bool, req kmsg.Request) kmsg.Response {
	return m.serve(Caller{Principal: principal, TokenAuthenticated: tokenAuthenticated, Allowed: allowed}, req)
}

func (m *Manager) serve(c Caller, req kmsg.Request) kmsg.Response {
	switch r := req.(type) {
	case *kmsg.CreateDelegationTokenRequest:
		return m.create(c, r)
	case *kmsg.RenewDelegationTokenRequest:
		resp := r.ResponseKind().(*kmsg.RenewDelegationTokenResponse)
		resp.ErrorCode, resp.ExpiryTimestamp = m.renew(c, r.HMAC, r.RenewTimeMillis)
		return resp
	case *kmsg.ExpireDelegationTokenRequest:
		resp := r.ResponseKind().(*kmsg.ExpireDelegationTokenResponse)
		resp.ErrorCode, resp.ExpiryTimestamp = m.expire(c, r.HMAC, r.ExpiryPeriodMillis)
		return resp
	case *kmsg.DescribeDelegationTokenRequest:
		return m.describe(c, r)
	}
	return nil
}

// splitPrincipal is a principal's type and name.
func splitPrincipal(p string) (string, string) {
	t, n, _ := strings.Cut(p, ":")
	return t, n
}

func (m *Manager) create(c Caller, r *kmsg.CreateDelegationTokenRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.CreateDelegationTokenResponse)
	owner := c.Principal
	if r.OwnerPrincipalName != nil && *r.OwnerPrincipalName != "" {
		typ := "User"
		if r.OwnerPrincipalType != nil {
			typ = *r.OwnerPrincipalType
		}
		owner = typ + ":" + *r.OwnerPrincipalName
	}
	resp.PrincipalType, resp.PrincipalName = splitPrincipal(owner)
	resp.TokenRequesterPrincipalType, resp.TokenRequesterPrincipalName = splitPrincipal(c.Principal)
	refuse := func(code int16, ts int64) kmsg.Response {
		resp.ErrorCode = code
		resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = ts, ts, ts
		resp.HMAC = []byte{}
		return resp
	}
	switch {
	case !c.mayUseTokens():
		return refuse(kerr.DelegationTokenRequestNotAllowed.Code, errorTimestamp)
	case owner != c.Principal && !c.Allowed(auth.OpCreateTokens, auth.ResourceUser, owner):
		return refuse(kerr.DelegationTokenAuthorizationFailed.Code, errorTimestamp)
	}
	renewers := make([]string, 0, len(r.Renewers))
	for _, rn := range r.Renewers {
		if rn.PrincipalType != "User" {
			return refuse(kerr.InvalidPrincipalType.Code, errorTimestamp)
		}
		renewers = append(renewers, rn.PrincipalType+":"+rn.PrincipalName)
	}
	if !m.Enabled() {
		return refuse(kerr.DelegationTokenAuthDisabled.Code, 0)
	}
	t := Info{ID: newID(), Owner: owner, Requester: c.Principal, Renewers: renewers}
	err := m.update(func(tokens map[string]Info, nowMs int64) error {
		if len(tokens) >= m.cfg.Max {
			return errBound
		}
		n := 0
		for _, x := range tokens {
			if x.Requester == c.Principal {
				n++
			}
		}
		if n >= m.cfg.MaxPerPrincipal {
			return errBound
		}
		life := m.cfg.MaxLifetime.Milliseconds()
		if r.MaxLifetimeMillis > 0 {
			life = min(life, r.MaxLifetimeMillis)
		}
		t.IssueMs, t.MaxMs = nowMs, addSat(nowMs, life)
		t.ExpiryMs = min(t.MaxMs, addSat(nowMs, m.cfg.ExpiryTime.Milliseconds()))
		tokens[t.ID] = t
		return nil
	})
	if err != nil {
		return refuse(errorCode(err), 0)
	}
	resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = t.IssueMs, t.ExpiryMs, t.MaxMs
	resp.TokenID, resp.HMAC = t.ID, HMAC(t.ID, m.cfg.Secret)
	return resp
}

// errorCode is the code of a failed store change.
func errorCode(err error) int16 {
	var ke *kerr.Error
	switch {
	case errors.Is(err, errBound):
		return kerr.PolicyViolation.Code
	case errors.As(err, &ke):
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}

// addSat is now+d without overflow, as Kafka's sum.
func addSat(now, d int64) int64 {
	if d > 0 && now > 1<<63-1-d {
		return 1<<63 - 1
	}
	return now + d
}

// checkHMAC is the common start of renew and expire: the live token
// whose HMAC is h, which c may renew; else the error code and timestamp.
func (m *Manager) checkHMAC(c Caller, h []byte) (Info, int16, int64) {
	switch {
	case !c.mayUseTokens():
		return Info{}, kerr.DelegationTokenRequestNotAllowed.Code, errorTimestamp
	case !m.Enabled():
		return Info{}, kerr.DelegationTokenAuthDisabled.Code, 0
	}
	t, ok := m.lookupHMAC(h)
	if !ok {
		return Info{}, kerr.DelegationTokenNotFound.Code, 0
	}
	return t, 0, 0
}

// errGone, errExpired and errMismatch carry the outcome of a change
// decided on the stored set.
var (
	errGone     = kerr.DelegationTokenNotFound
	errExpired  = kerr.DelegationTokenExpired
	errMismatch = kerr.DelegationTokenOwnerMismatch
)

func (m *Manager) renew(c Caller, h []byte, periodMs int64) (int16, int64) {
	t, code, ts := m.checkHMAC(c, h)
	if code != 0 {
		return code, ts
	}
	var expiry int64
	err := m.update(func(tokens map[string]Info, nowMs int64) error {
		cur, ok := tokens[t.ID]
		switch {
		case !ok && t.expired(nowMs):
			return errExpired // removed with the other expired ones
		case !ok:
			return errGone
		case !cur.mayRenew(c.Principal):
			return errMismatch
		}
		period := m.cfg.ExpiryTime.Milliseconds()
		if periodMs > 0 {
			period = min(period, periodMs)
		}
		cur.ExpiryMs = min(cur.MaxMs, addSat(nowMs, period))
		expiry, tokens[t.ID] = cur.ExpiryMs, cur
		return nil
	})
	if err != nil {
		return errorCode(err), 0
	}
	return 0, expiry
}

func (m *Manager) expire(c Caller, h []byte, periodMs int64) (int16, int64) {
	t, code, ts := m.checkHMAC(c, h)
	if code != 0 {
		return code, ts
	}
	var expiry int64
	err := m.update(func(tokens map[string]Info, nowMs int64) error {
		cur, ok := tokens[t.ID]
		switch {
		case !ok && !t.expired(nowMs):
			return errGone
		case !t.mayRenew(c.Principal):
			return errMismatch
		case periodMs < 0: // expire at once
			delete(tokens, t.ID)
			expiry = nowMs
			return nil
		case !ok:
			return errExpired
		}
		cur.ExpiryMs = min(cur.MaxMs, addSat(nowMs, periodMs))
		expiry, tokens[t.ID] = cur.ExpiryMs, cur
		return nil
	})
	if err != nil {
		return errorCode(err), 0
	}
	return 0, expiry
}

func (m *Manager) describe(c Caller, r *kmsg.DescribeDelegationTokenRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.DescribeDelegationTokenResponse)
	switch {
	case !c.mayUseTokens():
		resp.ErrorCode = kerr.DelegationTokenRequestNotAllowed.Code
		return resp
	case !m.Enabled():
		resp.ErrorCode = kerr.DelegationTokenAuthDisabled.Code
		return resp
	case r.Owners != nil && len(r.Owners) == 0:
		return resp
	}
	nowMs := m.now().UnixMilli()
	for _, t := range m.snapshot() {
		if t.expired(nowMs) || !wanted(t, r.Owners) || !c.maySee(t) {
			continue
		}
		resp.TokenDetails = append(resp.TokenDetails, detail(t, m.cfg.Secret))
	}
	return resp
}

// wanted: the request names no owners (null), or one of them owns,
// requested or renews t.
func wanted(t Info, owners []kmsg.DescribeDelegationTokenRequestOwner) bool {
	if owners == nil {
		return true
	}
	for _, o := range owners {
		if t.ownerOrRenewer(o.PrincipalType + ":" + o.PrincipalName) {
			return true
		}
	}
	return false
}

// maySee is Kafka's filterToken: one's own tokens, or DESCRIBE on the
// token or DESCRIBE_TOKENS on its owner (KIP-373).
func (c Caller) maySee(t Info) bool {
	return t.ownerOrRenewer(c.Principal) ||
		c.Allowed(auth.OpDescribe, auth.ResourceDelegationToken, t.ID) ||
		c.Allowed(auth.OpDescribeTokens, auth.ResourceUser, t.Owner)
}

func detail(t Info, secret string) kmsg.DescribeDelegationTokenResponseTokenDetail {
	d := kmsg.NewDescribeDelegationTokenResponseTokenDetail()
	d.PrincipalType, d.PrincipalName = splitPrincipal(t.Owner)
	d.TokenRequesterPrincipalType, d.TokenRequesterPrincipalName = splitPrincipal(t.Requester)
	d.IssueTimestamp, d.ExpiryTimestamp, d.MaxTimestamp = t.IssueMs, t.ExpiryMs, t.MaxMs
	d.TokenID, d.HMAC = t.ID, HMAC(t.ID, secret)
	for _, p := range t.Renewers {
		rn := kmsg.NewDescribeDelegationTokenResponseTokenDetailRenewer()
		rn.PrincipalType, rn.PrincipalName = splitPrincipal(p)
		d.Renewers = append(d.Renewers, rn)
	}
	return d
}
