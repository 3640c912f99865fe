package kafkatools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/test/kgbin"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestMain(m *testing.M) {
	code := m.Run()
	kgbin.Remove()
	os.Exit(code)
}

// Main classes of the tools, as Kafka 4.4's bin/*.sh scripts name them.
const (
	topicCommand      = "org.apache.kafka.tools.TopicCommand"                        // kafka-topics.sh
	groupCommand      = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand" // kafka-consumer-groups.sh
	shareGroupCommand = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"    // kafka-share-groups.sh
	configCommand     = "org.apache.kafka.tools.ConfigCommand"                       // kafka-configs.sh
	aclCommand        = "org.apache.kafka.tools.AclCommand"                          // kafka-acls.sh
	txnCommand        = "org.apache.kafka.tools.TransactionsCommand"                 // kafka-transactions.sh
	producerPerf      = "org.apache.kafka.tools.ProducerPerformance"                 // kafka-producer-perf-test.sh
	consumerPerf      = "org.apache.kafka.tools.ConsumerPerformance"                 // kafka-consumer-perf-test.sh
	shareConsumer     = "org.apache.kafka.tools.consumer.ConsoleShareConsumer"       // kafka-console-share-consumer.sh
	logDirsCommand    = "org.apache.kafka.tools.LogDirsCommand"                      // kafka-log-dirs.sh
	featureCommand    = "org.apache.kafka.tools.FeatureCommand"                      // kafka-features.sh
	reassignCommand   = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"  // kafka-reassign-partitions.sh
	electionCommand   = "org.apache.kafka.tools.LeaderElectionCommand"               // kafka-leader-election.sh
)

// addrArg in a step's arguments stands for the target's bootstrap address.
const addrArg = "{addr}"

// session runs the steps of TestTools against every target and keeps what
// each printed.
type session struct {
	t       *testing.T
	tl      *tools
	targets []target
	steps   []string
	outputs map[string][]result // step → one result per target
	dump    string              // KGW_TOOLS_DUMP: directory the raw outputs are written to
}

// step runs one tool against every target at once and records its output
// under name.
func (s *session) step(name, main string, args ...string) []result {
	s.t.Helper()
	start := time.Now()
	rs := s.tl.both(s.targets, main, s.argsFor(args))
	s.t.Logf("%-40s %5.1fs exit %v", name, time.Since(start).Seconds(), exits(rs))
	s.keep(name, rs)
	return rs
}

// argsFor replaces addrArg in args with each target's address.
func (s *session) argsFor(args []string) func(addr string) []string {
	return func(addr string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = strings.ReplaceAll(a, addrArg, addr)
		}
		return out
	}
}

// background starts one tool against every target, to run beside the
// next steps until stopped (record then keeps what it printed).
func (s *session) background(main string, args ...string) []*running {
	s.t.Helper()
	var rs []*running
	for _, tg := range s.targets {
		r, err := s.tl.start(main, s.argsFor(args)(tg.addr)...)
		if err != nil {
			s.t.Fatal(err)
		}
		s.t.Cleanup(func() { r.stop() })
		rs = append(rs, r)
	}
	return rs
}

// record keeps the output of stopped background tools as step name.
func (s *session) record(name string, rs []*running) {
	var out []result
	for _, r := range rs {
		out = append(out, r.result())
	}
	s.t.Logf("%-40s        exit %v", name, exits(out))
	s.keep(name, out)
}

func (s *session) keep(name string, rs []result) {
	if _, dup := s.outputs[name]; dup {
		s.t.Fatalf("step %q twice", name)
	}
	s.steps = append(s.steps, name)
	s.outputs[name] = rs
	if s.dump != "" {
		for i, r := range rs {
			f := filepath.Join(s.dump, strings.ReplaceAll(name, " ", "_")+"."+s.targets[i].name)
			os.WriteFile(f, []byte(fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.exit, r.stdout, r.stderr)), 0o644)
		}
	}
}

func exits(rs []result) []int {
	var e []int
	for _, r := range rs {
		e = append(e, r.exit)
	}
	return e
}

// onEach runs f against every target at once (client-side setup with
// franz-go), failing the test on the first error.
func (s *session) onEach(what string, f func(ctx context.Context, tg target) error) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs := make([]error, len(s.targets))
	var wg sync.WaitGroup
	for i, tg := range s.targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(ctx, tg)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			s.t.Fatalf("%s on %s: %v", what, s.targets[i].name, err)
		}
	}
}

// produce writes n records (key k<i>, value v<i>) round-robin over the
// partitions of topic, which must exist.
func produce(ctx context.Context, addr, topic string, n int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	var rs []*kgo.Record
	for i := 0; i < n; i++ {
		rs = append(rs, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint("k", i)), Value: []byte(fmt.Sprint("v", i))})
	}
	return cl.ProduceSync(ctx, rs...).FirstErr()
}
