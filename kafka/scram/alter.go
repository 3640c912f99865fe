package scram

// AlterUserScramCredentials (key 51), version 0 (flexible).
//
// Upserts and deletes SCRAM credentials in the credential store (the SCRAM credential store). An
// upsertion carries the salted password, never the password; the store
// keeps the StoredKey and ServerKey derived from it. Each user's changes
// are checked first and applied together, or not at all:
// UNSUPPORTED_SASL_MECHANISM for an unknown mechanism,
// UNACCEPTABLE_CREDENTIAL for an empty name, iterations outside
// [4096, 16384] or a malformed salt or salted password, DUPLICATE_RESOURCE
// for a (user, mechanism) named twice, RESOURCE_NOT_FOUND for deleting a
// credential that does not exist, POLICY_VIOLATION for a new user beyond
// scram.users.max. Without a store: SECURITY_DISABLED.

import (
	"errors"
	"fmt"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// scramChange is one deletion (salted nil) or upsertion of a request.
type scramChange struct {
	user, mech string
	mechType   int8
	iterations int32
	salt       []byte
	salted     []byte
	delete     bool
}

// Store is the SCRAM credential store (*auth.Store): Update applies its
// function to the users and persists the result, or nothing if it fails.
type Store interface {
	Users() (map[string]auth.User, error)
	Update(fn func(users map[string]auth.User) error) error
}

// Alter answers AlterUserScramCredentials over store (nil: no store),
// which may hold at most maxUsers users. altered lists the users whose
// changes were applied, for the caller to log.
func Alter(store Store, maxUsers int, r *kmsg.AlterUserSCRAMCredentialsRequest) (resp *kmsg.AlterUserSCRAMCredentialsResponse, altered []string) {
	resp = r.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	var order []string
	byUser := map[string][]scramChange{}
	add := func(c scramChange) {
		if _, ok := byUser[c.user]; !ok {
			order = append(order, c.user)
		}
		c.mech = auth.ScramMechanismName(c.mechType)
		byUser[c.user] = append(byUser[c.user], c)
	}
	for _, d := range r.Deletions {
		add(scramChange{user: d.Name, mechType: d.Mechanism, delete: true})
	}
	for _, u := range r.Upsertions {
		add(scramChange{user: u.Name, mechType: u.Mechanism, iterations: u.Iterations, salt: u.Salt, salted: u.SaltedPassword})
	}
	for _, user := range order {
		res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		res.User = user
		if err := alter(store, maxUsers, user, byUser[user]); err != nil {
			res.ErrorCode = scramErrCode(err)
			if msg := err.Error(); msg != "" {
				res.ErrorMessage = &msg
			}
		} else {
			altered = append(altered, user)
		}
		resp.Results = append(resp.Results, res)
	}
	return resp, altered
}

// scramError carries the Kafka error of a refused change.
type scramError struct {
	code *kerr.Error
	msg  string
}

func (e scramError) Error() string { return e.msg }

func scramErrCode(err error) int16 {
	var se scramError
	if errors.As(err, &se) {
		return se.code.Code
	}
	return kerr.UnknownServerError.Code
}

// alter checks one user's changes, then applies them in one store
// update.
func alter(store Store, maxUsers int, user string, changes []scramChange) error {
	if store == nil {
		return scramError{kerr.SecurityDisabled, "no credential store"}
	}
	creds := make([]auth.Credential, len(changes))
	seen := map[string]bool{}
	for i, c := range changes {
		switch {
		case user == "":
			return scramError{kerr.UnacceptableCredential, "Username must not be empty"}
		case c.mech == "":
			return scramError{kerr.UnsupportedSaslMechanism, fmt.Sprintf("Unknown SCRAM mechanism %d", c.mechType)}
		case seen[c.mech]:
			return scramError{kerr.DuplicateResource, "A user credential cannot be altered twice in the same request"}
		}
		seen[c.mech] = true
		if c.delete {
			continue
		}
		if err := auth.CheckIterations(int(c.iterations)); err != nil {
			return scramError{kerr.UnacceptableCredential, err.Error()}
		}
		// Kafka's ScramControlManager checks the name, the mechanism and
		// the iterations only: any salt, even empty, and a salted
		// password of any length are taken. An empty salted password
		// fails there (an HMAC cannot have an empty key) as
		// UNKNOWN_SERVER_ERROR, without a message.
		if len(c.salted) == 0 {
			return scramError{kerr.UnknownServerError, ""}
		}
		cred, err := auth.CredentialFromSalted(c.mech, c.salted, c.salt, int(c.iterations))
		if err != nil {
			return scramError{kerr.UnacceptableCredential, err.Error()}
		}
		creds[i] = cred
	}
	return store.Update(func(users map[string]auth.User) error {
		for _, c := range changes {
			if _, ok := users[user][c.mech]; c.delete && !ok {
				return scramError{kerr.ResourceNotFound, "Attempt to delete a user credential that does not exist"}
			}
		}
		if _, ok := users[user]; !ok && len(users) >= maxUsers {
			// Kafka has no bound on users (docs/DESIGN.md "Bounds").
			return scramError{kerr.PolicyViolation, fmt.Sprintf("The credential store holds scram.users.max (%d) users", maxUsers)}
		}
		for i, c := range changes {
			switch {
			case c.delete:
				delete(users[user], c.mech)
			case users[user] == nil:
				users[user] = auth.User{c.mech: creds[i]}
			default:
				users[user][c.mech] = creds[i]
			}
		}
		if len(users[user]) == 0 {
			delete(users, user)
		}
		return nil
	})
}
