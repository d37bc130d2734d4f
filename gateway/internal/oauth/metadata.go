package oauth

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// metadata serves the authorization server's metadata (RFC 8414). Only what is implemented is
// advertised: the code flow with S256 (plain PKCE is refused), public clients named by a Client
// ID Metadata Document, refresh tokens, the iss parameter of RFC 9207, and client_credentials for
// an object authenticated by private_key_jwt with its own Ed25519 key. Access tokens are
// verified by the gateway alone, so no key set is published.
func (s *Server) metadata(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=300")
	c.JSON(http.StatusOK, gin.H{
		"issuer":                                         s.issuer,
		"authorization_endpoint":                         s.issuer + AuthorizePath,
		"token_endpoint":                                 s.issuer + TokenPath,
		"scopes_supported":                               Scopes,
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"code_challenge_methods_supported":               []string{"S256"},
		"service_documentation":                          s.issuer + "/llms.txt",
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
	})
}
