package auth

// The ACL store (the durable ACL store): every ACL in one JSON file in the data directory,
// replaced atomically (temporary file, fsync, rename, fsync of the
// directory) on every change, so a crash leaves the set before or after
// the change, never a mix. Readers use an immutable snapshot and never
// wait for a writer.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// ACLFile is the store's name inside its directory.
const ACLFile = "acls.json"

// DefaultMaxACLs bounds how many ACLs the store holds (the durable ACL store).
const DefaultMaxACLs = 10000

// ErrTooManyACLs refuses a creation beyond the store's bound.
var ErrTooManyACLs = errors.New("auth: too many ACLs")

type aclFile struct {
	Version int   `json:"version"`
	ACLs    []ACL `json:"acls"`
}

// ACLStore is the durable set of ACLs. Safe for concurrent use.
type ACLStore struct {
	dir     string
	max     int
	shared  Shared     // instead of dir's file (credentials and ACLs shared in etcd)
	writeMu sync.Mutex // serializes changes; readers use snap
	snap    atomic.Pointer[aclIndex]
	// refreshMu serializes rebuilding snap from a newer shared document.
	refreshMu sync.Mutex
}

// OpenACLStore reads dir's ACL file (none: no ACLs). max bounds the set
// (0: DefaultMaxACLs).
func OpenACLStore(dir string, max int) (*ACLStore, error) {
	if max <= 0 {
		max = DefaultMaxACLs
	}
	s := &ACLStore{dir: dir, max: max}
	acls, err := readACLs(filepath.Join(dir, ACLFile))
	if err != nil {
		return nil, err
	}
	s.snap.Store(newACLIndex(acls, 0))
	return s, nil
}

func readACLs(path string) ([]ACL, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeACLs(path, b)
}

// decodeACLs decodes and validates a store's content (none: no ACLs);
// name says where it came from.
func decodeACLs(name string, b []byte) ([]ACL, error) {
	if b == nil {
		return nil, nil
	}
	var f aclFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("auth: %s: %w", name, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("auth: %s: unknown version %d", name, f.Version)
	}
	for _, a := range f.ACLs {
		if err := a.Validate(); err != nil {
			return nil, fmt.Errorf("auth: %s: %w", name, err)
		}
	}
	return f.ACLs, nil
}

// ACLs returns every ACL (shared: do not modify).
func (s *ACLStore) ACLs() []ACL { return s.index().all }

// index is the current set: the snapshot, or for a shared store the
// latest document this process knows (credentials and ACLs shared in etcd).
func (s *ACLStore) index() *aclIndex {
	if s.shared != nil {
		return s.sharedIndex()
	}
	return s.snap.Load()
}

// Describe returns the ACLs f selects.
func (s *ACLStore) Describe(f Filter) []ACL {
	var out []ACL
	for _, a := range s.ACLs() {
		if f.Matches(a) {
			out = append(out, a)
		}
	}
	return out
}

// Create adds acls (each already valid), durably; one already present is
// not added twice. Nothing is added when the bound would be exceeded.
func (s *ACLStore) Create(acls []ACL) error {
	if s.shared != nil {
		return s.replaceShared(func(cur []ACL) ([]ACL, error) {
			next, err := addACLs(cur, acls, s.max)
			if next == nil && err == nil {
				return cur, nil
			}
			return next, err
		})
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	next, err := addACLs(s.ACLs(), acls, s.max)
	if next == nil || err != nil {
		return err
	}
	return s.replace(next)
}

// addACLs is cur with acls added (nil: nothing to add), or
// ErrTooManyACLs beyond max.
func addACLs(cur, acls []ACL, max int) ([]ACL, error) {
	have := make(map[ACL]bool, len(cur))
	for _, a := range cur {
		have[a] = true
	}
	next := append([]ACL(nil), cur...)
	for _, a := range acls {
		if !have[a] {
			have[a] = true
			next = append(next, a)
		}
	}
	if len(next) == len(cur) {
		return nil, nil
	}
	if len(next) > max {
		return nil, fmt.Errorf("%w: the store holds at most %d", ErrTooManyACLs, max)
	}
	return next, nil
}

// Delete removes, durably, every ACL some filter selects, and returns
// what each filter selected.
func (s *ACLStore) Delete(filters []Filter) ([][]ACL, error) {
	if s.shared != nil {
		var matched [][]ACL
		err := s.replaceShared(func(cur []ACL) ([]ACL, error) {
			var next []ACL
			next, matched = removeACLs(cur, filters)
			return next, nil
		})
		return matched, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	next, matched := removeACLs(s.ACLs(), filters)
	if len(next) == len(s.ACLs()) {
		return matched, nil
	}
	return matched, s.replace(next)
}

// removeACLs is cur without the ACLs some filter selects, and what each
// filter selected.
func removeACLs(cur []ACL, filters []Filter) (next []ACL, matched [][]ACL) {
	matched = make([][]ACL, len(filters))
	for _, a := range cur {
		hit := false
		for i, f := range filters {
			if f.Matches(a) {
				matched[i], hit = append(matched[i], a), true
			}
		}
		if !hit {
			next = append(next, a)
		}
	}
	return next, matched
}

// replace writes next to the file, then makes it the snapshot: readers
// never see a set that is not on disk.
func (s *ACLStore) replace(next []ACL) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(aclFile{Version: 1, ACLs: next}, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(s.dir, ACLFile, append(b, '\n')); err != nil {
		return err
	}
	s.snap.Store(newACLIndex(next, 0))
	return nil
}

// aclIndex is one immutable set of ACLs, indexed for authorization:
// LITERAL ACLs by resource, PREFIXED ones by resource type.
type aclIndex struct {
	version  int64 // of the shared document it was built from
	all      []ACL
	literal  map[resourceKey][]ACL
	prefixed map[ResourceType][]ACL
}

type resourceKey struct {
	rt   ResourceType
	name string
}

func newACLIndex(acls []ACL, version int64) *aclIndex {
	ix := &aclIndex{version: version, all: acls, literal: map[resourceKey][]ACL{}, prefixed: map[ResourceType][]ACL{}}
	for _, a := range acls {
		if a.PatternType == PatternPrefixed {
			ix.prefixed[a.ResourceType] = append(ix.prefixed[a.ResourceType], a)
			continue
		}
		k := resourceKey{a.ResourceType, a.ResourceName}
		ix.literal[k] = append(ix.literal[k], a)
	}
	return ix
}

// matching calls fn with every ACL whose pattern applies to the resource
// (rt, name): its LITERAL name, the LITERAL wildcard, PREFIXED prefixes.
func (ix *aclIndex) matching(rt ResourceType, name string, fn func(ACL) bool) {
	for _, a := range ix.literal[resourceKey{rt, name}] {
		if !fn(a) {
			return
		}
	}
	if name != Wildcard {
		for _, a := range ix.literal[resourceKey{rt, Wildcard}] {
			if !fn(a) {
				return
			}
		}
	}
	for _, a := range ix.prefixed[rt] {
		if patternCovers(a, name) && !fn(a) {
			return
		}
	}
}
