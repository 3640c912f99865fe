package kafkadiff

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"

	"github.com/kgateway/kgateway/test/apachekafka"
)

// The authorizer pair is a second kgateway and Apache Kafka, each with
// ACL authorization on (StandardAuthorizer, allow.everyone.if.no.acl.found
// false) and a SASL_PLAINTEXT listener whose PLAIN users are users. It is
// started the first time an authorizer case runs, so that a run without
// them starts no more JVMs than before.
var users = map[string]string{"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}

// superUsers are allowed everything: admin, who sets up ACLs, and
// ANONYMOUS, the principal of the PLAINTEXT listener that Kafka's broker
// uses to reach its own controller (no case connects there).
const superUsers = "User:admin;User:ANONYMOUS"

const authorizerClass = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

var (
	authzOnce  sync.Once
	authzSides [2]*side
	authzErr   error
	authzStop  = func() {}
)

// dial connects to s: as user on its SASL listener, or ("") to its
// PLAINTEXT one.
func (s *side) dial(user string) (*Conn, error) {
	if user == "" {
		return Dial(s.addr)
	}
	return DialPlain(s.saslAddr, user, users[user])
}

// as makes the run's next requests come from user (a new connection).
func (r *run) as(user string) {
	if r.conn != nil {
		r.conn.Close()
		r.conn = nil
	}
	r.user = user
}

// authzPair starts the authorizer pair once and returns it.
func authzPair() ([2]*side, error) {
	authzOnce.Do(func() { authzSides, authzErr = startAuthz() })
	return authzSides, authzErr
}

func stopAuthz() { authzStop() }

func startAuthz() ([2]*side, error) {
	ctx, cancel := context.WithTimeout(context.Background(), startDeadline)
	defer cancel()
	var (
		wg           sync.WaitGroup
		broker       *apachekafka.Broker
		akErr, kgErr error
		proc         *exec.Cmd
		kgDir        string
		kgAddrs      map[string]string
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		broker, akErr = apachekafka.Start(ctx, apachekafka.Options{
			Heap:       []string{"-Xmx512m"},
			PlainUsers: users,
			Props: map[string]string{
				"group.initial.rebalance.delay.ms": "0",
				"authorizer.class.name":            authorizerClass,
				"allow.everyone.if.no.acl.found":   "false",
				"super.users":                      superUsers,
			},
		})
	}()
	go func() {
		defer wg.Done()
		proc, kgDir, kgAddrs, kgErr = startKgatewayArgs(ctx, users,
			"--listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
			"--sasl-enabled-mechanisms", "PLAIN",
			"--authorizer-class-name", authorizerClass,
			"--allow-everyone-if-no-acl-found=false",
			"--super-users", superUsers)
	}()
	wg.Wait()
	authzStop = func() {
		if broker != nil {
			if err := broker.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "kafkadiff: stop kafka (authorizer):", err)
			}
		}
		if proc != nil {
			proc.Process.Kill()
			proc.Wait()
		}
		if kgDir != "" {
			os.RemoveAll(kgDir)
		}
	}
	if akErr != nil {
		return [2]*side{}, fmt.Errorf("start kafka with an authorizer: %w", akErr)
	}
	if kgErr != nil {
		return [2]*side{}, fmt.Errorf("start kgateway with an authorizer: %w", kgErr)
	}
	pair := [2]*side{
		{name: "kgateway", addr: kgAddrs["PLAINTEXT"], saslAddr: kgAddrs["SASL_PLAINTEXT"], admin: "admin"},
		{name: "kafka", addr: broker.Addr, saslAddr: broker.SASLAddr, admin: "admin"},
	}
	for _, s := range pair {
		if err := s.learn(ctx); err != nil {
			return [2]*side{}, fmt.Errorf("%s with an authorizer: %w", s.name, err)
		}
	}
	return pair, nil
}

func authzCorpus() []diffCase {
	return []diffCase{
		{"authz-smoke", caseAuthzSmoke},
	}
}

func caseAuthzSmoke(r *run) {
	r.as("alice")
	r.do("metadata all topics as alice", metadataReq(false))
}
