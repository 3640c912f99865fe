package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// saslGateway starts a gateway over dir with one SASL_PLAINTEXT listener
// (SCRAM and PLAIN).
func saslGateway(t *testing.T, dir string) *gateway {
	return startTestWith(t, dir, func(c *Config) {
		c.Listeners = "SASL_PLAINTEXT://127.0.0.1:0"
		c.SASLEnabledMechanisms = "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN"
		c.FailedAuthDelayMs = 1
	})
}

// login reports whether a client with mechanism m can list topics.
func login(t *testing.T, g *gateway, m sasl.Mechanism) error {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(g.Addr().String()), kgo.SASL(m), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	_, err = cl.Request(testCtx(t), kmsg.NewPtrMetadataRequest())
	return err
}

func scram256(user, pw string) sasl.Mechanism {
	return scram.Auth{User: user, Pass: pw}.AsSha256Mechanism()
}

// The SCRAM credential store: `kgateway users` writes the credential store of a stopped data
// directory (the first admin), and of a running one, which sees the
// change at once; kadm's AlterUserScramCredentials and
// DescribeUserScramCredentials see and change the same store.
func TestUsersOfflineThenOnline(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("admin-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Offline: the first admin.
	if code, out, errOut := runCmd("users", "add", "admin", "--mechanism", "SCRAM-SHA-256", "--password-file", pwFile, "--data-dir", dir); code != 0 {
		t.Fatalf("users add: exit %d\n%s%s", code, out, errOut)
	}
	// The password is never an argument.
	if code, _, _ := runCmd("users", "add", "eve", "--password", "x", "--data-dir", dir); code != 2 {
		t.Fatalf("users add --password: exit %d, want 2", code)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "credentials.json"))
	if len(b) == 0 || strings.Contains(string(b), "admin-secret") {
		t.Fatalf("store %q: missing, or holds the password", b)
	}

	g := saslGateway(t, dir)
	if err := login(t, g, scram256("admin", "admin-secret")); err != nil {
		t.Fatalf("admin added offline: %v", err)
	}
	if err := login(t, g, scram256("admin", "admin-secret2")); err == nil {
		t.Fatal("a wrong password was accepted")
	}

	// Online, from the command line (password on stdin).
	stdin = strings.NewReader("carol-pw\n")
	t.Cleanup(func() { stdin = os.Stdin })
	if code, out, errOut := runCmd("users", "add", "carol", "--data-dir", dir); code != 0 {
		t.Fatalf("users add carol: exit %d\n%s%s", code, out, errOut)
	}
	for _, m := range []sasl.Mechanism{scram256("carol", "carol-pw"), scram.Auth{User: "carol", Pass: "carol-pw"}.AsSha512Mechanism(),
		plain.Auth{User: "carol", Pass: "carol-pw"}.AsMechanism()} {
		if err := login(t, g, m); err != nil {
			t.Fatalf("carol (%s) added while running: %v", m.Name(), err)
		}
	}

	// Online, through the Kafka API.
	cl, err := kgo.NewClient(kgo.SeedBrokers(g.Addr().String()), kgo.SASL(scram256("admin", "admin-secret")))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	described, err := adm.DescribeUserSCRAMs(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(described) != 2 || len(described["carol"].CredInfos) != 2 || described["admin"].CredInfos[0].Iterations != 4096 {
		t.Fatalf("described %+v", described)
	}
	altered, err := adm.AlterUserSCRAMs(testCtx(t), []kadm.DeleteSCRAM{{User: "carol", Mechanism: kadm.ScramSha512}},
		[]kadm.UpsertSCRAM{{User: "dave", Mechanism: kadm.ScramSha256, Iterations: 8192, Password: "dave-pw"}})
	if err != nil {
		t.Fatal(err)
	}
	if altered["dave"].Err != nil || altered["carol"].Err != nil {
		t.Fatalf("altered %+v", altered)
	}
	// What kadm checks before sending, the server checks too.
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	up := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	up.Name, up.Mechanism, up.Iterations, up.Salt, up.SaltedPassword = "bad", 1, 10, []byte("salt"), make([]byte, 32)
	del := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	del.Name, del.Mechanism = "nobody", 1
	req.Upsertions, req.Deletions = append(req.Upsertions, up), append(req.Deletions, del)
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil || len(resp.Results) != 2 || resp.Results[0].ErrorCode != kerr.ResourceNotFound.Code ||
		resp.Results[1].ErrorCode != kerr.UnacceptableCredential.Code {
		t.Fatalf("raw alter: %+v %v", resp, err)
	}
	if err := login(t, g, scram256("dave", "dave-pw")); err != nil {
		t.Fatalf("dave added through kadm: %v", err)
	}
	if err := login(t, g, scram.Auth{User: "carol", Pass: "carol-pw"}.AsSha512Mechanism()); err == nil {
		t.Fatal("carol's deleted SCRAM-SHA-512 credential still works")
	}
	// The command line sees what the server wrote, and deletes.
	code, out, _ := runCmd("users", "list", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "dave") || !strings.Contains(out, "SCRAM-SHA-256 (8192 iterations)") || strings.Contains(out, "bad") {
		t.Fatalf("users list: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCmd("users", "delete", "dave", "--data-dir", dir); code != 0 {
		t.Fatalf("users delete: %s", errOut)
	}
	if err := login(t, g, scram256("dave", "dave-pw")); err == nil {
		t.Fatal("a deleted user still logs in")
	}
	if code, _, _ := runCmd("users", "delete", "dave", "--data-dir", dir); code != 1 {
		t.Fatalf("deleting a missing user: exit %d, want 1", code)
	}
}
