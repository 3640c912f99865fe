package auth

import (
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// memCreds is a CredentialSource in memory.
type memCreds map[string]User

func (m memCreds) Lookup(user, mech string) (Credential, bool, error) {
	c, ok := m[user][mech]
	return c, ok, nil
}

// rfc7677 is the SCRAM-SHA-256 example of RFC 7677 section 3: user
// "user", password "pencil".
var rfc7677 = struct {
	salt, clientFirst, serverNonce, serverFirst, clientFinal, serverFinal string
}{
	salt:        "W22ZaJ0SNY7soEsUEjb6gQ==",
	clientFirst: "n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
	serverNonce: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
	serverFirst: "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
	clientFinal: "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
	serverFinal: "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
}

func rfcCreds(t testing.TB) memCreds {
	salt, _ := base64.StdEncoding.DecodeString(rfc7677.salt)
	c, err := deriveCredential(ScramSHA256, []byte("pencil"), salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	return memCreds{"user": {ScramSHA256: c}}
}

func rfcSession(creds CredentialSource) *scramSession {
	s := newScramSession(scramHashes[0], creds, nil)
	s.nonce = func() string { return rfc7677.serverNonce }
	return s
}

// The server side reproduces RFC 7677's exchange byte for byte.
func TestScramRFC7677(t *testing.T) {
	s := rfcSession(rfcCreds(t))
	out, done, err := s.Step([]byte(rfc7677.clientFirst))
	if err != nil || done || string(out) != rfc7677.serverFirst {
		t.Fatalf("server-first %q done %v err %v, want %q", out, done, err, rfc7677.serverFirst)
	}
	out, done, err = s.Step([]byte(rfc7677.clientFinal))
	if err != nil || !done || string(out) != rfc7677.serverFinal {
		t.Fatalf("server-final %q done %v err %v, want %q", out, done, err, rfc7677.serverFinal)
	}
	if s.User() != "user" {
		t.Fatalf("user %q", s.User())
	}
	// The SCRAM credential store: what is stored is not the password, and derives from it.
	c := rfcCreds(t)["user"][ScramSHA256]
	if h := sha256.Sum256([]byte("pencil")); strings.Contains(string(c.StoredKey)+string(c.ServerKey), "pencil") || string(c.StoredKey) == string(h[:]) {
		t.Fatal("credential holds the password")
	}
}

// The failed-authentication delay: malformed, out-of-order and forged messages fail the exchange.
func TestScramBadMessages(t *testing.T) {
	creds := rfcCreds(t)
	wrongNonce := strings.Replace(rfc7677.clientFinal, "k0,p=", "k1,p=", 1)
	wrongProof := rfc7677.clientFinal[:len(rfc7677.clientFinal)-6] + "AAAAA="
	for _, tc := range []struct {
		name  string
		steps []string
		want  error
	}{
		{"client-final first", []string{rfc7677.clientFinal}, ErrMalformed},
		{"no gs2 header", []string{"n=user,r=abc"}, ErrMalformed},
		{"channel binding", []string{"p=tls-unique,,n=user,r=abc"}, ErrMalformed},
		{"bad escape", []string{"n,,n=us=er,r=abc"}, ErrMalformed},
		{"no nonce", []string{"n,,n=user"}, ErrMalformed},
		{"empty", []string{""}, ErrMalformed},
		{"unknown user", []string{"n,,n=nobody,r=abc"}, ErrAuthFailed},
		{"other authzid", []string{"n,a=admin,n=user,r=abc"}, ErrAuthFailed},
		{"delegation token without tokens", []string{"n,,n=user,r=abc,tokenauth=true"}, ErrAuthFailed},
		{"wrong nonce", []string{rfc7677.clientFirst, wrongNonce}, ErrAuthFailed},
		{"wrong proof", []string{rfc7677.clientFirst, wrongProof}, ErrAuthFailed},
		{"bad proof encoding", []string{rfc7677.clientFirst, rfc7677.clientFinal[:len(rfc7677.clientFinal)-1] + "!"}, ErrMalformed},
		{"client-first twice", []string{rfc7677.clientFirst, rfc7677.clientFirst}, ErrMalformed},
		{"third message", []string{rfc7677.clientFirst, rfc7677.clientFinal, "x"}, ErrMalformed},
		{"channel binding changed", []string{rfc7677.clientFirst, strings.Replace(rfc7677.clientFinal, "c=biws", "c=eSws", 1)}, ErrMalformed},
	} {
		s := rfcSession(creds)
		var err error
		for _, m := range tc.steps {
			if _, _, err = s.Step([]byte(m)); err != nil {
				break
			}
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
}

// PLAIN checks the password against the same stored credential (the SCRAM credential store).
func TestPlainAgainstScramCredential(t *testing.T) {
	creds := rfcCreds(t)
	for _, tc := range []struct {
		token string
		ok    bool
	}{
		{"\x00user\x00pencil", true},
		{"user\x00user\x00pencil", true},
		{"\x00user\x00pencil2", false},
		{"\x00nobody\x00pencil", false},
		{"admin\x00user\x00pencil", false},
		{"\x00user", false},
		{"\x00user\x00", false},
	} {
		s, _ := NewSession(Plain, creds, Client{})
		_, done, err := s.Step([]byte(tc.token))
		if (err == nil && done) != tc.ok {
			t.Errorf("%q: done %v err %v, want ok %v", tc.token, done, err, tc.ok)
		}
	}
}

// SASL names escape "," and "=".
func TestScramEscapedUser(t *testing.T) {
	c, err := NewCredential(ScramSHA512, []byte("pw"), MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	s := newScramSession(scramHashes[1], memCreds{"a,b=c": {ScramSHA512: c}}, nil)
	if _, _, err := s.Step([]byte("n,,n=a=2Cb=3Dc,r=xyz")); err != nil || s.User() != "a,b=c" {
		t.Fatalf("user %q err %v", s.User(), err)
	}
}

// librdkafka repeats its own nonce before the server's in client-final;
// Kafka accepts a nonce that ends with the server's, and so does
// kgateway. One that does not end with it is refused.
func TestScramNonceSuffix(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString(rfc7677.salt)
	salted, _ := pbkdf2.Key(sha256.New, "pencil", salt, 4096, 32)
	clientKey := hmacOf(sha256.New, salted, []byte("Client Key"))
	storedKey := sha256.Sum256(clientKey)
	final := func(nonce string) string {
		withoutProof := "c=biws,r=" + nonce
		authMsg := "n=user,r=rOprNGfwEbeRWgbNEkqO," + rfc7677.serverFirst + "," + withoutProof
		proof := hmacOf(sha256.New, storedKey[:], []byte(authMsg))
		for i := range proof {
			proof[i] ^= clientKey[i]
		}
		return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof)
	}
	full := "rOprNGfwEbeRWgbNEkqO" + rfc7677.serverNonce
	for _, tc := range []struct {
		nonce string
		ok    bool
	}{
		{full, true},
		{"rOprNGfwEbeRWgbNEkqO" + full, true},
		{full + "x", false},
		{full[1:], false},
	} {
		s := rfcSession(rfcCreds(t))
		if _, _, err := s.Step([]byte(rfc7677.clientFirst)); err != nil {
			t.Fatal(err)
		}
		_, done, err := s.Step([]byte(final(tc.nonce)))
		if (err == nil && done) != tc.ok {
			t.Errorf("nonce %q: done %v err %v, want ok %v", tc.nonce, done, err, tc.ok)
		}
	}
}
