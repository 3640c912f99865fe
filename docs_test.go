package kgateway

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// designDoc is the repository's design document. The numbered rules (R1,
// D5, I2, ...) that code, tests and notes cite are defined there or in a
// package's doc.go that it names.
const designDoc = "docs/DESIGN.md"

// keptFamilies are the only numbered rules: the durability, storage and
// cursorless-read contracts that tools/mutate and these tests check
// (durability D, storage invariants I, the tail cache C, the object tier
// B, cursorless reads R, the read view V, and the offsets store's
// durability O1–O8). Every other rule is named in words, or by its KIP,
// in the package that owns it: "(the LSO bound)", not "(X2)".
var keptFamilies = map[byte][2]int{
	'D': {1, 99}, 'I': {1, 99}, 'C': {1, 99}, 'B': {1, 99}, 'R': {1, 99}, 'V': {1, 99},
	'O': {1, 8},
}

// keptRule reports whether id belongs to a family that stays numbered.
func keptRule(id string) bool {
	r, ok := keptFamilies[id[0]]
	if !ok {
		return false
	}
	n := 0
	fmt.Sscanf(id[1:], "%d", &n)
	return n >= r[0] && n <= r[1]
}

// selfFile is this file, which the checks skip.
const selfFile = "docs_test.go"

var (
	// ruleID is a cited rule: a capital letter and a number, as a word
	// (not after a hyphen: A-Z0-9 is a character class, t-D9 a name).
	ruleID = regexp.MustCompile(`(?:^|[^\w-])([A-Z][0-9]+)\b`)
	// ruleDef is a line that defines a rule: the id first on the line
	// (after comment marks, a list bullet or bold), then its text.
	ruleDef = regexp.MustCompile(`^\s*(?://\s*)?(?:[-*]\s+)?(?:\*\*)?([A-Z][0-9]+)(?:\*\*)?\s+[^\s)–,.;:]`)
	// sectionRef is a citation of a named section: doc.go "Pins",
	// docs/DESIGN.md "Layers".
	sectionRef = regexp.MustCompile(`((?:[\w./-]*/)?(?:doc\.go|DESIGN\.md)) "([^"]+)"`)
	// outside names something that is not in the repository: a team note,
	// a machine path, a numbered issue.
	outside = regexp.MustCompile(`(?i)/work/|\.library\b|\bshared/|STYLE\.md|KAFKA-CHECKLIST|\bissues?\s*#?[0-9]+`)
	// upPath is a relative path that climbs directories.
	upPath = regexp.MustCompile("(?:^|[\\s\"'`(=])((?:\\.\\./)+[\\w./-]*)")
	// mdRef is a Markdown file named in text.
	mdRef = regexp.MustCompile(`[\w./-]+\.md\b`)
)

// notRules are ids that are not rule citations, per file ("" for every
// file).
var notRules = map[string]map[string]string{
	"":                             {"S3": "Amazon S3, the object storage API"},
	"ledger/transcript_test.go":    {"L1": "ledger names", "L2": "ledger names"},
	"ledger/write_test.go":         {"L1": "ledger names", "L2": "ledger names"},
	"auth/authtest/certs.go":       {"P256": "an elliptic curve"},
	"crc32c/crc32c_amd64.go":       {"X86": "golang.org/x/sys/cpu's x86 feature flags"},
	"cmd/kgbench/security_test.go": {"P256": "an elliptic curve"},
}

// notRule reports whether id, in file f, is not a rule citation.
func notRule(f, id string) bool {
	return notRules[f][id] != "" || notRules[""][id] != ""
}

// TestRulesDefined: every rule id cited in a .go or .md file is defined
// exactly once, in docs/DESIGN.md or in a doc.go that docs/DESIGN.md names,
// and belongs to a kept family: no other rule is defined or cited by
// number.
func TestRulesDefined(t *testing.T) {
	files := repoFiles(t)
	design := string(readFile(t, designDoc))
	defs := map[string]string{} // id -> where
	for _, f := range files {
		if f != designDoc && filepath.Base(f) != "doc.go" {
			continue
		}
		n := 0
		for i, line := range strings.Split(string(readFile(t, f)), "\n") {
			m := ruleDef.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			where := fmt.Sprintf("%s:%d", f, i+1)
			if !keptRule(m[1]) {
				t.Errorf("%s defines rule %s: only the durability and cursorless families are numbered (D, I, C, B, R, V, O1–O8); name the rule in words (**Its name.** ...)", where, m[1])
			}
			if prev, ok := defs[m[1]]; ok {
				t.Errorf("%s defines %s again (first at %s): define each rule once", where, m[1], prev)
				continue
			}
			defs[m[1]] = where
			n++
		}
		if n > 0 && f != designDoc && !strings.Contains(design, f) {
			t.Errorf("%s defines rules but %s does not name it", f, designDoc)
		}
	}
	// Every family is listed in docs/DESIGN.md (its table names the first
	// id of each, e.g. "R1–R11").
	families := map[string]string{}
	for id, where := range defs {
		families[id[:1]] = id + " at " + where
	}
	for fam, example := range families {
		if !regexp.MustCompile(`\b` + fam + `1\b`).MatchString(design) {
			t.Errorf("rule family %s (%s) is not listed in %s \"Contracts\"", fam, example, designDoc)
		}
	}
	for _, f := range files {
		if !strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, ".md") {
			continue
		}
		for i, line := range strings.Split(string(readFile(t, f)), "\n") {
			for _, m := range ruleID.FindAllStringSubmatch(line, -1) {
				id := m[1]
				if notRule(f, id) {
					continue
				}
				if !keptRule(id) {
					t.Errorf("%s:%d cites %s: only the durability and cursorless families are numbered (D, I, C, B, R, V, O1–O8); cite the rule by its name in words, as the owning package's doc.go names it", f, i+1, id)
					continue
				}
				if _, ok := defs[id]; ok {
					continue
				}
				t.Errorf("%s:%d cites %s, which is defined nowhere: define it in %s or in the package's doc.go (and name that doc.go in %s)", f, i+1, id, designDoc, designDoc)
			}
		}
	}
}

// TestSelfContained: no tracked file refers to anything outside the
// repository (a team note, a machine path, an issue number, a relative
// path that climbs out), and every Markdown file and named section a file
// cites exists.
func TestSelfContained(t *testing.T) {
	for _, f := range repoFiles(t) {
		if f == "go.sum" || strings.HasSuffix(f, "/go.sum") {
			continue
		}
		b := readFile(t, f)
		if bytes.IndexByte(b, 0) >= 0 || strings.HasSuffix(f, ".png") {
			continue // binary
		}
		for i, line := range strings.Split(string(b), "\n") {
			where := fmt.Sprintf("%s:%d", f, i+1)
			for _, m := range outside.FindAllString(line, -1) {
				t.Errorf("%s refers to %q, which is not in the repository", where, m)
			}
			for _, m := range upPath.FindAllStringSubmatch(line, -1) {
				if p := filepath.Join(filepath.Dir(f), m[1]); strings.HasPrefix(p, "..") {
					t.Errorf("%s refers to %s, outside the repository", where, m[1])
				}
			}
			if !strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, ".md") {
				continue
			}
			for _, m := range mdRef.FindAllString(line, -1) {
				if !exists(m) && !exists(filepath.Join(filepath.Dir(f), m)) {
					t.Errorf("%s refers to %s, which is not in the repository (name it by its path from the root)", where, m)
				}
			}
			for _, m := range sectionRef.FindAllStringSubmatch(line, -1) {
				doc := m[1]
				if doc == "DESIGN.md" {
					doc = designDoc
				} else if !strings.Contains(doc, "/") {
					doc = filepath.Join(filepath.Dir(f), doc)
				}
				if !hasSection(t, doc, m[2]) {
					t.Errorf("%s cites section %q of %s, which has no such heading", where, m[2], doc)
				}
			}
		}
	}
}

// hasSection reports whether doc (a doc.go or a Markdown file) has a
// heading named name.
func hasSection(t *testing.T, doc, name string) bool {
	if !exists(doc) {
		return false
	}
	for _, line := range strings.Split(string(readFile(t, doc)), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "//"))
		if h := strings.TrimLeft(line, "#"); h != line && strings.TrimSpace(h) == name {
			return true
		}
	}
	return false
}

// repoFiles lists the files git tracks or would track (every file when git
// is unavailable, as in a source archive), except this one: its patterns
// are not citations.
func repoFiles(t *testing.T) []string {
	t.Helper()
	if out, err := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output(); err == nil && len(out) > 0 {
		var files []string
		for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
			if exists(f) && f != selfFile { // exists: not deleted since
				files = append(files, filepath.ToSlash(f))
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "data") {
				return filepath.SkipDir
			}
			return nil
		}
		if path != selfFile {
			files = append(files, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
