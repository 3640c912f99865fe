package scram

import (
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func upsert(user string, iterations int32) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
	u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	u.Name, u.Mechanism, u.Iterations = user, 1, iterations
	u.Salt, u.SaltedPassword = []byte("salt"), make([]byte, 32)
	return u
}

// TestAlterThenDescribe upserts over a real store: a valid user is
// stored and described (mechanism and iterations), a user with bad
// iterations is refused with nothing stored, and maxUsers bounds new
// users.
func TestAlterThenDescribe(t *testing.T) {
	st := auth.OpenStore(t.TempDir())
	r := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	r.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{upsert("alice", 4096), upsert("bob", 10)}
	resp, altered := Alter(st, 10, r)
	if len(altered) != 1 || altered[0] != "alice" {
		t.Fatalf("altered %v", altered)
	}
	if resp.Results[1].ErrorCode != kerr.UnacceptableCredential.Code {
		t.Fatalf("bob: code %d", resp.Results[1].ErrorCode)
	}

	d, err := Describe(st, kmsg.NewPtrDescribeUserSCRAMCredentialsRequest())
	if err != nil || len(d.Results) != 1 || d.Results[0].User != "alice" {
		t.Fatalf("describe: %v %+v", err, d.Results)
	}
	if ci := d.Results[0].CredentialInfos; len(ci) != 1 || ci[0].Mechanism != 1 || ci[0].Iterations != 4096 {
		t.Fatalf("alice's credentials: %+v", ci)
	}

	r.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{upsert("carol", 4096)}
	if resp, _ := Alter(st, 1, r); resp.Results[0].ErrorCode != kerr.PolicyViolation.Code {
		t.Fatalf("carol beyond maxUsers: code %d", resp.Results[0].ErrorCode)
	}
}

// TestNoStore answers SECURITY_DISABLED without a credential store.
func TestNoStore(t *testing.T) {
	d, _ := Describe(nil, kmsg.NewPtrDescribeUserSCRAMCredentialsRequest())
	if d.ErrorCode != kerr.SecurityDisabled.Code {
		t.Fatalf("describe: code %d", d.ErrorCode)
	}
	r := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	r.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{upsert("alice", 4096)}
	if resp, _ := Alter(nil, 10, r); resp.Results[0].ErrorCode != kerr.SecurityDisabled.Code {
		t.Fatalf("alter: code %d", resp.Results[0].ErrorCode)
	}
}
