package logging

import (
	"errors"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func newObserved(t *testing.T) (*Registry, *zap.Logger, *observer.ObservedLogs) {
	t.Helper()
	obs, logs := observer.New(zapcore.DebugLevel)
	reg := New(obs, zapcore.InfoLevel)
	return reg, reg.Logger(), logs
}

// count is how many entries with message msg were written.
func count(logs *observer.ObservedLogs, msg string) int {
	return logs.FilterMessage(msg).Len()
}

// TestLevelAtRunTime: setting a logger to DEBUG makes its debug lines
// appear, and its siblings' stay hidden; removing the level hides them
// again (it inherits the root's INFO).
func TestLevelAtRunTime(t *testing.T) {
	reg, root, logs := newObserved(t)
	kafka := Named(root, "kafka")
	group := Named(kafka, "group")
	txn := Named(kafka, "txn")
	group.Debug("g1")
	if count(logs, "g1") != 0 {
		t.Fatal("a debug line was written at INFO")
	}
	if err := reg.Apply([]Change{{Logger: "kafka.group", Level: "DEBUG"}}, false); err != nil {
		t.Fatal(err)
	}
	group.Debug("g2")
	txn.Debug("t2")
	group.With(zap.Int("k", 1)).Debug("g2with")
	if count(logs, "g2") != 1 || count(logs, "g2with") != 1 {
		t.Fatal("kafka.group at DEBUG did not write its debug line")
	}
	if count(logs, "t2") != 0 {
		t.Fatal("kafka.txn wrote a debug line though only kafka.group is at DEBUG")
	}
	if err := reg.Apply([]Change{{Logger: "kafka.group"}}, false); err != nil {
		t.Fatal(err)
	}
	group.Debug("g3")
	group.Info("g3info")
	if count(logs, "g3") != 0 || count(logs, "g3info") != 1 {
		t.Fatal("after its level was removed kafka.group does not log at the root's INFO")
	}
}

// TestInheritance: a logger without a level of its own has its nearest
// registered ancestor's, and the listing shows the effective level.
func TestInheritance(t *testing.T) {
	reg, root, logs := newObserved(t)
	group := Named(Named(root, "kafka"), "group")
	if err := reg.Apply([]Change{{Logger: "kafka", Level: "ERROR"}}, false); err != nil {
		t.Fatal(err)
	}
	group.Warn("w")
	root.Warn("rootwarn")
	if count(logs, "w") != 0 || count(logs, "rootwarn") != 1 {
		t.Fatal("kafka.group did not inherit kafka's ERROR")
	}
	want := []Logger{{"kafka", "ERROR"}, {"kafka.group", "ERROR"}, {"root", "INFO"}}
	if got := reg.Loggers(); !equal(got, want) {
		t.Fatalf("Loggers() = %v, want %v", got, want)
	}
	if err := reg.Apply([]Change{{Logger: "root", Level: "TRACE"}, {Logger: "kafka"}}, false); err != nil {
		t.Fatal(err)
	}
	group.Debug("d")
	if count(logs, "d") != 1 {
		t.Fatal("root at TRACE does not let kafka.group's debug line through")
	}
	if got := reg.Loggers(); got[1].Level != "TRACE" {
		t.Fatalf("kafka.group lists %q, want the root's TRACE", got[1].Level)
	}
}

// TestApplyAllOrNothing: one bad change refuses them all.
func TestApplyAllOrNothing(t *testing.T) {
	reg, root, _ := newObserved(t)
	Named(root, "kafka")
	for _, tc := range []struct {
		changes []Change
		want    error
	}{
		{[]Change{{"kafka", "DEBUG"}, {"no.such", "DEBUG"}}, ErrNoLogger},
		{[]Change{{"kafka", "DEBUG"}, {"root", "debug"}}, ErrInvalidLevel},
		{[]Change{{"kafka", "DEBUG"}, {"root", "OFF"}}, ErrInvalidLevel},
		{[]Change{{"kafka", "DEBUG"}, {"root", ""}}, ErrUnsetRoot},
	} {
		if err := reg.Apply(tc.changes, false); !errors.Is(err, tc.want) {
			t.Fatalf("Apply(%v) = %v, want %v", tc.changes, err, tc.want)
		}
	}
	if err := reg.Apply([]Change{{"kafka", "WARN"}}, true); err != nil {
		t.Fatal(err)
	}
	if got := reg.Loggers(); got[0].Level != "INFO" {
		t.Fatalf("kafka is at %s after refused and validate-only changes, want INFO", got[0].Level)
	}
}

// TestWrap: a logger from elsewhere gets a registry over its own core, at
// that core's level; wrapping twice keeps the one registry.
func TestWrap(t *testing.T) {
	obs, logs := observer.New(zapcore.WarnLevel)
	l := Wrap(zap.New(obs).Named("kafka"))
	reg := Of(l)
	if reg == nil || Of(Wrap(l)) != reg {
		t.Fatal("Wrap did not give one registry")
	}
	if got := reg.Loggers(); len(got) != 1 || got[0] != (Logger{"root", "WARN"}) {
		t.Fatalf("Loggers() = %v", got)
	}
	Named(l, "group").Warn("w")
	if count(logs, "w") != 1 || logs.All()[0].LoggerName != "kafka.group" {
		t.Fatalf("wrapped logger wrote %v", logs.All())
	}
	if Of(Wrap(nil)) == nil {
		t.Fatal("Wrap(nil) has no registry")
	}
}

func equal(a, b []Logger) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestConcurrentLevels: loggers log while levels change and loggers are
// registered (run with -race): every entry written at INFO or above by a
// logger never below INFO is kept.
func TestConcurrentLevels(t *testing.T) {
	reg, root, logs := newObserved(t)
	k := Named(root, "kafka")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			lv := []string{"DEBUG", "INFO", "TRACE"}[i%3]
			if err := reg.Apply([]Change{{Logger: "kafka", Level: lv}}, false); err != nil {
				t.Error(err)
				return
			}
			Named(k, "sub")
			reg.Loggers()
		}
	}()
	for i := 0; i < 200; i++ {
		k.Info("i")
		k.Debug("d")
	}
	<-done
	if n := count(logs, "i"); n != 200 {
		t.Fatalf("%d info lines kept, want 200", n)
	}
}
