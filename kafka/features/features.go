// Package features keeps the finalized levels of the features a kgateway
// node serves (KIP-584: ApiVersions' supported and finalized features)
// and changes them as Kafka's UpdateFeatures does.
//
// Each feature has a supported range [Min, Max] and a finalized level
// within it, Max until changed. A level of 0 means the feature is off:
// it is not listed among the finalized features, as Kafka leaves out a
// feature at level 0.
//
// An update names a feature, a level and an upgrade type (upgrade, safe
// downgrade, unsafe downgrade). Updates apply all or nothing: the first
// one refused refuses the whole request (Kafka's
// FeatureControlManager), checked in this order:
//
//   - the upgrade type is one of the three;
//   - the level is not negative;
//   - the feature is one of the node's, and the level in its range;
//   - a lower level needs a downgrade type, a higher one the upgrade
//     type (equal levels pass either way).
//
// When a request names a feature twice the last update wins, as Kafka
// keys them by name. An applied change increments the epoch (Kafka's
// FinalizedFeaturesEpoch, here a count of changes that starts at 1) and
// is written to the levels file before Apply returns: a restart serves
// the same levels. The file is replaced whole (temporary file, fsync,
// rename, directory fsync), so a crash leaves the old levels or the new.
package features

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Spec is one feature a node supports: its range and its level until an
// update changes it.
type Spec struct {
	Name     string
	Min, Max int16
	Default  int16
}

// UpgradeType is UpdateFeatures' upgrade_type (KIP-778).
type UpgradeType int8

const (
	Upgrade         UpgradeType = 1
	SafeDowngrade   UpgradeType = 2
	UnsafeDowngrade UpgradeType = 3
)

// Update asks for feature Name at Level.
type Update struct {
	Name  string
	Level int16
	Type  UpgradeType
}

// Error is a refused update; its message is Kafka's.
type Error struct {
	Update Update
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("The update failed for all features since the following feature had an error: Invalid update version %d for feature %s. %s",
		e.Update.Level, e.Update.Name, e.Reason)
}

// Finalized is a feature's finalized level.
type Finalized struct {
	Name  string
	Level int16
}

// Levels is the finalized level of every supported feature; safe for
// concurrent use.
type Levels struct {
	specs []Spec
	path  string
	mu    sync.Mutex
	state state
}

// state is what the levels file holds.
type state struct {
	Epoch  int64            `json:"epoch"`
	Levels map[string]int16 `json:"levels"`
}

// Open returns the levels of specs, read from the file at path when it
// exists (a level out of its feature's range there is an error); "" keeps
// them in memory only.
func Open(path string, specs []Spec) (*Levels, error) {
	l := &Levels{specs: slices.Clone(specs), path: path, state: state{Epoch: 1, Levels: map[string]int16{}}}
	for _, s := range specs {
		l.state.Levels[s.Name] = s.Default
	}
	if path == "" {
		return l, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("features: %s: %w", path, err)
	}
	for name, level := range st.Levels {
		s, ok := l.spec(name)
		if !ok {
			continue // a feature this build no longer has
		}
		if level < s.Min || level > s.Max {
			return nil, fmt.Errorf("features: %s: %s at %d, outside %d-%d", path, name, level, s.Min, s.Max)
		}
		l.state.Levels[name] = level
	}
	l.state.Epoch = max(st.Epoch, 1)
	return l, nil
}

func (l *Levels) spec(name string) (Spec, bool) {
	for _, s := range l.specs {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Capped is specs with feature name's Max and Default at most limit
// when on is set (a node that serves fewer levels in some mode).
func Capped(specs []Spec, name string, limit int16, on bool) []Spec {
	out := slices.Clone(specs)
	for i := range out {
		if on && out[i].Name == name {
			out[i].Max, out[i].Default = min(out[i].Max, limit), min(out[i].Default, limit)
		}
	}
	return out
}

// Supported is every feature's supported range, in the order given to
// Open.
func (l *Levels) Supported() []Spec { return slices.Clone(l.specs) }

// Level is name's finalized level (0 for a feature not supported).
func (l *Levels) Level(name string) int16 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state.Levels[name]
}

// Finalized lists the features at a level above 0, in the order given to
// Open, and the epoch.
func (l *Levels) Finalized() ([]Finalized, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Finalized
	for _, s := range l.specs {
		if lv := l.state.Levels[s.Name]; lv > 0 {
			out = append(out, Finalized{Name: s.Name, Level: lv})
		}
	}
	return out, l.state.Epoch
}

// Apply checks updates against the node's features (hidden ones count as
// unsupported) and, unless validateOnly, applies them and persists the
// result. node names the node in Kafka's messages. A refused update is
// an *Error and nothing changes.
func (l *Levels) Apply(node int32, updates []Update, validateOnly bool, hidden func(string) bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	last := map[string]Update{}
	var order []string
	for _, u := range updates {
		if _, seen := last[u.Name]; !seen {
			order = append(order, u.Name)
		}
		last[u.Name] = u
	}
	for _, name := range order {
		if reason := l.refuse(node, last[name], hidden); reason != "" {
			return &Error{Update: last[name], Reason: reason}
		}
	}
	if validateOnly {
		return nil
	}
	next := state{Epoch: l.state.Epoch, Levels: make(map[string]int16, len(l.state.Levels))}
	for k, v := range l.state.Levels {
		next.Levels[k] = v
	}
	changed := false
	for _, name := range order {
		if next.Levels[name] != last[name].Level {
			next.Levels[name] = last[name].Level
			changed = true
		}
	}
	if !changed {
		return nil
	}
	next.Epoch++
	if err := l.save(next); err != nil {
		return err
	}
	l.state = next
	return nil
}

// refuse is why u may not be applied, "" when it may.
func (l *Levels) refuse(node int32, u Update, hidden func(string) bool) string {
	if u.Type < Upgrade || u.Type > UnsafeDowngrade {
		return "The controller does not support the given upgrade type."
	}
	if u.Level < 0 {
		return "A feature version cannot be less than 0."
	}
	s, ok := l.spec(u.Name)
	if !ok || (hidden != nil && hidden(u.Name)) {
		return fmt.Sprintf("Local controller %d does not support this feature.", node)
	}
	if u.Level < s.Min || u.Level > s.Max {
		return fmt.Sprintf("Local controller %d only supports versions %d-%d", node, s.Min, s.Max)
	}
	cur := l.state.Levels[u.Name]
	switch {
	case u.Level < cur && u.Type == Upgrade:
		return "Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."
	case u.Level > cur && u.Type != Upgrade:
		return "Can't downgrade to a newer version."
	}
	return ""
}

// save writes st to the levels file, durably, replacing the old one.
func (l *Levels) save(st state) error {
	if l.path == "" {
		return nil
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := l.path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, l.path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(l.path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
