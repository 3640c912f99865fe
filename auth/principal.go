package auth

// Principals (the principal mapping) and ssl.principal.mapping.rules.

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"regexp"
	"strings"
)

// Anonymous is the principal of a connection that did not authenticate.
const Anonymous = "User:ANONYMOUS"

// UserPrincipal is the principal of an authenticated user name.
func UserPrincipal(name string) string { return "User:" + name }

// SubjectName is the certificate's subject as an RFC 2253 string, in the
// certificate's own order of attributes (as Java's X500Principal.getName
// writes it, which Kafka's rules match against).
func SubjectName(c *x509.Certificate) string {
	var seq pkix.RDNSequence
	if _, err := asn1.Unmarshal(c.RawSubject, &seq); err != nil {
		return c.Subject.String()
	}
	return seq.String()
}

// PrincipalMapper applies ssl.principal.mapping.rules to a subject.
type PrincipalMapper struct{ rules []mappingRule }

type mappingRule struct {
	deflt       bool
	re          *regexp.Regexp
	replacement string
	lower       bool
	upper       bool
}

// ruleRE matches one rule of the list: DEFAULT, or
// RULE:pattern/replacement/[LU], where pattern and replacement may hold
// commas and escaped slashes.
var ruleRE = regexp.MustCompile(`^\s*(?:(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?))\s*(?:,|$)`)

// NewPrincipalMapper parses rules ("" is DEFAULT).
func NewPrincipalMapper(rules string) (*PrincipalMapper, error) {
	m := &PrincipalMapper{}
	rest := strings.TrimSpace(rules)
	if rest == "" {
		rest = "DEFAULT"
	}
	for rest != "" {
		g := ruleRE.FindStringSubmatch(rest)
		if g == nil {
			return nil, fmt.Errorf("auth: ssl.principal.mapping.rules: cannot parse %q", rest)
		}
		rest = strings.TrimSpace(rest[len(g[0]):])
		if g[1] != "" {
			m.rules = append(m.rules, mappingRule{deflt: true})
			continue
		}
		re, err := regexp.Compile("^(?:" + g[2] + ")$")
		if err != nil {
			return nil, fmt.Errorf("auth: ssl.principal.mapping.rules: %w", err)
		}
		m.rules = append(m.rules, mappingRule{re: re, replacement: strings.ReplaceAll(g[3], `\/`, "/"),
			lower: g[4] == "L", upper: g[4] == "U"})
	}
	return m, nil
}

// Map returns the user name of a subject: the first rule that matches
// decides; DEFAULT keeps the whole subject. No rule matching is an error
// (the client is refused).
func (m *PrincipalMapper) Map(subject string) (string, error) {
	for _, r := range m.rules {
		if r.deflt {
			return subject, nil
		}
		idx := r.re.FindStringSubmatchIndex(subject)
		if idx == nil {
			continue
		}
		out := string(r.re.ExpandString(nil, r.replacement, subject, idx))
		switch {
		case r.lower:
			out = strings.ToLower(out)
		case r.upper:
			out = strings.ToUpper(out)
		}
		return out, nil
	}
	return "", fmt.Errorf("auth: no ssl.principal.mapping.rules rule matches %q", subject)
}
