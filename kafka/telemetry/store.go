package telemetry

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
)

// StoreFile is the subscriptions' file in a data directory.
const StoreFile = "client-metrics.json"

// MaxSubscriptions bounds the CLIENT_METRICS resources kept: every
// GetTelemetrySubscriptions matches the client against all of them.
const MaxSubscriptions = 1000

// Shared is one document several servers share (a cluster's etcd key,
// cluster/authstore's Doc): Load is the latest version this process knows
// and must not wait on the network; Update replaces it by fn's result
// atomically against every server's updates, calling fn again on a
// conflict.
type Shared interface {
	Load() (doc []byte, version int64)
	Update(fn func(cur []byte) ([]byte, error)) error
}

// storeDoc is the document: each resource's configs as set (normalised
// by Parse), by resource name.
type storeDoc struct {
	Version       int                          `json:"version"`
	Subscriptions map[string]map[string]string `json:"subscriptions"`
}

// Store keeps the CLIENT_METRICS resources durably: a JSON file in the
// data directory, replaced atomically (write, fsync, rename, fsync of the
// directory), or a Shared document in a cluster. Safe for concurrent use.
type Store struct {
	path   string
	shared Shared

	mu      sync.Mutex
	subs    map[string]Subscription // parsed
	configs map[string]map[string]string
	version int64 // changes with every change of the set
	decoded int64 // the shared document's version subs is of
}

// OpenStore reads the store of dir (none yet: an empty set).
func OpenStore(dir string) (*Store, error) {
	s := &Store{path: filepath.Join(dir, StoreFile)}
	b, err := os.ReadFile(s.path)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if err := s.decode(b); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	return s, nil
}

// OpenSharedStore returns the store kept in doc. A document that does not
// parse is an error.
func OpenSharedStore(doc Shared) (*Store, error) {
	s := &Store{shared: doc}
	b, v := doc.Load()
	if err := s.decode(b); err != nil {
		return nil, fmt.Errorf("shared client metrics: %w", err)
	}
	s.decoded = v
	return s, nil
}

// decode replaces the set by document b's (nil: empty). Called with mu
// held or before the store is shared.
func (s *Store) decode(b []byte) error {
	doc := storeDoc{Subscriptions: map[string]map[string]string{}}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &doc); err != nil {
			return err
		}
	}
	subs := make(map[string]Subscription, len(doc.Subscriptions))
	for name, c := range doc.Subscriptions {
		sub, _, err := Parse(name, c)
		if err != nil {
			return fmt.Errorf("subscription %q: %w", name, err)
		}
		subs[name] = sub
	}
	if doc.Subscriptions == nil {
		doc.Subscriptions = map[string]map[string]string{}
	}
	s.subs, s.configs = subs, doc.Subscriptions
	s.version++
	return nil
}

// refresh decodes the shared document again if it changed. Called with
// mu held. A document that no longer parses leaves the last good set.
func (s *Store) refresh() {
	if s.shared == nil {
		return
	}
	b, v := s.shared.Load()
	if v == s.decoded {
		return
	}
	if s.decode(b) == nil {
		s.decoded = v
	}
}

// Snapshot returns the subscriptions and the set's version, a number that
// differs after every change.
func (s *Store) Snapshot() (map[string]Subscription, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	return s.subs, s.version
}

// Configs returns the configs set on resource name (nil: none).
func (s *Store) Configs(name string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	return s.configs[name]
}

// Names lists the resources that have configs.
func (s *Store) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	return sortedKeys(s.configs)
}

// Alter replaces resource name's configs by fn's result, validated by
// Parse; an empty result removes the resource. validateOnly checks
// without storing. fn gets a copy of the current configs.
func (s *Store) Alter(name string, fn func(cur map[string]string) (map[string]string, error), validateOnly bool) error {
	apply := func(cur storeDoc) (storeDoc, error) {
		next, err := fn(clone(cur.Subscriptions[name]))
		if err != nil {
			return cur, err
		}
		_, norm, err := Parse(name, next)
		if err != nil {
			return cur, err
		}
		if validateOnly {
			return cur, nil
		}
		subs := make(map[string]map[string]string, len(cur.Subscriptions)+1)
		for k, v := range cur.Subscriptions {
			subs[k] = v
		}
		if len(norm) == 0 {
			delete(subs, name)
		} else {
			if _, exists := subs[name]; !exists && len(subs) >= MaxSubscriptions {
				return cur, fmt.Errorf("%w: at most %d client metrics resources", kerr.PolicyViolation, MaxSubscriptions)
			}
			subs[name] = norm
		}
		return storeDoc{Version: 1, Subscriptions: subs}, nil
	}
	if s.shared != nil {
		return s.alterShared(apply, validateOnly)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next, err := apply(storeDoc{Version: 1, Subscriptions: s.configs})
	if err != nil || validateOnly {
		return err
	}
	b, err := json.Marshal(next)
	if err != nil {
		return err
	}
	if err := writeAtomic(s.path, b); err != nil {
		return fmt.Errorf("%w: storing client metrics: %v", kerr.UnknownServerError, err)
	}
	return s.decode(b)
}

func (s *Store) alterShared(apply func(storeDoc) (storeDoc, error), validateOnly bool) error {
	err := s.shared.Update(func(cur []byte) ([]byte, error) {
		doc := storeDoc{Subscriptions: map[string]map[string]string{}}
		if len(cur) > 0 {
			if err := json.Unmarshal(cur, &doc); err != nil {
				return nil, err
			}
		}
		next, err := apply(doc)
		if err != nil || validateOnly {
			return cur, err
		}
		return json.Marshal(next)
	})
	if err != nil {
		var ke *kerr.Error
		if errors.As(err, &ke) {
			return err
		}
		return fmt.Errorf("%w: storing client metrics: %v", kerr.UnknownServerError, err)
	}
	s.mu.Lock()
	s.refresh()
	s.mu.Unlock()
	return nil
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// writeAtomic replaces path by b: a new file written and synced, renamed
// over path, and the directory synced, so a crash leaves the old file or
// the new one.
func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
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
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
