package auth

import (
	"bytes"
	"testing"
)

// FuzzSASLExchange feeds arbitrary client messages to each mechanism's
// server side: it never panics, and never authenticates a client that
// does not know the password (the failed-authentication delay). The credential uses one iteration so
// that an execution stays cheap.
func FuzzSASLExchange(f *testing.F) {
	f.Add(uint8(0), []byte(rfc7677.clientFirst), []byte(rfc7677.clientFinal), []byte(nil))
	f.Add(uint8(1), []byte("n,,n=user,r=abc"), []byte("c=biws,r=abc,p=AAAA"), []byte("x"))
	f.Add(uint8(2), []byte("\x00user\x00pencil"), []byte(nil), []byte(nil))
	f.Add(uint8(2), []byte("\x00user\x00wrong"), []byte("\x00user\x00pencil"), []byte(nil))
	f.Add(uint8(0), []byte("n,a=user,n=user,r=abc,ext=1"), []byte("c=bixhPXVzZXIs,r=abc,x=y,p=AAAA"), []byte(nil))
	creds := memCreds{"user": {}}
	for _, h := range scramHashes {
		c, err := deriveCredential(h.name, []byte("pencil"), []byte("salt"), 1)
		if err != nil {
			f.Fatal(err)
		}
		creds["user"][h.name] = c
	}
	f.Fuzz(func(t *testing.T, mech uint8, m1, m2, m3 []byte) {
		name := Mechanisms[int(mech)%len(Mechanisms)]
		s, err := NewSession(name, creds, Client{})
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range [][]byte{m1, m2, m3} {
			_, done, err := s.Step(m)
			if err != nil {
				return
			}
			if !done {
				continue
			}
			// Authenticated: only PLAIN with the password can get here
			// (the SCRAM proof would need the password and the random
			// server nonce).
			if name != Plain || i != 0 || !bytes.HasSuffix(m1, []byte("\x00user\x00pencil")) {
				t.Fatalf("%s authenticated after message %d: %q %q %q", name, i+1, m1, m2, m3)
			}
			if _, _, err := s.Step(m2); err == nil {
				t.Fatal("a message after the exchange ended was accepted")
			}
			return
		}
	})
}
