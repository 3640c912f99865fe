package auth

// SCRAM (RFC 5802) with SHA-256 and SHA-512 (RFC 7677), server side.

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"time"
)

// Mechanism names, as sasl.enabled.mechanisms spells them.
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
)

// Iteration bounds Kafka accepts for SCRAM credentials.
const (
	MinIterations     = 4096
	MaxIterations     = 16384
	DefaultIterations = 4096
)

// scramHash is one SCRAM mechanism's hash.
type scramHash struct {
	name string
	new  func() hash.Hash
	// kafkaType is the mechanism's number in the UserScramCredentials APIs.
	kafkaType int8
}

var scramHashes = []scramHash{
	{name: ScramSHA256, new: sha256.New, kafkaType: 1},
	{name: ScramSHA512, new: sha512.New, kafkaType: 2},
}

func scramByName(name string) (scramHash, bool) {
	for _, h := range scramHashes {
		if h.name == name {
			return h, true
		}
	}
	return scramHash{}, false
}

// IsScram reports whether name is a SCRAM mechanism kgateway implements.
func IsScram(name string) bool { _, ok := scramByName(name); return ok }

// ScramMechanismType is name's number in the UserScramCredentials APIs
// (1 SCRAM-SHA-256, 2 SCRAM-SHA-512), 0 if none.
func ScramMechanismType(name string) int8 {
	h, _ := scramByName(name)
	return h.kafkaType
}

// ScramMechanismName is the name of a UserScramCredentials mechanism
// number, "" if unknown.
func ScramMechanismName(t int8) string {
	for _, h := range scramHashes {
		if h.kafkaType == t {
			return h.name
		}
	}
	return ""
}

// Credential is what the store keeps of one user's password for one SCRAM
// mechanism (the SCRAM credential store): never the password, only what RFC 5802 section 3
// derives from it.
type Credential struct {
	Salt       []byte `json:"salt"`
	Iterations int    `json:"iterations"`
	StoredKey  []byte `json:"stored_key"`
	ServerKey  []byte `json:"server_key"`
}

// CheckIterations is nil when n is within Kafka's bounds.
func CheckIterations(n int) error {
	if n < MinIterations || n > MaxIterations {
		return fmt.Errorf("iterations %d outside [%d, %d]", n, MinIterations, MaxIterations)
	}
	return nil
}

// NewCredential derives mech's credential from a password with a fresh
// random salt.
func NewCredential(mech string, password []byte, iterations int) (Credential, error) {
	salt := make([]byte, 32)
	rand.Read(salt)
	return deriveCredential(mech, password, salt, iterations)
}

func deriveCredential(mech string, password, salt []byte, iterations int) (Credential, error) {
	h, ok := scramByName(mech)
	if !ok {
		return Credential{}, fmt.Errorf("%w: %q", ErrUnsupportedMechanism, mech)
	}
	salted, err := pbkdf2.Key(h.new, string(password), salt, iterations, h.new().Size())
	if err != nil {
		return Credential{}, err
	}
	return CredentialFromSalted(mech, salted, salt, iterations)
}

// CredentialFromSalted derives a credential from a salted password, which
// is what AlterUserScramCredentials carries.
func CredentialFromSalted(mech string, salted, salt []byte, iterations int) (Credential, error) {
	h, ok := scramByName(mech)
	if !ok {
		return Credential{}, fmt.Errorf("%w: %q", ErrUnsupportedMechanism, mech)
	}
	clientKey := hmacOf(h.new, salted, []byte("Client Key"))
	hh := h.new()
	hh.Write(clientKey)
	return Credential{
		Salt: bytes.Clone(salt), Iterations: iterations,
		StoredKey: hh.Sum(nil),
		ServerKey: hmacOf(h.new, salted, []byte("Server Key")),
	}, nil
}

// verifyPassword reports whether password derives c (PLAIN, the SCRAM credential store).
func verifyPassword(mech string, c Credential, password []byte) bool {
	d, err := deriveCredential(mech, password, c.Salt, c.Iterations)
	return err == nil && subtle.ConstantTimeCompare(d.StoredKey, c.StoredKey) == 1
}

func hmacOf(h func() hash.Hash, key, msg []byte) []byte {
	m := hmac.New(h, key)
	m.Write(msg)
	return m.Sum(nil)
}

// scramSession is one server-side SCRAM exchange: client-first,
// server-first, client-final, server-final (RFC 5802 section 5). Any
// message out of order or malformed fails it (the failed-authentication delay).
type scramSession struct {
	h     scramHash
	creds CredentialSource
	// tokens are the delegation tokens (nil: none, token.go); owner and
	// token say which one authenticated.
	tokens TokenSource
	owner  string
	expiry time.Time
	token  bool
	// nonce makes the server's part of the nonce (a test replaces it).
	nonce func() string

	step        int
	user        string
	cred        Credential
	gs2Header   string
	clientFirst string // client-first-message-bare
	serverFirst string
	fullNonce   string
}

// CredentialSource looks up a user's credential for a mechanism.
type CredentialSource interface {
	Lookup(user, mech string) (Credential, bool, error)
}

func newScramSession(h scramHash, creds CredentialSource, tokens TokenSource) *scramSession {
	return &scramSession{h: h, creds: creds, tokens: tokens, nonce: randomNonce}
}

func randomNonce() string {
	b := make([]byte, 24)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *scramSession) Mechanism() string { return s.h.name }
func (s *scramSession) User() string      { return s.user }

// Step takes the client's next message and returns the server's answer;
// done is true once the client is authenticated.
func (s *scramSession) Step(msg []byte) (challenge []byte, done bool, err error) {
	s.step++
	switch s.step {
	case 1:
		out, err := s.clientFirstMessage(string(msg))
		return []byte(out), false, err
	case 2:
		out, err := s.clientFinalMessage(string(msg))
		return []byte(out), err == nil, err
	default:
		return nil, false, fmt.Errorf("%w: message after the exchange ended", ErrMalformed)
	}
}

func (s *scramSession) clientFirstMessage(msg string) (string, error) {
	// gs2-header: cbind-flag "," [authzid] ","
	flag, rest, ok := strings.Cut(msg, ",")
	if !ok {
		return "", fmt.Errorf("%w: no gs2 header", ErrMalformed)
	}
	switch {
	case flag == "n" || flag == "y":
	case strings.HasPrefix(flag, "p="):
		return "", fmt.Errorf("%w: channel binding is not supported", ErrMalformed)
	default:
		return "", fmt.Errorf("%w: bad channel binding flag", ErrMalformed)
	}
	authzid, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return "", fmt.Errorf("%w: no gs2 header", ErrMalformed)
	}
	attrs, err := parseAttrs(bare)
	if err != nil {
		return "", err
	}
	if len(attrs) < 2 || attrs[0].k != 'n' || attrs[1].k != 'r' {
		return "", fmt.Errorf("%w: client-first-message must start n=,r=", ErrMalformed)
	}
	user, err := unescapeSaslName(attrs[0].v)
	if err != nil {
		return "", err
	}
	if authzid != "" {
		z, err := unescapeSaslName(strings.TrimPrefix(authzid, "a="))
		if err != nil || !strings.HasPrefix(authzid, "a=") || z != user {
			return "", fmt.Errorf("%w: authorization id differs from the user", ErrAuthFailed)
		}
	}
	if attrs[1].v == "" {
		return "", fmt.Errorf("%w: empty nonce", ErrMalformed)
	}
	s.user = user
	cred, ok, err := s.lookup(user, tokenAuth(attrs[2:]))
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%w: unknown user or token", ErrAuthFailed)
	}
	s.cred = cred
	s.gs2Header = flag + "," + authzid + ","
	s.clientFirst = bare
	s.fullNonce = attrs[1].v + s.nonce()
	s.serverFirst = "r=" + s.fullNonce + ",s=" + base64.StdEncoding.EncodeToString(cred.Salt) +
		",i=" + strconv.Itoa(cred.Iterations)
	return s.serverFirst, nil
}

func (s *scramSession) clientFinalMessage(msg string) (string, error) {
	attrs, err := parseAttrs(msg)
	if err != nil {
		return "", err
	}
	n := len(attrs)
	if n < 3 || attrs[0].k != 'c' || attrs[1].k != 'r' || attrs[n-1].k != 'p' {
		return "", fmt.Errorf("%w: client-final-message must be c=,r=,...,p=", ErrMalformed)
	}
	if attrs[0].v != base64.StdEncoding.EncodeToString([]byte(s.gs2Header)) {
		return "", fmt.Errorf("%w: channel binding differs from the gs2 header", ErrMalformed)
	}
	// The nonce must end with the one the server sent, as Kafka checks:
	// librdkafka sends its own nonce once more in front of it. The
	// server's fresh part is there either way.
	if got := attrs[1].v; len(got) < len(s.fullNonce) ||
		subtle.ConstantTimeCompare([]byte(got[len(got)-len(s.fullNonce):]), []byte(s.fullNonce)) != 1 {
		return "", fmt.Errorf("%w: wrong nonce", ErrAuthFailed)
	}
	proof, err := base64.StdEncoding.DecodeString(attrs[n-1].v)
	if err != nil || len(proof) != len(s.cred.StoredKey) {
		return "", fmt.Errorf("%w: bad proof encoding", ErrMalformed)
	}
	withoutProof := msg[:strings.LastIndex(msg, ",p=")]
	authMsg := []byte(s.clientFirst + "," + s.serverFirst + "," + withoutProof)
	clientKey := hmacOf(s.h.new, s.cred.StoredKey, authMsg) // ClientSignature
	for i := range clientKey {
		clientKey[i] ^= proof[i]
	}
	hh := s.h.new()
	hh.Write(clientKey)
	if subtle.ConstantTimeCompare(hh.Sum(nil), s.cred.StoredKey) != 1 {
		return "", fmt.Errorf("%w: wrong password", ErrAuthFailed)
	}
	return "v=" + base64.StdEncoding.EncodeToString(hmacOf(s.h.new, s.cred.ServerKey, authMsg)), nil
}

// attr is one "k=value" of a SCRAM message.
type attr struct {
	k   byte
	v   string
	raw string
}

func parseAttrs(msg string) ([]attr, error) {
	var out []attr
	for _, part := range strings.Split(msg, ",") {
		if len(part) < 2 || part[1] != '=' {
			// Extensions (Kafka's "tokenauth=true") are name=value.
			if i := strings.IndexByte(part, '='); i > 1 {
				out = append(out, attr{raw: part})
				continue
			}
			return nil, fmt.Errorf("%w: bad attribute", ErrMalformed)
		}
		out = append(out, attr{k: part[0], v: part[2:], raw: part})
	}
	return out, nil
}

// unescapeSaslName decodes "=2C" and "=3D" (RFC 5802 section 5.1); any
// other "=" is malformed.
func unescapeSaslName(s string) (string, error) {
	if !strings.Contains(s, "=") {
		if s == "" {
			return "", fmt.Errorf("%w: empty user name", ErrMalformed)
		}
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", fmt.Errorf("%w: bad escape in user name", ErrMalformed)
		}
		i += 2
	}
	return b.String(), nil
}

// Errors of an exchange. Each fails the authentication (the failed-authentication delay); the kafka
// front end maps them to Kafka error codes.
var (
	ErrAuthFailed           = errors.New("authentication failed")
	ErrMalformed            = errors.New("malformed SASL message")
	ErrUnsupportedMechanism = errors.New("unsupported SASL mechanism")
)

// ScramKeySize is the size of mech's keys and salted password (0 if mech
// is not SCRAM).
func ScramKeySize(mech string) int {
	h, ok := scramByName(mech)
	if !ok {
		return 0
	}
	return h.new().Size()
}
