package kafkatools

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Normalisation: what legitimately differs between two runs of a tool
// against two brokers, whichever they are, is replaced by a placeholder
// before the outputs are compared line by line.
var (
	// Log lines' and consumer-perf's wall-clock times.
	reLogTime  = regexp.MustCompile(`\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}[,:.]\d{3}`)
	reEpochMs  = regexp.MustCompile(`\b1\d{12}\b`) // epoch milliseconds (2001–2286)
	reUUID     = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	reTopicID  = regexp.MustCompile(`(TopicId: )[A-Za-z0-9_-]{22}`)
	reSpace    = regexp.MustCompile(`[ \t]+`)
	reStack    = regexp.MustCompile(`^\s*at [\w$.<>/]+\(.*\)$|^\s*\.\.\. \d+ more$`)
	reNumber   = regexp.MustCompile(`\d+(\.\d+)?`)
	reDuration = regexp.MustCompile(`(\{ts\} )\d+`) // kafka-transactions describe: start time, then duration
	// Member ids of consumer- and share-protocol groups: a random UUID in
	// URL-safe base64 (a token with a digit or an upper-case letter, so
	// that names such as console-share-consumer stay; requiring both
	// missed one id in 40, those without a digit).
	reToken = regexp.MustCompile(`\b[A-Za-z0-9_-]{22}\b`)
	reDigit = regexp.MustCompile(`[0-9]`)
	// kafka-log-dirs: each broker's own data directory and file system.
	reLogDir    = regexp.MustCompile(`"logDir":"[^"]*"`)
	reLogDirs   = regexp.MustCompile(`"log_dirs":\["[^"]*"\]`) // kafka-reassign-partitions' rollback plan
	reFSBytes   = regexp.MustCompile(`"(totalBytes|usableBytes)":\d+`)
	reFeatEpoch = regexp.MustCompile(`(Epoch: )\d+`)
	reUpper     = regexp.MustCompile(`[A-Z]`)
)

func maskMemberIDs(l string) string {
	return reToken.ReplaceAllStringFunc(l, func(tok string) string {
		if reDigit.MatchString(tok) || reUpper.MatchString(tok) {
			return "{member-id}"
		}
		return tok
	})
}

// perfSteps are the steps whose figures (rates, latencies, times) are
// masked whole; their record counts are checked apart (checkPerf).
var perfStepNames = map[string]bool{"producer perf": true, "consumer perf": true}

// normalise turns one run's output into the lines compared: "exit N", then
// stdout's lines, then stderr's lines prefixed "stderr: ", each with the
// target's address, ids and times replaced and whitespace runs collapsed
// (the tools pad columns to the widest value). Stack frames are dropped:
// an exception's message is compared, not the code path that threw it.
func normalise(step string, tg target, r result) []string {
	lines := []string{fmt.Sprintf("exit %d", r.exit)}
	add := func(prefix, text string) {
		for _, l := range strings.Split(text, "\n") {
			if reStack.MatchString(l) {
				continue
			}
			l = strings.TrimSpace(reSpace.ReplaceAllString(l, " "))
			l = strings.ReplaceAll(l, tg.addr, "{broker}")
			l = reLogTime.ReplaceAllString(l, "{time}")
			l = reEpochMs.ReplaceAllString(l, "{ts}")
			if step == "txn describe" {
				l = reDuration.ReplaceAllString(l, "${1}{duration}")
			}
			l = reUUID.ReplaceAllString(l, "{uuid}")
			l = reTopicID.ReplaceAllString(l, "${1}{topic-id}")
			l = maskMemberIDs(l)
			if strings.HasPrefix(step, "logdirs") {
				l = reLogDir.ReplaceAllString(l, `"logDir":"{dir}"`)
				l = reFSBytes.ReplaceAllString(l, `"$1":{bytes}`)
			}
			if strings.HasPrefix(step, "reassign") {
				l = reLogDirs.ReplaceAllString(l, `"log_dirs":["{dir}"]`)
			}
			if strings.HasPrefix(step, "features") {
				l = reFeatEpoch.ReplaceAllString(l, "${1}{epoch}")
			}
			if perfStepNames[step] {
				l = reNumber.ReplaceAllString(l, "N")
			}
			if l != "" {
				lines = append(lines, prefix+l)
			}
		}
	}
	add("", r.stdout)
	add("stderr: ", r.stderr)
	return lines
}

// difference is one line one target printed (normalised) that the other
// did not, as often as it is unmatched.
type difference struct {
	step, side, line string
}

func (d difference) String() string { return fmt.Sprintf("%s: only %s: %s", d.step, d.side, d.line) }

// diffLines is the multiset difference of the two targets' lines: each line
// of a is matched with an equal line of b, whatever its position (tools
// print some lists in the order of a hash map), and what is left over on
// either side is a difference.
func diffLines(step string, sides [2]string, a, b []string) []difference {
	count := map[string]int{}
	for _, l := range a {
		count[l]++
	}
	for _, l := range b {
		count[l]--
	}
	var out []difference
	keys := make([]string, 0, len(count))
	for l := range count {
		keys = append(keys, l)
	}
	sort.Strings(keys)
	for _, l := range keys {
		for n := count[l]; n > 0; n-- {
			out = append(out, difference{step, sides[0], l})
		}
		for n := count[l]; n < 0; n++ {
			out = append(out, difference{step, sides[1], l})
		}
	}
	return out
}

// accepted is a difference between kgateway and Apache Kafka that is known
// and explained: Step and Line are regular expressions that the whole step
// name and the whole normalised line match, Side is the target that
// printed the line ("kafka" or "kgateway").
type accepted struct {
	Step, Side, Line, Reason string
}

// triage splits the differences into those some entry of list accepts and
// those none does, and returns the entries that accepted nothing (stale:
// the difference is gone, so the entry must go too).
func triage(diffs []difference, list []accepted) (unaccepted []difference, stale []accepted) {
	used := make([]bool, len(list))
	steps, lines := make([]*regexp.Regexp, len(list)), make([]*regexp.Regexp, len(list))
	for i, a := range list {
		steps[i] = regexp.MustCompile(`^(?:` + a.Step + `)$`)
		lines[i] = regexp.MustCompile(`^(?:` + a.Line + `)$`)
	}
next:
	for _, d := range diffs {
		for i, a := range list {
			if a.Side == d.side && steps[i].MatchString(d.step) && lines[i].MatchString(d.line) {
				used[i] = true
				continue next
			}
		}
		unaccepted = append(unaccepted, d)
	}
	for i, a := range list {
		if !used[i] {
			stale = append(stale, a)
		}
	}
	return unaccepted, stale
}

// expectFail are the steps that ask for something Kafka refuses (the tool
// exits 1 on Apache Kafka too); every other step must succeed on Kafka,
// or the scenario itself is wrong.
var expectFail = map[string]bool{
	"topics create existing":          true,
	"topics alter fewer partitions":   true,
	"topics alter same partitions":    true,
	"topics describe missing":         true,
	"groups describe missing":         true,
	"features upgrade unsupported":    true,
	"reassign execute unknown broker": true,
	"configs broker alter read-only":  true,

	"configs client-metrics alter invalid interval": true,
	"configs client-metrics alter unknown config":   true,
	"configs client-metrics alter invalid match":    true,
	"configs broker-loggers alter bad level":        true,
	"configs broker-loggers delete root":            true,
}

// compare requires every step to print the same on both targets, up to the
// accepted list, and every accepted entry to still be needed.
func (s *session) compare() {
	s.t.Helper()
	var all []difference
	for _, step := range s.steps {
		rs := s.outputs[step]
		if rs[0].exit != 0 && !expectFail[step] {
			s.t.Errorf("%s: failed on Apache Kafka (exit %d): the scenario is wrong\n%s%s", step, rs[0].exit, rs[0].stdout, rs[0].stderr)
		}
		a := normalise(step, s.targets[0], rs[0])
		b := normalise(step, s.targets[1], rs[1])
		all = append(all, diffLines(step, [2]string{s.targets[0].name, s.targets[1].name}, a, b)...)
	}
	unaccepted, stale := triage(all, acceptedDifferences)
	for _, d := range unaccepted {
		s.t.Errorf("unaccepted difference: %v", d)
	}
	for _, a := range stale {
		s.t.Errorf("accepted difference no longer occurs (remove it from acceptedDifferences): %s: %s: %q (%s)", a.Step, a.Side, a.Line, a.Reason)
	}
	s.t.Logf("%d steps, %d differences, %d accepted", len(s.steps), len(all), len(all)-len(unaccepted))
}
