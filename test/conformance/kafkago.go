package main

// The kafka-go suite: segmentio/kafka-go's own tests, every package of its
// module, against kgateway set up as kafka-go's CI sets up Kafka 4.0
// (docker_compose_versions/docker-compose-400.yml and .circleci/config.yml
// in its module): node id 1; a PLAINTEXT listener on localhost:9092 and a
// SASL_PLAINTEXT one on localhost:9093 with PLAIN, SCRAM-SHA-256 and
// SCRAM-SHA-512; the users adminplain, adminscram256 and adminscram512,
// super users; an ACL authorizer with allow.everyone.if.no.acl.found;
// auto-created topics; message.max.bytes 200000000; Kafka's default
// group.initial.rebalance.delay.ms (3 s); KAFKA_VERSION set for the tests'
// version checks.
//
// kafka-go's tests dial those two ports by name, so they cannot move to
// ephemeral ones. The run therefore happens in a network namespace of its
// own (the harness re-executes itself there, with only a loopback device):
// ports 9092 and 9093 there are free whatever else the machine runs. Where
// no namespace can be made, the run uses the machine's ports 9092 and 9093
// if they are free, and fails saying so if not.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const (
	// kafkaGoModule at kafkaGoVersion is the module whose tests run (not a
	// dependency of kgateway: it comes from the module proxy, into the
	// module cache).
	kafkaGoModule  = "github.com/segmentio/kafka-go"
	kafkaGoVersion = "v0.4.51"
	// kafkaGoKafkaVersion is KAFKA_VERSION for the tests: the Kafka release
	// whose protocol kgateway serves.
	kafkaGoKafkaVersion = "4.4.0"
)

// kafkaGoUsers are the SASL users of kafka-go's CI (mechanism, password);
// adminplain logs in with PLAIN, checked against its SCRAM credential.
var kafkaGoUsers = []struct{ name, mechanism, password string }{
	{"adminplain", "SCRAM-SHA-256", "admin-secret"},
	{"adminscram256", "SCRAM-SHA-256", "admin-secret-256"},
	{"adminscram512", "SCRAM-SHA-512", "admin-secret-512"},
}

// kafkaGoFlags configure kgateway as kafka-go's CI configures Kafka.
var kafkaGoFlags = []string{
	"--node-id", "1",
	"--listeners", "PLAIN://127.0.0.1:9092,SASL://127.0.0.1:9093",
	"--listener-security-protocol-map", "PLAIN:PLAINTEXT,SASL:SASL_PLAINTEXT",
	"--advertised-listeners", "PLAIN://localhost:9092,SASL://localhost:9093",
	"--sasl-enabled-mechanisms", "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
	"--authorizer-class-name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
	"--allow-everyone-if-no-acl-found=true",
	"--super-users", "User:adminscram256;User:adminscram512;User:adminplain",
	"--auto-create-topics=true",
	"--message-max-bytes", "200000000",
	// Kafka's default, which kafka-go's CI broker keeps (the franz-go
	// run's 0 is startKgateway's): its consumer-group tests create their
	// topic while the group's first join waits, and need the join to see
	// it (TestRebalanceTooManyConsumers, TestConsumerGroupWithTopic).
	"--group-initial-rebalance-delay-ms", "3000",
}

func kafkaGoSuite() suite {
	return suite{name: "kafka-go", expected: "expected-kafka-go.txt", pkgs: []string{"./..."},
		prefix: func(pkg string) string {
			rel := strings.TrimPrefix(strings.TrimPrefix(pkg, kafkaGoModule), "/")
			if rel == "" {
				return ""
			}
			return rel + "."
		}}
}

// kafkaGoEnv is the environment of the go commands run in the module's
// copy: its own go.mod (no workspace; -mod=mod, as the release's go.mod
// lacks a few of its test dependencies' requirements), no network once
// prepared.
func kafkaGoEnv(offline bool) []string {
	env := []string{"GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"}
	if offline {
		env = append(env, "GOPROXY=off")
	}
	return env
}

// runKafkaGo prepares the run (kgateway built, the module and its
// dependencies downloaded and compiled, the users created) and runs it in
// a network namespace of its own; or, re-executed there (o.inNetns), runs
// it.
func runKafkaGo(o options, s suite, start time.Time) error {
	if o.inNetns != "" {
		return runKafkaGoHere(o, s, o.inNetns, true, start)
	}
	if _, err := readExpected(o.expected); err != nil { // early, before the slow part
		return err
	}
	tmp, err := os.MkdirTemp("", "kgateway-conformance-kafka-go-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Println("conformance: keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	if err := prepareKafkaGo(tmp); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, append(os.Args[1:], "-in-netns", tmp)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = runInNetns(cmd)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		return fmt.Errorf("the run in its network namespace failed (%v)", err)
	}
	fmt.Printf("conformance: no network namespace (%v): using this machine's ports 9092 and 9093\n", err)
	for _, a := range []string{"127.0.0.1:9092", "127.0.0.1:9093"} {
		l, lerr := net.Listen("tcp", a)
		if lerr != nil {
			return fmt.Errorf("kafka-go's tests need %s, which is taken (%v), and no network namespace could be made (%v)", a, lerr, err)
		}
		l.Close()
	}
	return runKafkaGoHere(o, s, tmp, false, start)
}

func readExpected(path string) (map[string]expectation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	exp, err := parseExpected(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return exp, nil
}

// prepareKafkaGo does in tmp what needs the network or is slow: builds
// kgateway, downloads the module and compiles its tests, writes the
// module's directory to tmp/module and creates the users in tmp/data.
func prepareKafkaGo(tmp string) error {
	bin := filepath.Join(tmp, "kgateway")
	if err := goCmd(nil, "build", "-o", bin, "./cmd/kgateway").Run(); err != nil {
		return fmt.Errorf("build kgateway: %w", err)
	}
	dl := exec.Command(goBin(), "mod", "download", "-json", kafkaGoModule+"@"+kafkaGoVersion)
	dl.Env = append(os.Environ(), "GOWORK=off")
	dl.Stderr = os.Stderr
	out, err := dl.Output()
	if err != nil {
		return fmt.Errorf("go mod download %s@%s: %w", kafkaGoModule, kafkaGoVersion, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return fmt.Errorf("go mod download %s@%s: %s %v", kafkaGoModule, kafkaGoVersion, mod.Error, err)
	}
	// A writable copy (os.CopyFS makes files 0666: the module cache's are
	// read-only, and go.mod needs completing).
	dir := filepath.Join(tmp, "kafka-go")
	if err := os.CopyFS(dir, os.DirFS(mod.Dir)); err != nil {
		return fmt.Errorf("copy %s: %w", mod.Dir, err)
	}
	// Compiles every test binary (and fetches the module's dependencies),
	// so that the run in the namespace needs no network.
	warm := goCmd(kafkaGoEnv(false), "test", "-count=1", "-run", "^$", "./...")
	warm.Dir, warm.Stdout = dir, nil
	if err := warm.Run(); err != nil {
		return fmt.Errorf("compile kafka-go's tests in %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "module"), []byte(dir), 0o644); err != nil {
		return err
	}
	for _, u := range kafkaGoUsers {
		add := exec.Command(bin, "users", "add", u.name, "--mechanism", u.mechanism, "--password-file", "-",
			"--data-dir", filepath.Join(tmp, "data"), "--log-format", "json")
		add.Stdin = strings.NewReader(u.password + "\n")
		if out, err := add.CombinedOutput(); err != nil {
			return fmt.Errorf("kgateway users add %s: %v: %s", u.name, err, out)
		}
	}
	return nil
}

// runKafkaGoHere starts kgateway from the prepared tmp and runs the tests
// against it; netns: in a namespace of our own, whose loopback is down.
func runKafkaGoHere(o options, s suite, tmp string, netns bool, start time.Time) error {
	if netns {
		if err := loopbackUp(); err != nil {
			return fmt.Errorf("bring the namespace's loopback up: %w", err)
		}
	}
	exp, err := readExpected(o.expected)
	if err != nil {
		return err
	}
	dir, err := os.ReadFile(filepath.Join(tmp, "module"))
	if err != nil {
		return err
	}
	skipPat, err := notRunPattern(exp)
	if err != nil {
		return err
	}
	kg, err := startKgateway(filepath.Join(tmp, "kgateway"), tmp, kafkaGoFlags...)
	if err != nil {
		return err
	}
	env := append(kafkaGoEnv(true), "KAFKA_VERSION="+kafkaGoKafkaVersion)
	return runAndJudge(o, s, kg, exp, string(dir), env, kafkaGoEnv(true), skipPat, start)
}
