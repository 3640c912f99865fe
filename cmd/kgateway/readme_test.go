package main

import (
	"os"
	"strings"
	"testing"
)

// The README's generated sections: between each begin marker and its end
// marker must be exactly what the code produces. KGW_UPDATE_README=1
// rewrites them.
func TestReadmeGeneratedTables(t *testing.T) {
	const path = "../../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	sections := []struct{ name, want string }{
		{"config-reference", configReference()},
		{"supported-apis", apisTable()},
	}
	for _, s := range sections {
		begin := "<!-- begin " + s.name + " (generated; do not edit) -->\n"
		end := "<!-- end " + s.name + " -->"
		i, j := strings.Index(readme, begin), strings.Index(readme, end)
		if i < 0 || j < i {
			t.Fatalf("README lacks the %s markers", s.name)
		}
		got := readme[i+len(begin) : j]
		if got == s.want {
			continue
		}
		if os.Getenv("KGW_UPDATE_README") == "1" {
			readme = readme[:i+len(begin)] + s.want + readme[j:]
			continue
		}
		t.Errorf("README %s differs from the code; run KGW_UPDATE_README=1 go test ./cmd/kgateway -run Readme\nwant:\n%s", s.name, s.want)
	}
	if os.Getenv("KGW_UPDATE_README") == "1" {
		if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
