package ledger

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/kgateway/kgateway/storage"
)

// Transcript tests (github.com/cockroachdb/datadriven). Each file in
// testdata/ is one scenario on a fresh store: blocks of
//
//	command args...
//	----
//	expected output
//	<blank line>
//
// Lines starting with '#' between blocks are comments. Run with -rewrite
// to regenerate the expected outputs, then review the diff.
//
// Ledgers are named by creation order: L1 is testLog's first ledger, L2
// the next, and so on; Kafka's group error order, rebalance completion, ... are ids taken by another log, so they
// lie between two of testLog's ledgers, and hold no offset of it. Entries
// are written Ln:e (entry e of ledger Ln); a read names offsets, or
// earliest, latest and nolimit.
func TestTranscripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		tr := newTranscript(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			fields := make([]string, len(d.CmdArgs))
			for i, a := range d.CmdArgs {
				fields[i] = a.String()
			}
			got := tr.run(d.Cmd, fields)
			tr.refreshNames()
			return strings.Join(got, "\n") + "\n"
		})
	})
}

// transcript is the state of one scenario.
type transcript struct {
	t     *testing.T
	e     *env
	names map[LedgerID]string
	ids   map[string]LedgerID
	nL    int
	nG    int
}

func newTranscript(t *testing.T) *transcript {
	tr := &transcript{t: t, e: newEnv(t, Config{}), names: map[LedgerID]string{}, ids: map[string]LedgerID{}}
	tr.refreshNames()
	return tr
}

func (tr *transcript) name(id LedgerID, n string) {
	tr.names[id], tr.ids[n] = n, id
}

// refreshNames names testLog's ledgers that appeared since the last call.
func (tr *transcript) refreshNames() {
	info, err := tr.e.store.Info(testLog)
	if err != nil {
		return
	}
	for _, li := range info.Ledgers {
		if _, ok := tr.names[li.ID]; !ok {
			tr.nL++
			tr.name(li.ID, fmt.Sprintf("L%d", tr.nL))
		}
	}
}

// fmtPos names entry e of ledger id.
func (tr *transcript) fmtPos(id LedgerID, e EntryID) string {
	if n, ok := tr.names[id]; ok {
		return fmt.Sprintf("%s:%d", n, e)
	}
	return fmt.Sprintf("#%d:%d", id, e)
}

// parseOffset reads an offset: a number, earliest, latest or nolimit.
func parseOffset(s string) (Offset, error) {
	switch s {
	case "earliest":
		return Earliest, nil
	case "latest":
		return Latest, nil
	case "nolimit":
		return NoLimit, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return Offset(v), err
}

// sentinels name the errors a transcript prints.
var sentinels = []struct {
	name string
	err  error
}{
	{"ledger-invalid", ErrInvalid}, {"ledger-fenced", ErrFenced}, {"ledger-closed", ErrClosed},
	{"injected-io", errInjected}, {"storage-trimmed", storage.ErrTrimmed},
	{"storage-out-of-range", storage.ErrOutOfRange}, {"storage-not-found", storage.ErrNotFound},
	{"storage-empty", storage.ErrEmpty}, {"storage-fenced", storage.ErrFenced},
	{"storage-corrupt", storage.ErrCorrupt},
}

func fmtErr(err error) string {
	var names []string
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			names = append(names, s.name)
		}
	}
	if len(names) == 0 {
		return "error: " + err.Error()
	}
	return "error: " + strings.Join(names, " ")
}

// args parses key=value arguments.
func args(fields []string) map[string]string {
	m := map[string]string{}
	for _, f := range fields {
		k, v, _ := strings.Cut(f, "=")
		m[k] = v
	}
	return m
}

func (tr *transcript) run(cmd string, fields []string) []string {
	out, err := tr.dispatch(cmd, fields)
	if err != nil {
		return []string{fmtErr(err)}
	}
	return out
}

func (tr *transcript) dispatch(cmd string, fields []string) ([]string, error) {
	e := tr.e
	switch cmd {
	case "append":
		return tr.cmdAppend(fields)
	case "roll":
		id, err := e.m.Roll()
		if err != nil {
			return nil, err
		}
		tr.refreshNames()
		return []string{tr.names[id]}, nil
	case "gap":
		return tr.cmdGap()
	case "ledgers":
		return tr.cmdLedgers()
	case "read":
		return tr.cmdRead(fields)
	case "snapshot":
		sn, err := e.m.Snapshot()
		if err != nil {
			return nil, err
		}
		return []string{fmt.Sprintf("start=%d end=%d", sn.Start, sn.End)}, nil
	}
	return tr.dispatchAdmin(cmd, fields)
}

func (tr *transcript) dispatchAdmin(cmd string, fields []string) ([]string, error) {
	e := tr.e
	var err error
	switch cmd {
	case "soft-trim", "hard-trim":
		var off int64
		if off, err = strconv.ParseInt(fields[0], 10, 64); err != nil {
			return nil, err
		}
		if cmd == "soft-trim" {
			err = e.store.SoftTrim(testLog, Offset(off))
		} else {
			err = e.store.HardTrim(testLog, Offset(off))
		}
	case "fence":
		err = e.m.Fence()
	case "activate":
		err = e.m.Activate()
	case "close":
		err = e.m.Close()
	case "reopen":
		e.reopen()
	case "fail-reads":
		e.fs.failReads(tr.ids[fields[0]])
	case "heal":
		e.fs.healReads()
	default:
		tr.t.Fatalf("unknown command %q", cmd)
	}
	if err != nil {
		return nil, err
	}
	return []string{"ok"}, nil
}

// cmdAppend: append payload[:records] ...
func (tr *transcript) cmdAppend(fields []string) ([]string, error) {
	var out []string
	for _, f := range fields {
		payload, rec, _ := strings.Cut(f, ":")
		n := 1
		if rec != "" {
			var err error
			if n, err = strconv.Atoi(rec); err != nil {
				return nil, err
			}
		}
		h, err := tr.e.m.Append(n, []byte(payload), storage.AppendOptions{MaxTime: 1000})
		if err != nil {
			return append(out, fmtErr(err)), nil
		}
		tr.refreshNames()
		out = append(out, tr.fmtEntry(h, payload))
	}
	return out, nil
}

func (tr *transcript) fmtEntry(h storage.EntryHeader, payload string) string {
	return fmt.Sprintf("%s offsets=[%d,%d) %s", tr.fmtPos(h.Ledger, h.Entry), h.Offset, h.End(), payload)
}

// cmdGap takes a ledger id with another log, so testLog's next ledger id
// skips it.
func (tr *transcript) cmdGap() ([]string, error) {
	s := tr.e.store
	if _, err := s.Info(otherLog); errors.Is(err, storage.ErrNoLog) {
		if err := s.CreateLog(otherLog); err != nil {
			return nil, err
		}
	}
	id, err := s.Roll(otherLog)
	if err != nil {
		return nil, err
	}
	tr.nG++
	n := fmt.Sprintf("G%d", tr.nG)
	tr.name(id, n)
	return []string{n}, nil
}

func (tr *transcript) cmdLedgers() ([]string, error) {
	info, err := tr.e.store.Info(testLog)
	if err != nil {
		return nil, err
	}
	out := []string{fmt.Sprintf("start=%d end=%d", info.Start, info.End)}
	for _, li := range info.Ledgers {
		s := fmt.Sprintf("%s first=%d entries=%d", tr.names[li.ID], li.FirstOffset, li.Entries)
		if li.Sealed {
			s += " sealed"
		}
		out = append(out, s)
	}
	return out, nil
}

// cmdRead: read from=OFFSET [max-entries=N] [max-bytes=N] [max=OFFSET],
// the cursorless read (ReadEntries) of the committed log.
func (tr *transcript) cmdRead(fields []string) ([]string, error) {
	a := args(fields)
	from, err := parseOffset(a["from"])
	if err != nil {
		return nil, err
	}
	maxOffset := NoLimit
	if s, ok := a["max"]; ok {
		if maxOffset, err = parseOffset(s); err != nil {
			return nil, err
		}
	}
	maxEntries, maxBytes := 100, 1<<20
	if s, ok := a["max-entries"]; ok {
		if maxEntries, err = strconv.Atoi(s); err != nil {
			return nil, err
		}
	}
	if s, ok := a["max-bytes"]; ok {
		if maxBytes, err = strconv.Atoi(s); err != nil {
			return nil, err
		}
	}
	_, es, err := tr.e.m.ReadEntries(Committed, from, maxOffset, maxEntries, maxBytes, nil)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return []string{"empty"}, nil
	}
	out := make([]string, len(es))
	for i, en := range es {
		out[i] = tr.fmtEntry(en.EntryHeader, string(en.Payload))
	}
	return out, nil
}
