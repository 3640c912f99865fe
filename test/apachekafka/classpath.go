package apachekafka

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

var classpath struct {
	mu sync.Mutex
	cp string
}

// Classpath is the classpath of Kafka's jars: $KGW_KAFKA_CLASSPATH, or
// test/jvm/target/classpath.txt, which `make deps` writes and which is
// written here (by Maven) when it is missing.
func Classpath() (string, error) {
	if cp := os.Getenv(EnvClasspath); cp != "" {
		return cp, nil
	}
	classpath.mu.Lock()
	defer classpath.mu.Unlock()
	if classpath.cp != "" {
		return classpath.cp, nil
	}
	dir, err := JVMDir()
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, "target", "classpath.txt")
	if _, err := os.Stat(file); err != nil {
		cmd := exec.Command("mvn", "-q", "-B", "-f", filepath.Join(dir, "pom.xml"),
			"dependency:build-classpath", "-Dmdep.outputFile="+file)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("apachekafka: resolving Kafka %s with Maven (make deps does it ahead): %v\n%s", Version, err, out)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	classpath.cp = strings.TrimSpace(string(b))
	return classpath.cp, nil
}

// JVMDir is test/jvm of the repository the working directory is in.
func JVMDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "test", "jvm", "pom.xml")
		if _, err := os.Stat(p); err == nil {
			return filepath.Dir(p), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("apachekafka: no test/jvm/pom.xml above the working directory")
		}
		dir = parent
	}
}
