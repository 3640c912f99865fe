// Command conformance runs a Kafka client library's own integration tests
// against a kgateway it builds and starts itself (a temporary data
// directory), and compares each top-level test's outcome with an expected
// list (make conformance). Two suites:
//
//   - franz-go (the default): franz-go's pkg/kgo tests, at the franz-go
//     version in go.mod, against kgateway on an ephemeral port;
//     expected.txt.
//   - kafka-go: segmentio/kafka-go's tests, every package of its module at
//     kafkaGoVersion, against kgateway configured as kafka-go's CI
//     configures Kafka (kafkago.go); expected-kafka-go.txt.
//
// The expected list names every test that does not pass, with the missing
// feature. Any other failure or skip fails the run, and so does a listed
// test that now passes: its line must go, so the list only shrinks and a
// fixed feature cannot silently break again while still listed.
//
// The franz-go run's length is bounded by KGO_TEST_RECORDS (-records: how
// many records the produce/consume tests move) and go test's -timeout.
//
//	go run ./test/conformance [-suite franz-go|kafka-go] [-records N] [-timeout D] [-run REGEXP] [-keep]
//
// Run it from the repository root (make conformance does).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"
)

// kgoPkg is the package whose tests are run; go resolves it through
// go.mod, so the tests are those of the franz-go version kgateway uses.
const kgoPkg = "github.com/twmb/franz-go/pkg/kgo"

// suite is one client library's test suite.
type suite struct {
	name     string
	expected string   // the expected list, in test/conformance
	pkgs     []string // go test's package arguments
	// prefix of a package's test names in outcomes and the expected list:
	// "" for the suite's main package, else "path/in/module.".
	prefix func(pkg string) string
}

func suiteNamed(name string) (suite, error) {
	switch name {
	case "franz-go":
		return suite{name: name, expected: "expected.txt", pkgs: []string{kgoPkg},
			prefix: func(string) string { return "" }}, nil
	case "kafka-go":
		return kafkaGoSuite(), nil
	}
	return suite{}, fmt.Errorf("-suite %q: want franz-go or kafka-go", name)
}

// kgoEnv is what franz-go's tests read to find the broker.
func kgoEnv(o options, addr string) []string {
	env := []string{
		"KGO_SEEDS=" + addr,
		"KGO_TEST_RF=1", // one broker
		fmt.Sprintf("KGO_TEST_RECORDS=%d", o.records),
	}
	if os.Getenv("KGO_LOG_LEVEL") == "" {
		env = append(env, "KGO_LOG_LEVEL=none")
	}
	return env
}

type options struct {
	suite    string
	expected string
	records  int
	timeout  time.Duration
	run      string
	keep     bool
	verbose  bool
	inNetns  string
}

func main() {
	var o options
	flag.StringVar(&o.suite, "suite", "franz-go", "whose tests: franz-go or kafka-go")
	flag.StringVar(&o.expected, "expected", "", "the expected failures and skips (default: the suite's list in test/conformance)")
	flag.IntVar(&o.records, "records", 50000, "KGO_TEST_RECORDS: records each produce/consume test moves (franz-go's default is 500000)")
	flag.DurationVar(&o.timeout, "timeout", 15*time.Minute, "go test -timeout for the kgo tests")
	flag.StringVar(&o.run, "run", "", "go test -run: only these tests (the others are not judged)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (binary, data, kgateway.log)")
	flag.BoolVar(&o.verbose, "v", false, "print the output of every test, not only of the unexpected ones")
	flag.StringVar(&o.inNetns, "in-netns", "", "internal: the prepared run directory, when re-executed in a network namespace of its own")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	start := time.Now()
	s, err := suiteNamed(o.suite)
	if err != nil {
		return err
	}
	if o.expected == "" {
		o.expected = filepath.Join("test/conformance", s.expected)
	}
	if s.name == "kafka-go" {
		return runKafkaGo(o, s, start)
	}
	f, err := os.Open(o.expected)
	if err != nil {
		return err
	}
	exp, err := parseExpected(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", o.expected, err)
	}
	tmp, err := os.MkdirTemp("", "kgateway-conformance-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Println("conformance: keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	bin := filepath.Join(tmp, "kgateway")
	if err := goCmd(nil, "build", "-o", bin, "./cmd/kgateway").Run(); err != nil {
		return fmt.Errorf("build kgateway: %w", err)
	}
	kg, err := startKgateway(bin, tmp)
	if err != nil {
		return err
	}
	skipPat, err := notRunPattern(exp)
	if err != nil {
		return err
	}
	return runAndJudge(o, s, kg, exp, "", kgoEnv(o, kg.addr), nil, skipPat, start)
}

// runAndJudge runs suite s's tests (in dir, with env; listed with
// listEnv) against kg, stops kg, and judges the outcomes against exp:
// the report, and an error naming every problem.
func runAndJudge(o options, s suite, kg *kgateway, exp map[string]expectation, dir string, env, listEnv []string, skipPat string, start time.Time) error {
	res, runErr := runTests(o, s, dir, env, skipPat)
	kgErr := kg.stop()
	if runErr != nil {
		return runErr
	}
	all, err := listTests(s, dir, listEnv)
	if err != nil {
		return err
	}
	v := compare(all, res.outcome, exp, o.run != "")
	report(o, s, res, v, time.Since(start))
	if kgErr != nil {
		v.problems = append(v.problems, fmt.Sprintf("kgateway: %v (log: %s)", kgErr, kg.logPath))
	}
	if len(v.problems) > 0 {
		if !o.keep {
			fmt.Printf("conformance: rerun with -keep to keep kgateway's log\n")
		}
		return fmt.Errorf("%d problem(s):\n  %s", len(v.problems), strings.Join(v.problems, "\n  "))
	}
	return nil
}

// goCmd is the go command, its output on ours.
func goCmd(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(goBin(), args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

func goBin() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// kgateway is the server under test.
type kgateway struct {
	cmd     *exec.Cmd
	addr    string
	logPath string
	exited  chan error
}

// startKgateway starts the binary on an ephemeral port over a fresh data
// directory and waits for its "ready" log line, which names the address.
func startKgateway(bin, dir string, extra ...string) (*kgateway, error) {
	k := &kgateway{logPath: filepath.Join(dir, "kgateway.log"), exited: make(chan error, 1)}
	logf, err := os.Create(k.logPath)
	if err != nil {
		return nil, err
	}
	args := []string{"--metrics-addr", "",
		"--data-dir", filepath.Join(dir, "data"), "--log-format", "json",
		// Classic groups rebalance at once, not after Kafka's 3 s
		// group.initial.rebalance.delay.ms: the tests make many groups.
		"--group-initial-rebalance-delay-ms", "0"}
	if !slices.Contains(extra, "--listeners") {
		args = append(args, "--listen", "127.0.0.1:0")
	}
	k.cmd = exec.Command(bin, append(args, extra...)...)
	stderr, err := k.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := k.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start kgateway: %w", err)
	}
	ready := make(chan string, 1)
	go func() {
		defer logf.Close()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			logf.Write(append(line, '\n'))
			var l struct{ Msg, Addr string }
			if json.Unmarshal(line, &l) == nil && l.Msg == "ready" && l.Addr != "" {
				select {
				case ready <- l.Addr:
				default:
				}
			}
		}
		io.Copy(logf, stderr)
		k.exited <- k.cmd.Wait()
	}()
	select {
	case k.addr = <-ready:
		fmt.Printf("conformance: kgateway ready on %s (log %s)\n", k.addr, k.logPath)
		return k, nil
	case err := <-k.exited:
		return nil, fmt.Errorf("kgateway exited before it was ready (%v); log: %s", err, k.logPath)
	case <-time.After(time.Minute):
		k.cmd.Process.Kill()
		return nil, fmt.Errorf("kgateway not ready after a minute; log: %s", k.logPath)
	}
}

// stop ends kgateway with SIGTERM (as an orchestrator would) and reports
// whether it had died during the run or failed to stop cleanly.
func (k *kgateway) stop() error {
	select {
	case err := <-k.exited:
		return fmt.Errorf("exited during the run: %v", err)
	default:
	}
	k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-k.exited:
		if err != nil {
			return fmt.Errorf("unclean stop: %v", err)
		}
		return nil
	case <-time.After(time.Minute):
		k.cmd.Process.Kill()
		<-k.exited
		return errors.New("did not stop within a minute of SIGTERM")
	}
}

// results of the go test run, per top-level test.
type results struct {
	outcome map[string]string
	elapsed map[string]float64
	output  map[string][]string // every output line, by top-level test
	pkgOut  []string            // output outside any test (a panic, a timeout)
}

// runTests runs the suite's tests with go test -json in dir ("": here)
// with env added.
func runTests(o options, s suite, dir string, env []string, skipPattern string) (results, error) {
	args := []string{"test", "-json", "-count=1", "-timeout", o.timeout.String()}
	if skipPattern != "" {
		args = append(args, "-skip", skipPattern)
	}
	if o.run != "" {
		args = append(args, "-run", o.run)
	}
	args = append(args, s.pkgs...)
	fmt.Printf("conformance: go %s (%s)\n", strings.Join(args, " "), strings.Join(env, " "))
	cmd := goCmd(env, args...)
	cmd.Dir = dir
	cmd.Stdout = nil // parsed below
	out, err := cmd.StdoutPipe()
	if err != nil {
		return results{}, err
	}
	if err := cmd.Start(); err != nil {
		return results{}, err
	}
	res := parseEvents(out, s.prefix)
	// go test exits non-zero when any test fails: compare judges that.
	var ee *exec.ExitError
	if err := cmd.Wait(); err != nil && !errors.As(err, &ee) {
		return res, fmt.Errorf("go test: %w", err)
	}
	return res, nil
}

// parseEvents reads go test -json events; prefix names each package's
// tests.
func parseEvents(r io.Reader, prefix func(pkg string) string) results {
	res := results{outcome: map[string]string{}, elapsed: map[string]float64{}, output: map[string][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e struct {
			Action, Package, Test, Output string
			Elapsed                       float64
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			res.pkgOut = append(res.pkgOut, sc.Text()+"\n") // build errors
			continue
		}
		top, _, _ := strings.Cut(e.Test, "/")
		if top != "" {
			p := prefix(e.Package)
			top, e.Test = p+top, p+e.Test
		}
		switch {
		case e.Action == "output" && top == "":
			res.pkgOut = append(res.pkgOut, e.Output)
		case e.Action == "output":
			res.output[top] = append(res.output[top], e.Output)
		case top != "" && top == e.Test && (e.Action == pass || e.Action == fail || e.Action == skip):
			res.outcome[top], res.elapsed[top] = e.Action, e.Elapsed
		}
	}
	return res
}

// listTests lists the suite's top-level tests (the build is cached by
// the run), run in dir ("": here). go test -list prints a package's tests,
// then "ok <package>".
func listTests(s suite, dir string, env []string) ([]string, error) {
	cmd := exec.Command(goBin(), append([]string{"test", "-list", "."}, s.pkgs...)...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go test -list: %w", err)
	}
	var names, pending []string
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, "Test"):
			pending = append(pending, strings.TrimSpace(l))
		case len(f) >= 2 && (f[0] == "ok" || f[0] == "?"):
			for _, n := range pending {
				names = append(names, s.prefix(f[1])+n)
			}
			pending = nil
		}
	}
	if len(names) == 0 {
		return nil, errors.New("go test -list found no tests")
	}
	return names, nil
}

// report prints the output of the tests that need a look, the tests that
// did as expected.txt says, the slowest tests, and the totals.
func report(o options, s suite, res results, v verdict, took time.Duration) {
	bad := map[string]bool{}
	for _, p := range v.problems {
		name, _, _ := strings.Cut(p, ":")
		bad[name] = true
	}
	var names []string
	for name := range res.output {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if o.verbose || bad[name] {
			fmt.Printf("--- output of %s (%s)\n%s", name, res.outcome[name], strings.Join(res.output[name], ""))
		}
	}
	if len(v.problems) > 0 || o.verbose {
		fmt.Print(strings.Join(res.pkgOut, ""))
	}
	fmt.Printf("conformance: as %s lists:\n", s.expected)
	for _, l := range v.expected {
		fmt.Println("  " + l)
	}
	type slow struct {
		name string
		s    float64
	}
	var slowest []slow
	for name, s := range res.elapsed {
		slowest = append(slowest, slow{name, s})
	}
	sort.Slice(slowest, func(i, j int) bool { return slowest[i].s > slowest[j].s })
	fmt.Print("conformance: slowest:")
	for _, s := range slowest[:min(5, len(slowest))] {
		fmt.Printf(" %s %.1fs", s.name, s.s)
	}
	fmt.Println()
	fmt.Printf("conformance: %s tests against kgateway: %d passed, %d failed as expected, %d skipped as expected, %d not run; %d problem(s); %s\n",
		s.name, v.counts[pass], v.counts[fail], v.counts[skip], v.counts[notRun], len(v.problems), took.Round(time.Second))
}
