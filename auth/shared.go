package auth

// Shared stores (credentials and ACLs shared in etcd): the credential store and the ACL store kept in a
// document outside the data directory, which several servers share (a
// cluster's etcd). The document's format is the file's (version 1).

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Shared is one document several servers share, kept current in this
// process by its implementation (cluster/authstore: one etcd key).
type Shared interface {
	// Load returns the latest document this process knows (nil: none)
	// and its version, a number that differs after every change. It is
	// on the authorization path: it must not wait on the network.
	Load() (doc []byte, version int64)
	// Update replaces the document by fn's result, atomically against
	// concurrent updates from every server: fn gets the current document
	// (nil: none) and is called again when another update won meanwhile.
	// fn's error aborts; a result equal to the current document need not
	// be written. A result larger than the implementation's bound
	// is refused with an error wrapping ErrSharedTooLarge. Once Update
	// returns nil, Load returns the document fn last returned or a later
	// one.
	Update(fn func(cur []byte) ([]byte, error)) error
}

// ErrSharedTooLarge refuses an update whose document would exceed the
// shared store's size bound (credentials and ACLs shared in etcd).
var ErrSharedTooLarge = errors.New("auth: the shared store would exceed its size limit")

// NewSharedStore returns a credential store kept in doc (credentials and ACLs shared in etcd).
func NewSharedStore(doc Shared) *Store { return &Store{shared: doc} }

// NewSharedACLStore returns an ACL store kept in doc (credentials and ACLs shared in etcd); max bounds
// the set (0: DefaultMaxACLs). A document that does not parse is an
// error: a server must not authorize against a set it cannot read.
func NewSharedACLStore(doc Shared, max int) (*ACLStore, error) {
	if max <= 0 {
		max = DefaultMaxACLs
	}
	s := &ACLStore{max: max, shared: doc}
	b, v := doc.Load()
	acls, err := decodeACLs("shared ACLs", b)
	if err != nil {
		return nil, err
	}
	s.snap.Store(newACLIndex(acls, v))
	return s, nil
}

// sharedUsers is the current users of a shared store, decoded again only
// when the document's version changed. Called with s.mu held.
func (s *Store) sharedUsers() (map[string]User, error) {
	b, v := s.shared.Load()
	if s.decoded && s.version == v {
		return s.users, nil
	}
	users, err := decodeUsers("shared credentials", b)
	if err != nil {
		return nil, err
	}
	s.users, s.version, s.decoded = users, v, true
	return users, nil
}

// updateShared is Update for a shared store: fn runs on a fresh copy of
// the document for every compare-and-swap attempt.
func (s *Store) updateShared(fn func(users map[string]User) error) error {
	return s.shared.Update(func(cur []byte) ([]byte, error) {
		users, err := decodeUsers("shared credentials", cur)
		if err != nil {
			return nil, err
		}
		if err := fn(users); err != nil {
			return nil, err
		}
		return json.Marshal(storeFile{Version: 1, Users: users})
	})
}

// sharedIndex is the current ACL index of a shared store, rebuilt when
// the document's version changed. A document that does not parse keeps
// the set last decoded (and every change fails until it is repaired).
func (s *ACLStore) sharedIndex() *aclIndex {
	ix := s.snap.Load()
	b, v := s.shared.Load()
	if v == ix.version {
		return ix
	}
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	if ix = s.snap.Load(); v == ix.version {
		return ix
	}
	acls, err := decodeACLs("shared ACLs", b)
	if err != nil {
		acls = ix.all
	}
	ix = newACLIndex(acls, v)
	s.snap.Store(ix)
	return ix
}

// replaceShared is replace for a shared store: next is computed from the
// current document on every compare-and-swap attempt.
func (s *ACLStore) replaceShared(change func(cur []ACL) ([]ACL, error)) error {
	err := s.shared.Update(func(cur []byte) ([]byte, error) {
		acls, err := decodeACLs("shared ACLs", cur)
		if err != nil {
			return nil, err
		}
		next, err := change(acls)
		if err != nil {
			return nil, err
		}
		return json.Marshal(aclFile{Version: 1, ACLs: next})
	})
	if errors.Is(err, ErrSharedTooLarge) {
		// CreateAcls answers POLICY_VIOLATION, as for the count bound.
		return fmt.Errorf("%w: %w", ErrTooManyACLs, err)
	}
	if err == nil {
		s.sharedIndex() // this change is the set to keep should a later document not parse
	}
	return err
}
