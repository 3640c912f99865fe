package kafkadiff

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/test/apachekafka"
	"github.com/kgateway/kgateway/test/kgbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// EnvRun turns the differential run on (make conformance-kafka sets it):
// it starts a JVM and a kgateway, too much for every `go test ./test/...`.
const EnvRun = "KGW_KAFKADIFF"

// startDeadline bounds starting both brokers and warming their
// coordinators.
const startDeadline = 3 * time.Minute

// side is one broker under comparison.
type side struct {
	name string // "kgateway" or "kafka"
	addr string
	// saslAddr is the SASL_PLAINTEXT (PLAIN) listener of the authorizer
	// pair's sides; "" on the first pair.
	saslAddr string
	// admin is the user learn logs in as ("" : no login).
	admin  string
	nodeID int32
	max    map[int16]int16 // ApiVersions: key → max version
	min    map[int16]int16
}

var (
	kg, ak *side
	// common is, per API key, the highest version both sides serve (or
	// the one side's, where only one does).
	common = map[int16]int16{}
)

func TestMain(m *testing.M) {
	if os.Getenv(EnvRun) == "" {
		// Only the fast unit tests of the differ run.
		os.Exit(m.Run())
	}
	stop, err := startBoth()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafkadiff:", err)
		stop()
		os.Exit(1)
	}
	code := m.Run()
	stop()
	stopAuthz()
	kgbin.Remove()
	removeTelemetryPlugin()
	os.Exit(code)
}

// startBoth starts kgateway and Apache Kafka at once, each on 127.0.0.1 on
// an ephemeral port, learns their API versions and node ids and waits until
// both serve group and transaction coordinators.
func startBoth() (stop func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), startDeadline)
	defer cancel()
	var (
		wg           sync.WaitGroup
		broker       *apachekafka.Broker
		akErr, kgErr error
		proc         *exec.Cmd
		kgDir        string
		kgAddr       string
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		opts, err := withTelemetryPlugin(apachekafka.Options{
			Heap: []string{"-Xmx512m"},
			Props: map[string]string{
				// JoinGroup on an empty group answers at once, as
				// kgateway's does, instead of after 3 s: the delay
				// itself is listed in accepted.txt.
				"group.initial.rebalance.delay.ms": "0",
				// Kafka keeps streams groups' topology descriptions
				// (KIP-1331) only with a plugin, kgateway always:
				// Kafka's own in-memory one.
				"group.streams.topology.description.plugin.class": "org.apache.kafka.server.streams.InMemoryTopologyDescriptionPlugin",
			},
		})
		if err != nil {
			akErr = err
			return
		}
		broker, akErr = apachekafka.Start(ctx, opts)
	}()
	go func() {
		defer wg.Done()
		proc, kgDir, kgAddr, kgErr = startKgateway(ctx)
	}()
	wg.Wait()
	stop = stopPair("kafka", broker, proc, kgDir)
	if akErr != nil {
		return stop, fmt.Errorf("start kafka: %w", akErr)
	}
	if kgErr != nil {
		return stop, fmt.Errorf("start kgateway: %w", kgErr)
	}
	kg, ak = &side{name: "kgateway", addr: kgAddr}, &side{name: "kafka", addr: broker.Addr}
	for _, s := range []*side{kg, ak} {
		if err := s.learn(ctx); err != nil {
			return stop, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	for k, v := range kg.max {
		common[k] = v
		if w, ok := ak.max[k]; ok && w < v {
			common[k] = w
		}
	}
	for k, v := range ak.max {
		if _, ok := common[k]; !ok {
			common[k] = v
		}
	}
	return stop, nil
}

// startKgateway runs the kgateway binary on an ephemeral port over a
// temporary data dir and waits for its "ready" log line.
func startKgateway(ctx context.Context) (*exec.Cmd, string, string, error) {
	cmd, dir, addrs, err := startKgatewayArgs(ctx, nil, "--listen", "127.0.0.1:0")
	return cmd, dir, addrs["PLAINTEXT"], err
}

// startKgatewayArgs runs the kgateway binary with args over a temporary
// data dir holding users (name → password, added with `kgateway users
// add`) and waits for its "ready" log line; it returns the listeners'
// addresses by name (PLAINTEXT: the addr of a --listen gateway).
func startKgatewayArgs(ctx context.Context, users map[string]string, args ...string) (*exec.Cmd, string, map[string]string, error) {
	bin, err := kgbin.Build()
	if err != nil {
		return nil, "", nil, err
	}
	dir, err := os.MkdirTemp("", "kafkadiff-kgateway-")
	if err != nil {
		return nil, "", nil, err
	}
	for name, pw := range users {
		add := exec.CommandContext(ctx, bin, "users", "add", name, "--mechanism", "SCRAM-SHA-256", "--data-dir", dir)
		add.Stdin = strings.NewReader(pw + "\n")
		if out, err := add.CombinedOutput(); err != nil {
			return nil, dir, nil, fmt.Errorf("users add %s: %v\n%s", name, err, out)
		}
	}
	cmd := exec.Command(bin, append(args, "--data-dir", dir)...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, dir, nil, err
	}
	logf, err := os.Create(dir + ".log")
	if err != nil {
		return nil, dir, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, dir, nil, err
	}
	ready := make(chan map[string]string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			logf.Write(append(sc.Bytes(), '\n'))
			var line struct {
				Msg       string            `json:"msg"`
				Addr      string            `json:"addr"`
				Listeners map[string]string `json:"listeners"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "ready" {
				if line.Listeners == nil {
					line.Listeners = map[string]string{"PLAINTEXT": line.Addr}
				}
				ready <- line.Listeners
			}
		}
		logf.Close()
	}()
	select {
	case addrs := <-ready:
		return cmd, dir, addrs, nil
	case <-ctx.Done():
		return cmd, dir, nil, fmt.Errorf("no ready line (log %s.log): %w", dir, ctx.Err())
	}
}

// learn asks s for its API versions and node id and waits until its group
// and transaction coordinators answer (Kafka creates __consumer_offsets
// and __transaction_state on first use).
func (s *side) learn(ctx context.Context) error {
	c, err := s.dial(s.admin)
	if err != nil {
		return err
	}
	defer c.Close()
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(3)
	av.ClientSoftwareName, av.ClientSoftwareVersion = "kafkadiff", "1"
	r, err := c.Do(av)
	if err != nil {
		return err
	}
	s.max, s.min = map[int16]int16{}, map[int16]int16{}
	for _, k := range r.(*kmsg.ApiVersionsResponse).ApiKeys {
		s.max[k.ApiKey], s.min[k.ApiKey] = k.MaxVersion, k.MinVersion
	}
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	mr, err := c.Do(md)
	if err != nil {
		return err
	}
	brokers := mr.(*kmsg.MetadataResponse).Brokers
	if len(brokers) != 1 {
		return fmt.Errorf("%d brokers, want 1", len(brokers))
	}
	s.nodeID = brokers[0].NodeID
	for _, kt := range []int8{0, 1} {
		for {
			fc := kmsg.NewPtrFindCoordinatorRequest()
			fc.SetVersion(4)
			fc.CoordinatorType, fc.CoordinatorKeys = kt, []string{"kafkadiff-warmup"}
			r, err := c.Do(fc)
			if err != nil {
				return err
			}
			if r.(*kmsg.FindCoordinatorResponse).Coordinators[0].ErrorCode == 0 {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("coordinator type %d: %w", kt, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// step is one recorded request's normalised answer.
type step struct {
	name string
	flat map[string]string
}

// run is one case's run against one side: its connection and the answers
// it recorded.
type run struct {
	t    *testing.T
	side *side
	// user is who the run's connection logs in as on the side's SASL
	// listener ("": none, the PLAINTEXT listener); as sets it.
	user  string
	conn  *Conn
	steps []step
	ctx   context.Context
	// filter, when set, edits each recorded answer (drops what a step is
	// not about).
	filter func(map[string]string)
}

// do sends req at the highest version both sides serve, records the
// normalised answer under name and returns it (nil when the broker closed
// the connection or the request failed: that outcome is recorded).
func (r *run) do(name string, req kmsg.Request) kmsg.Response {
	req.SetVersion(common[req.Key()])
	return r.doV(name, -1, req)
}

// doV is do at version v (-1: the version already set).
func (r *run) doV(name string, v int16, req kmsg.Request) kmsg.Response {
	if v >= 0 {
		req.SetVersion(v)
	}
	r.byIDs(req)
	for {
		resp, err := r.send(req)
		if err != nil {
			r.record(name, map[string]string{"": "error: " + err.Error()})
			return nil
		}
		flat := Flatten(resp)
		if loading(req.Key(), flat) && r.ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond) // retried until a deadline: Kafka is loading a coordinator partition
			continue
		}
		if r.filter != nil {
			r.filter(flat)
		}
		r.record(name, flat)
		return resp
	}
}

// loading reports whether an answer says a coordinator is still loading
// (COORDINATOR_LOAD_IN_PROGRESS), or a produce's or ListOffsets' partition
// leader is not ready (NOT_LEADER_OR_FOLLOWER): Kafka loads each of
// __consumer_offsets' and __transaction_state's partitions on its own
// after they are created, its transaction verification of a produce
// meets the same, and on a loaded machine its broker may not yet lead a
// new partition Metadata already shows led, so the first request to each
// may meet it. Nothing was done; the request
// is sent again until the case's deadline, and an answer still saying so
// then is recorded.
func loading(key int16, flat map[string]string) bool {
	for p, v := range flat {
		if strings.HasSuffix(p, "ErrorCode") && (strings.HasPrefix(v, "14 ") || (key == 0 || key == 2) && strings.HasPrefix(v, "6 ")) {
			return true
		}
	}
	return false
}

// setup sends req (at the common version) without recording its answer:
// for preparing state the case is not about.
func (r *run) setup(req kmsg.Request) kmsg.Response {
	req.SetVersion(common[req.Key()])
	r.byIDs(req)
	for {
		resp, err := r.send(req)
		if err != nil {
			r.t.Errorf("%s: setup %s: %v", r.side.name, kmsg.NameForKey(req.Key()), err)
			return nil
		}
		if loading(req.Key(), Flatten(resp)) && r.ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		return resp
	}
}

func (r *run) record(name string, flat map[string]string) {
	r.steps = append(r.steps, step{name: fmt.Sprintf("%02d %s", len(r.steps)+1, name), flat: flat})
}

// send sends on the run's connection, dialing a new one after the broker
// closed the last.
func (r *run) send(req kmsg.Request) (kmsg.Response, error) {
	if r.conn == nil {
		c, err := r.side.dial(r.user)
		if err != nil {
			return nil, err
		}
		r.conn = c
	}
	resp, err := r.conn.Do(req)
	if err != nil {
		r.conn.Close()
		r.conn = nil
	}
	return resp, err
}

// raw sends a hand-made frame and records whether the broker answered or
// closed the connection.
func (r *run) raw(name string, frame []byte) {
	if !r.connected(name) {
		return
	}
	outcome := "answered"
	if err := r.conn.SendRaw(frame); err != nil {
		outcome = "write error"
	} else if _, err := r.conn.readFrame(); err != nil {
		outcome = "no answer: " + err.Error()
	}
	r.conn.Close()
	r.conn = nil
	r.record(name, map[string]string{"": outcome})
}

// await resends req (unrecorded) until ok accepts its answer or the case's
// deadline passes: for state a broker reaches asynchronously (a new
// topic's leader, a loaded coordinator).
func (r *run) await(what string, req kmsg.Request, ok func(kmsg.Response) bool) kmsg.Response {
	for {
		resp := r.setup(req)
		if resp != nil && ok(resp) {
			return resp
		}
		select {
		case <-r.ctx.Done():
			r.t.Errorf("%s: waiting for %s: %v", r.side.name, what, r.ctx.Err())
			return resp
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// caseDeadline bounds one case on one side.
const caseDeadline = 60 * time.Second

// diffCase is a named request sequence; run is called once per side and
// must send the same steps on both (their answers may steer it, e.g. a
// producer id to reuse).
type diffCase struct {
	name string
	run  func(r *run)
}

// runCase runs c against both sides of a pair at once and returns the
// differences.
func runCase(t *testing.T, c diffCase, pair [2]*side) []Difference {
	runs := [2]*run{}
	var wg sync.WaitGroup
	for i, s := range pair {
		ctx, cancel := context.WithTimeout(context.Background(), caseDeadline)
		defer cancel()
		runs[i] = &run{t: t, side: s, ctx: ctx}
		wg.Add(1)
		go func(r *run) {
			defer wg.Done()
			defer func() {
				if r.conn != nil {
					r.conn.Close()
				}
			}()
			c.run(r)
		}(runs[i])
	}
	wg.Wait()
	a, b := runs[0].steps, runs[1].steps
	if os.Getenv("KGW_KAFKADIFF_DUMP") == "steps" {
		for i, r := range runs {
			for _, st := range r.steps {
				keys := make([]string, 0, len(st.flat))
				for k := range st.flat {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					fmt.Printf("STEP %s %s %s/%s = %s\n", c.name, []string{"kg", "ak"}[i], st.name, k, st.flat[k])
				}
			}
		}
	}
	var out []Difference
	for i := 0; i < len(a) || i < len(b); i++ {
		switch {
		case i >= len(a):
			out = append(out, Difference{Case: c.name, Path: b[i].name, KG: Absent, AK: "(step)"})
		case i >= len(b):
			out = append(out, Difference{Case: c.name, Path: a[i].name, KG: "(step)", AK: Absent})
		case a[i].name != b[i].name:
			t.Fatalf("case %s step %d: kgateway ran %q, kafka %q", c.name, i, a[i].name, b[i].name)
		default:
			out = append(out, Compare(c.name, a[i].name, a[i].flat, b[i].flat)...)
		}
	}
	return out
}

// TestKafkaDiff runs the corpus against kgateway and Apache Kafka and
// fails on every difference accepted.txt does not list, and on every
// accepted.txt entry no difference matched (the list only shrinks).
func TestKafkaDiff(t *testing.T) {
	if os.Getenv(EnvRun) == "" {
		t.Skipf("set %s=1 (make conformance-kafka) to start Apache Kafka and kgateway and compare them", EnvRun)
	}
	f, err := os.Open("accepted.txt")
	if err != nil {
		t.Fatal(err)
	}
	accepted, err := ParseAccepted(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		diffs []Difference
	)
	only := os.Getenv("KGW_KAFKADIFF_RUN") // a case-name substring, for working on one
	t.Run("cases", func(t *testing.T) {
		for _, c := range corpus() {
			if only != "" && !strings.Contains(c.name, only) {
				continue
			}
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				d := runCase(t, c, [2]*side{kg, ak})
				mu.Lock()
				diffs = append(diffs, d...)
				mu.Unlock()
			})
		}
		for _, c := range authzCorpus() {
			if only != "" && !strings.Contains(c.name, only) {
				continue
			}
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				pair, err := authzPair()
				if err != nil {
					t.Fatal(err)
				}
				d := runCase(t, c, pair)
				mu.Lock()
				diffs = append(diffs, d...)
				mu.Unlock()
			})
		}
	})
	sort.Slice(diffs, func(i, j int) bool {
		if diffs[i].Case != diffs[j].Case {
			return diffs[i].Case < diffs[j].Case
		}
		return diffs[i].Path < diffs[j].Path
	})
	used := map[*Accepted]int{}
	var unexpected []Difference
	for _, d := range diffs {
		if a := Match(accepted, d); a != nil {
			used[a]++
			continue
		}
		unexpected = append(unexpected, d)
	}
	for _, d := range unexpected {
		t.Errorf("difference not in accepted.txt: %s", d)
	}
	if only == "" {
		for _, a := range accepted {
			if used[a] == 0 && !a.Sometimes {
				t.Errorf("accepted.txt line %d matches no difference any more (remove it): %s | %s", a.Line, a.Case, a.Path)
			}
		}
	}
	t.Logf("%d cases, %d differences: %d accepted by %d entries, %d not accepted",
		len(corpus())+len(authzCorpus()), len(diffs), len(diffs)-len(unexpected), len(used), len(unexpected))
	if os.Getenv("KGW_KAFKADIFF_DUMP") != "" {
		for _, d := range diffs {
			fmt.Println("DIFF", d)
		}
	}
}

// stopPair stops what a pair's start made of a Kafka broker and a
// kgateway process (either may be missing) and removes kgateway's dir.
func stopPair(label string, broker *apachekafka.Broker, proc *exec.Cmd, kgDir string) func() {
	return func() {
		if broker != nil {
			if err := broker.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "kafkadiff: stop %s: %v\n", label, err)
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
}

// connected dials the run's connection if it has none; a failed dial is
// recorded as step name's outcome and reported false.
func (r *run) connected(name string) bool {
	if r.conn != nil {
		return true
	}
	c, err := Dial(r.side.addr)
	if err != nil {
		r.record(name, map[string]string{"": "error: " + err.Error()})
		return false
	}
	r.conn = c
	return true
}
