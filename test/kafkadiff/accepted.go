package kafkadiff

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Accepted is one line of accepted.txt: the differences of the cases
// matching Case whose paths match Path are on purpose, for Reason.
//
// The file's lines read `case | path | reason`; # starts a comment line.
// A reason starting "sometimes:" marks a difference that depends on the
// moment (Kafka doing something asynchronously): such an entry may match
// nothing in a run without failing it.
// Case and Path are globs in which * matches any run of characters
// (dots and brackets included) and everything else is literal.
type Accepted struct {
	Line         int
	Sometimes    bool // the reason starts "sometimes:"
	Case, Path   string
	Reason       string
	caseRE, path *regexp.Regexp
}

// ParseAccepted reads an accepted list; a line without three fields or
// with an empty reason is an error.
func ParseAccepted(r io.Reader) ([]*Accepted, error) {
	var out []*Accepted
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, "|", 3)
		if len(f) != 3 || strings.TrimSpace(f[2]) == "" {
			return nil, fmt.Errorf("line %d: want `case | path | reason`: %q", n, line)
		}
		a := &Accepted{Line: n, Case: strings.TrimSpace(f[0]), Path: strings.TrimSpace(f[1]), Reason: strings.TrimSpace(f[2])}
		a.caseRE, a.path = glob(a.Case), glob(a.Path)
		a.Sometimes = strings.HasPrefix(a.Reason, "sometimes:")
		out = append(out, a)
	}
	return out, sc.Err()
}

func glob(g string) *regexp.Regexp {
	parts := strings.Split(g, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// Matches reports whether d is accepted by a.
func (a *Accepted) Matches(d Difference) bool {
	return a.caseRE.MatchString(d.Case) && a.path.MatchString(d.Path)
}

// Match returns the first entry accepting d, or nil.
func Match(list []*Accepted, d Difference) *Accepted {
	for _, a := range list {
		if a.Matches(d) {
			return a
		}
	}
	return nil
}
