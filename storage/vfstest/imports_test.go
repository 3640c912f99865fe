package vfstest

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyTestsImport: the crash and fault machinery stays out of the
// product: no non-test file in the module imports this package.
func TestOnlyTestsImport(t *testing.T) {
	const self = "github.com/kgateway/kgateway/storage/vfstest"
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		if strings.HasPrefix(filepath.ToSlash(path), "../../storage/vfstest/") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if strings.Trim(imp.Path.Value, `"`) == self {
				t.Errorf("%s imports %s: test machinery in the product", path, self)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
