package connauth

import (
	"crypto/x509"

	"github.com/kgateway/kgateway/auth"
)

// CertPrincipal is the principal a TLS client certificate gives its
// connection (the principal mapping): the certificate's subject mapped by m
// (ssl.principal.mapping.rules; nil: DEFAULT), as a User principal.
func CertPrincipal(cert *x509.Certificate, m *auth.PrincipalMapper) (string, error) {
	if m == nil {
		m, _ = auth.NewPrincipalMapper("DEFAULT")
	}
	name, err := m.Map(auth.SubjectName(cert))
	if err != nil {
		return "", err
	}
	return auth.UserPrincipal(name), nil
}

// FailedMessage is the message of a failed SASL exchange (the security rules): the same
// whatever failed, naming no secret.
func FailedMessage(mechanism string) string {
	return "Authentication failed during authentication due to invalid credentials with SASL mechanism " + mechanism
}
