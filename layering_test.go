// Package kgateway holds repository-wide checks; the server lives in the
// subdirectories (DESIGN.md "Layers").
package kgateway

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLayering enforces DESIGN.md: imports only point downwards. The layers
// below the wire protocol never import kmsg, and kafka/ never imports
// pebble.
func TestLayering(t *testing.T) {
	forbidden := map[string]string{
		"storage":  "github.com/twmb/franz-go/pkg/kmsg",
		"ledger":   "github.com/twmb/franz-go/pkg/kmsg",
		"offsets":  "github.com/twmb/franz-go/pkg/kmsg",
		"resolver": "github.com/twmb/franz-go/pkg/kmsg",
		"kafka":    "github.com/cockroachdb/pebble",
	}
	for dir, bad := range forbidden {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				if p := strings.Trim(imp.Path.Value, `"`); strings.HasPrefix(p, bad) {
					t.Errorf("%s imports %s: forbidden by DESIGN.md layering", path, p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("walk %s: %v", dir, err)
		}
	}
}

// TestNoCursor enforces R1 at the source level: there is no cursor type
// anywhere in the code base.
func TestNoCursor(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for name, obj := range f.Scope.Objects {
			if obj.Kind.String() == "type" && strings.Contains(strings.ToLower(name), "cursor") {
				t.Errorf("%s declares type %s: R1 forbids cursors", path, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
