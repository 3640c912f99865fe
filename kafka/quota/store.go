package quota

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/kgateway/kgateway/auth"
)

// File is the store's name in the data directory.
const File = "quotas.json"

// fileEntry is one entity of the stored document: its components (a null
// name is the default) and its quotas.
type fileEntry struct {
	Entity map[string]*string `json:"entity"`
	Values Values             `json:"values"`
}

type storeFile struct {
	Version int         `json:"version"`
	Entries []fileEntry `json:"entries"`
}

func encode(q Quotas) ([]byte, error) {
	f := storeFile{Version: 1, Entries: []fileEntry{}}
	for _, en := range q.Describe(Filter{}) {
		m := map[string]*string{}
		for _, c := range en.Entity.Components() {
			m[c.Type] = c.Name
		}
		f.Entries = append(f.Entries, fileEntry{Entity: m, Values: q[en.Entity]})
	}
	return json.MarshalIndent(f, "", "  ")
}

func decode(name string, b []byte) (Quotas, error) {
	q := Quotas{}
	if b == nil {
		return q, nil
	}
	var f storeFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("quota: %s: %w", name, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("quota: %s: unknown version %d", name, f.Version)
	}
	for _, fe := range f.Entries {
		var cs []Component
		for t, n := range fe.Entity {
			cs = append(cs, Component{Type: t, Name: n})
		}
		e, err := ParseEntity(cs)
		if err != nil {
			return nil, fmt.Errorf("quota: %s: %s", name, err.Msg)
		}
		if len(fe.Values) > 0 {
			q[e] = fe.Values
		}
	}
	return q, nil
}

// Store is the durable quota configuration: one JSON document, a file in
// the data directory replaced atomically (temporary file, fsync, rename,
// fsync of the directory), or a document several servers share (a
// cluster's etcd key, auth.Shared). Readers use an immutable snapshot.
// Safe for concurrent use.
type Store struct {
	dir    string
	shared auth.Shared

	mu   sync.Mutex // serializes file changes
	snap atomic.Pointer[snapshot]
}

type snapshot struct {
	q       Quotas
	version int64 // of the shared document q was decoded from
}

// OpenStore reads dir's quota file (none: no quotas).
func OpenStore(dir string) (*Store, error) {
	s := &Store{dir: dir}
	b, err := os.ReadFile(filepath.Join(dir, File))
	if errors.Is(err, fs.ErrNotExist) {
		b, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	q, err := decode(filepath.Join(dir, File), b)
	if err != nil {
		return nil, err
	}
	s.snap.Store(&snapshot{q: q})
	return s, nil
}

// NewSharedStore returns a store kept in doc. A document that does not
// parse is an error.
func NewSharedStore(doc auth.Shared) (*Store, error) {
	s := &Store{shared: doc}
	b, v := doc.Load()
	q, err := decode("shared quotas", b)
	if err != nil {
		return nil, err
	}
	s.snap.Store(&snapshot{q: q, version: v})
	return s, nil
}

// NewMemStore returns a store that keeps nothing on disk (tests).
func NewMemStore() *Store {
	s := &Store{}
	s.snap.Store(&snapshot{q: Quotas{}})
	return s
}

// Quotas is the current configuration (do not modify). A shared store's
// is the latest document this process knows; one that does not parse
// leaves the last one decoded.
func (s *Store) Quotas() Quotas {
	sn := s.snap.Load()
	if s.shared == nil {
		return sn.q
	}
	b, v := s.shared.Load()
	if v == sn.version {
		return sn.q
	}
	q, err := decode("shared quotas", b)
	if err != nil {
		return sn.q
	}
	s.snap.CompareAndSwap(sn, &snapshot{q: q, version: v})
	return q
}

// Alter applies alts (AlterClientQuotas) and returns one result per
// entity. validateOnly checks and changes nothing. The accepted
// alterations are written together, durably, before Alter returns; a
// write that fails fails every entity that was to change.
func (s *Store) Alter(alts []Alteration, validateOnly bool) ([]Result, error) {
	if validateOnly {
		_, res := s.Quotas().apply(alts)
		return res, nil
	}
	if s.shared != nil {
		var res []Result
		err := s.shared.Update(func(cur []byte) ([]byte, error) {
			q, err := decode("shared quotas", cur)
			if err != nil {
				return nil, err
			}
			var next Quotas
			next, res = q.apply(alts)
			return encode(next)
		})
		if err == nil {
			s.Quotas()
		}
		return res, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next, res := s.snap.Load().q.apply(alts)
	if s.dir != "" {
		b, err := encode(next)
		if err != nil {
			return nil, err
		}
		if err := writeAtomic(s.dir, File, append(b, '\n')); err != nil {
			return nil, err
		}
	}
	s.snap.Store(&snapshot{q: next})
	return res, nil
}

// writeAtomic writes name in dir so that a crash leaves the old or the
// new file: a temporary file, fsync, rename over name, fsync of dir.
func writeAtomic(dir, name string, b []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, name+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
