package token

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kgateway/kgateway/auth"
)

// Defaults of Config: Kafka's for the times, kgateway's for the bounds.
const (
	DefaultMaxLifetime     = 7 * 24 * time.Hour // delegation.token.max.lifetime.ms
	DefaultExpiryTime      = 24 * time.Hour     // delegation.token.expiry.time.ms
	DefaultMaxPerPrincipal = 100                // delegation.tokens.max.per.principal
	DefaultMax             = 2000               // delegation.tokens.max
)

// Config configures the tokens.
type Config struct {
	// Secret is delegation.token.secret.key (alias
	// delegation.token.master.key): the HMAC key; empty: tokens are
	// disabled (DELEGATION_TOKEN_AUTH_DISABLED).
	Secret string
	// MaxLifetime is delegation.token.max.lifetime.ms and ExpiryTime
	// delegation.token.expiry.time.ms (zero: the defaults).
	MaxLifetime, ExpiryTime time.Duration
	// MaxPerPrincipal bounds the tokens one principal requested that
	// still exist, Max all tokens (zero: the defaults).
	MaxPerPrincipal, Max int
	// ExpiryCheck is delegation.token.expiry.check.interval.ms: how
	// often Start's sweeps remove expired tokens (zero: DefaultExpiryCheck).
	ExpiryCheck time.Duration
}

// Info is one token as stored: never its HMAC.
type Info struct {
	ID        string   `json:"id"`
	Owner     string   `json:"owner"`     // a principal, "User:alice"
	Requester string   `json:"requester"` // who created it
	Renewers  []string `json:"renewers,omitempty"`
	IssueMs   int64    `json:"issue_ms"`
	ExpiryMs  int64    `json:"expiry_ms"`
	MaxMs     int64    `json:"max_ms"`
}

// expired reports whether the token is past its expiry or max timestamp
// at now (Kafka: either earlier than now).
func (t Info) expired(nowMs int64) bool { return t.MaxMs < nowMs || t.ExpiryMs < nowMs }

// ownerOrRenewer is Kafka's TokenInformation.ownerOrRenewer: the owner,
// the requester or a renewer.
func (t Info) ownerOrRenewer(p string) bool {
	return t.Owner == p || t.Requester == p || contains(t.Renewers, p)
}

// mayRenew: renew and expire need the owner or a renewer.
func (t Info) mayRenew(p string) bool { return t.Owner == p || contains(t.Renewers, p) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// storeDoc is the document's format.
type storeDoc struct {
	Version int             `json:"version"`
	Tokens  map[string]Info `json:"tokens"`
}

// Manager keeps the tokens and answers the token APIs. A nil Manager
// answers as one without a secret. Safe for concurrent use.
type Manager struct {
	cfg Config
	doc Doc
	key []byte
	now func() time.Time

	stop, done chan struct{} // of Start's sweeps
	closeOnce  sync.Once

	mu      sync.Mutex
	decoded int64 // the document version tokens is of
	loaded  bool
	tokens  map[string]Info
	byHMAC  map[string]string // base64 HMAC to id
	creds   map[credKey]auth.Credential
}

type credKey struct{ id, mech string }

// New returns the tokens kept in doc. A document that does not parse is
// an error.
func New(cfg Config, doc Doc) (*Manager, error) {
	if cfg.MaxLifetime <= 0 {
		cfg.MaxLifetime = DefaultMaxLifetime
	}
	if cfg.ExpiryTime <= 0 {
		cfg.ExpiryTime = DefaultExpiryTime
	}
	if cfg.MaxPerPrincipal <= 0 {
		cfg.MaxPerPrincipal = DefaultMaxPerPrincipal
	}
	if cfg.Max <= 0 {
		cfg.Max = DefaultMax
	}
	m := &Manager{cfg: cfg, doc: doc, key: []byte(cfg.Secret), now: time.Now}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, v := doc.Load()
	tokens, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("delegation tokens: %w", err)
	}
	m.index(tokens, v)
	return m, nil
}

// Enabled reports whether tokens are on (a secret is set).
func (m *Manager) Enabled() bool { return m != nil && len(m.key) > 0 }

func decode(b []byte) (map[string]Info, error) {
	d := storeDoc{Tokens: map[string]Info{}}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, err
		}
		if d.Version != 1 {
			return nil, fmt.Errorf("unknown version %d", d.Version)
		}
	}
	if d.Tokens == nil {
		d.Tokens = map[string]Info{}
	}
	return d.Tokens, nil
}

// HMAC is token id's HMAC-SHA512 keyed with the secret's UTF-8 bytes, as
// Kafka's DelegationTokenManager.createHmac.
func HMAC(id, secret string) []byte {
	mac := hmac.New(sha512.New, []byte(secret))
	mac.Write([]byte(id))
	return mac.Sum(nil)
}

// index makes tokens (of document version v) the current set: the HMAC
// index is rebuilt, and credentials of tokens gone are dropped. Called
// with mu held.
func (m *Manager) index(tokens map[string]Info, v int64) {
	m.tokens, m.decoded, m.loaded = tokens, v, true
	m.byHMAC = make(map[string]string, len(tokens))
	for id := range tokens {
		m.byHMAC[base64.StdEncoding.EncodeToString(HMAC(id, m.cfg.Secret))] = id
	}
	for k := range m.creds {
		if _, ok := tokens[k.id]; !ok {
			delete(m.creds, k)
		}
	}
}

// current is the set of the latest document this process knows. Called
// with mu held. A document that no longer parses keeps the last set.
func (m *Manager) current() map[string]Info {
	b, v := m.doc.Load()
	if m.loaded && v == m.decoded {
		return m.tokens
	}
	if tokens, err := decode(b); err == nil {
		m.index(tokens, v)
	}
	return m.tokens
}

// lookupHMAC is the live token whose HMAC is h.
func (m *Manager) lookupHMAC(h []byte) (Info, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	tokens := m.current()
	id, ok := m.byHMAC[base64.StdEncoding.EncodeToString(h)]
	if !ok {
		return Info{}, false
	}
	t, ok := tokens[id]
	return t, ok
}

// snapshot is every token, live or not, in id order.
func (m *Manager) snapshot() []Info {
	m.mu.Lock()
	defer m.mu.Unlock()
	tokens := m.current()
	out := make([]Info, 0, len(tokens))
	for _, t := range tokens {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// errBound refuses a token beyond a bound (POLICY_VIOLATION).
var errBound = errors.New("delegation token bound reached")

// update changes the stored set: fn gets a copy of the current set with
// the expired tokens already removed (so they go at every change).
func (m *Manager) update(fn func(tokens map[string]Info, nowMs int64) error) error {
	nowMs := m.now().UnixMilli()
	err := m.doc.Update(func(cur []byte) ([]byte, error) {
		tokens, err := decode(cur)
		if err != nil {
			return nil, err
		}
		for id, t := range tokens {
			if t.expired(nowMs) {
				delete(tokens, id)
			}
		}
		if err := fn(tokens, nowMs); err != nil {
			return nil, err
		}
		return json.Marshal(storeDoc{Version: 1, Tokens: tokens})
	})
	if errors.Is(err, auth.ErrSharedTooLarge) {
		return fmt.Errorf("%w: %w", errBound, err)
	}
	return err
}

// newID is a random Kafka Uuid as Uuid.toString writes it: 16 bytes in
// URL-safe base64 without padding; like Kafka's randomUuid, never one
// starting with "-".
func newID() string {
	for {
		b := make([]byte, 16)
		rand.Read(b)
		if s := base64.RawURLEncoding.EncodeToString(b); !strings.HasPrefix(s, "-") {
			return s
		}
	}
}

// TokenCredential is auth.TokenSource: the SCRAM credential of live token
// id for mech, derived once per token and mechanism from the token's
// HMAC in base64 (the password a client proves) at Kafka's minimum
// iterations, as Kafka's DelegationTokenManager prepares its cache.
func (m *Manager) TokenCredential(id, mech string) (auth.Credential, string, time.Time, bool) {
	if !m.Enabled() {
		return auth.Credential{}, "", time.Time{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.current()[id]
	if !ok || t.expired(m.now().UnixMilli()) {
		return auth.Credential{}, "", time.Time{}, false
	}
	_, owner, _ := strings.Cut(t.Owner, ":")
	expiry := time.UnixMilli(min(t.ExpiryMs, t.MaxMs))
	k := credKey{id, mech}
	if c, ok := m.creds[k]; ok {
		return c, owner, expiry, true
	}
	pw := base64.StdEncoding.EncodeToString(HMAC(id, m.cfg.Secret))
	c, err := auth.NewCredential(mech, []byte(pw), auth.MinIterations)
	if err != nil {
		return auth.Credential{}, "", time.Time{}, false
	}
	if m.creds == nil {
		m.creds = map[credKey]auth.Credential{}
	}
	m.creds[k] = c
	return c, owner, expiry, true
}

var _ auth.TokenSource = (*Manager)(nil)

// DefaultExpiryCheck is delegation.token.expiry.check.interval.ms'
// default: how often expired tokens are removed from the store.
const DefaultExpiryCheck = time.Hour

// Sweep removes the expired tokens from the store (as Kafka's controller
// does every delegation.token.expiry.check.interval.ms); they are gone
// for every other purpose already.
func (m *Manager) Sweep() error {
	if m == nil {
		return nil
	}
	nowMs := m.now().UnixMilli()
	any := false
	for _, t := range m.snapshot() {
		any = any || t.expired(nowMs)
	}
	if !any {
		return nil
	}
	return m.update(func(map[string]Info, int64) error { return nil })
}

// Start sweeps every interval (zero: DefaultExpiryCheck) until Close.
func (m *Manager) Start(interval time.Duration) {
	if interval <= 0 {
		interval = DefaultExpiryCheck
	}
	m.stop = make(chan struct{})
	m.done = make(chan struct{})
	go func() {
		defer close(m.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.Sweep() // a failed sweep is retried at the next tick
			}
		}
	}()
}

// Close stops the sweeps Start began.
func (m *Manager) Close() {
	if m == nil || m.stop == nil {
		return
	}
	m.closeOnce.Do(func() { close(m.stop) })
	<-m.done
}
