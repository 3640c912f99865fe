package logging

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// RootName is the root logger's name as Kafka names it (zap's root has
// the empty name).
const RootName = "root"

// levels maps Kafka's level names to the lowest zap level each lets
// through.
var levels = map[string]zapcore.Level{
	"TRACE": zapcore.DebugLevel,
	"DEBUG": zapcore.DebugLevel,
	"INFO":  zapcore.InfoLevel,
	"WARN":  zapcore.WarnLevel,
	"ERROR": zapcore.ErrorLevel,
	"FATAL": zapcore.FatalLevel,
}

// Levels are the level names a logger may be set to, sorted.
func Levels() []string {
	out := make([]string, 0, len(levels))
	for name := range levels {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// ValidLevel reports whether name is one of Levels (case matters, as in
// Kafka).
func ValidLevel(name string) bool {
	_, ok := levels[name]
	return ok
}

// LevelOf is the Kafka name of a zap level: the configured root level of
// a registry. Zap's dpanic and panic levels are ERROR; a core that
// enables nothing is OFF.
func LevelOf(l zapcore.Level) string {
	switch {
	case l <= zapcore.DebugLevel:
		return "DEBUG"
	case l == zapcore.InfoLevel:
		return "INFO"
	case l == zapcore.WarnLevel:
		return "WARN"
	case l < zapcore.FatalLevel:
		return "ERROR"
	case l == zapcore.FatalLevel:
		return "FATAL"
	}
	return "OFF"
}

// Errors of Apply.
var (
	ErrNoLogger     = errors.New("logging: no such logger")
	ErrInvalidLevel = errors.New("logging: invalid level")
	ErrUnsetRoot    = errors.New("logging: the root logger's level cannot be removed")
)

// Registry is the set of loggers of one process and their levels.
type Registry struct {
	base zapcore.Core
	mu   sync.Mutex
	own  map[string]string // registered logger ("" root) → its own level name, "" inherited
	// rootZap is the root level's zap level where it is not one of
	// levels' (a wrapped core's dpanic, or OFF).
	rootZap zapcore.Level
	snap    atomic.Pointer[snapshot]
}

// snapshot is what log calls read: every registered logger's effective
// level, and the lowest of them.
type snapshot struct {
	eff map[string]zapcore.Level
	min zapcore.Level
}

// New is a registry writing to base, whose root logger is at the zap
// level root. base should let every level through (zapcore.DebugLevel):
// a level the registry lets through and base does not is still dropped.
func New(base zapcore.Core, root zapcore.Level) *Registry {
	r := &Registry{base: base, own: map[string]string{"": LevelOf(root)}, rootZap: root}
	r.publish()
	return r
}

// Logger is the root logger.
func (r *Registry) Logger(opts ...zap.Option) *zap.Logger {
	return zap.New(&core{Core: r.base, reg: r}, opts...)
}

// Of is the registry l writes through, nil if none.
func Of(l *zap.Logger) *Registry {
	if l == nil {
		return nil
	}
	if c, ok := l.Core().(*core); ok {
		return c.reg
	}
	return nil
}

// Wrap returns l if it writes through a registry, else l writing through
// a new registry over l's core, whose root level is the lowest level
// that core enables (nil l: a registry over a no-op core).
func Wrap(l *zap.Logger) *zap.Logger {
	if l == nil {
		l = zap.NewNop()
	}
	if Of(l) != nil {
		return l
	}
	reg := New(l.Core(), zapcore.LevelOf(l.Core()))
	return l.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return &core{Core: c, reg: reg} }))
}

// Named is l.Named(name), registered as a logger of l's registry (if l
// writes through one) so that it is listed and has a level of its own
// once set.
func Named(l *zap.Logger, name string) *zap.Logger {
	out := l.Named(name)
	if reg := Of(l); reg != nil {
		reg.register(out.Name())
	}
	return out
}

func (r *Registry) register(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.own[name]; !ok {
		r.own[name] = ""
		r.publish()
	}
}

// Logger is one logger as listed: its name (RootName for the root) and
// its effective level.
type Logger struct{ Name, Level string }

// Loggers lists every registered logger, sorted by name.
func (r *Registry) Loggers() []Logger {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Logger, 0, len(r.own))
	for name := range r.own {
		out = append(out, Logger{Name: external(name), Level: r.levelLocked(name)})
	}
	slices.SortFunc(out, func(a, b Logger) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Change sets a logger's level (Level a level name) or, with Level
// empty, removes its own level so it inherits again.
type Change struct{ Logger, Level string }

// Apply validates every change and, unless validateOnly, makes them all;
// one invalid change (ErrNoLogger, ErrInvalidLevel, ErrUnsetRoot,
// wrapped with the logger's name) and none is made.
func (r *Registry) Apply(changes []Change, validateOnly bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range changes {
		name := internal(c.Logger)
		if _, ok := r.own[name]; !ok {
			return fmt.Errorf("%w: %s", ErrNoLogger, c.Logger)
		}
		if c.Level == "" && name == "" {
			return ErrUnsetRoot
		}
		if c.Level != "" && !ValidLevel(c.Level) {
			return fmt.Errorf("%w: %s for %s", ErrInvalidLevel, c.Level, c.Logger)
		}
	}
	if validateOnly {
		return nil
	}
	for _, c := range changes {
		r.own[internal(c.Logger)] = c.Level
	}
	r.publish()
	return nil
}

func internal(name string) string {
	if name == RootName {
		return ""
	}
	return name
}

func external(name string) string {
	if name == "" {
		return RootName
	}
	return name
}

// levelLocked is name's effective level name: its own, else its nearest
// registered ancestor's, else the root's.
func (r *Registry) levelLocked(name string) string {
	for {
		if lv := r.own[name]; lv != "" {
			return lv
		}
		name = parent(name)
	}
}

// parent is name's ancestor one dot up ("" above a name with no dot).
func parent(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[:i]
	}
	return ""
}

// zapLevel is a level name's zap level.
func (r *Registry) zapLevel(lv string) zapcore.Level {
	if z, ok := levels[lv]; ok {
		return z
	}
	return r.rootZap // the configured root level outside Kafka's names
}

// publish recomputes the snapshot (mu held).
func (r *Registry) publish() {
	s := &snapshot{eff: make(map[string]zapcore.Level, len(r.own)), min: zapcore.InvalidLevel}
	for name := range r.own {
		z := r.zapLevel(r.levelLocked(name))
		s.eff[name] = z
		s.min = min(s.min, z)
	}
	r.snap.Store(s)
}

// enabled reports whether the logger named name logs at lvl: the level
// of name, else of its nearest registered ancestor.
func (s *snapshot) enabled(name string, lvl zapcore.Level) bool {
	for {
		if z, ok := s.eff[name]; ok {
			return lvl >= z
		}
		name = parent(name)
	}
}

// core filters entries by their logger's level, then hands them to the
// wrapped core.
type core struct {
	zapcore.Core
	reg *Registry
}

// Enabled is the fast path: no logger logs below the lowest level.
func (c *core) Enabled(lvl zapcore.Level) bool {
	return lvl >= c.reg.snap.Load().min && c.Core.Enabled(lvl)
}

// Level is the lowest level any logger logs at (zapcore.LevelOf).
func (c *core) Level() zapcore.Level {
	return max(c.reg.snap.Load().min, zapcore.LevelOf(c.Core))
}

func (c *core) With(fields []zapcore.Field) zapcore.Core {
	return &core{Core: c.Core.With(fields), reg: c.reg}
}

func (c *core) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if !c.reg.snap.Load().enabled(e.LoggerName, e.Level) {
		return ce
	}
	return c.Core.Check(e, ce)
}
