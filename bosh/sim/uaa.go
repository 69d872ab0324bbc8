package sim

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// claims are the parts of a UAA access token the simulator writes and reads.
type claims struct {
	JTI       string   `json:"jti"`
	Sub       string   `json:"sub"`
	Scope     []string `json:"scope"`
	ClientID  string   `json:"client_id"`
	CID       string   `json:"cid"`
	GrantType string   `json:"grant_type"`
	IAT       int64    `json:"iat"`
	Exp       int64    `json:"exp"`
	Iss       string   `json:"iss"`
	Zid       string   `json:"zid"`
	Aud       []string `json:"aud"`
}

// signer signs tokens (JWT, HS256) with a key that RevokeTokens replaces.
type signer struct {
	mu  sync.RWMutex
	key []byte
}

var jwtHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

func (s *signer) rotate() {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

func (s *signer) mac(data string) []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func (s *signer) sign(c claims) string {
	unsigned := jwtHeader + "." + base64.RawURLEncoding.EncodeToString(simkit.JSON(c))
	return unsigned + "." + base64.RawURLEncoding.EncodeToString(s.mac(unsigned))
}

// verify checks a token's signature and expiry.
func (s *signer) verify(token string) (claims, bool) {
	i := strings.LastIndexByte(token, '.')
	if i < 0 {
		return claims{}, false
	}
	sig, err := base64.RawURLEncoding.DecodeString(token[i+1:])
	if err != nil || !hmac.Equal(sig, s.mac(token[:i])) {
		return claims{}, false
	}
	_, payload, _ := strings.Cut(token[:i], ".")
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	var c claims
	if err != nil || json.Unmarshal(raw, &c) != nil || time.Now().Unix() >= c.Exp {
		return claims{}, false
	}
	return c, true
}

// tokenReply is UAA's answer to a token request.
type tokenReply struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	Scope       string `json:"scope"`
	JTI         string `json:"jti"`
}

// issueToken is UAA's POST /oauth/token for the client-credentials grant;
// the client authenticates with basic auth or client_id/client_secret.
func (g *gate) issueToken(w http.ResponseWriter, r *http.Request, _ string) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": err.Error()})
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if !equal(id, g.opts.ClientID) || !equal(secret, g.opts.ClientSecret) {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized", "error_description": "Bad credentials"})
		return
	}
	if grant := r.PostForm.Get("grant_type"); grant != "client_credentials" {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client",
			"error_description": "Unauthorized grant type: " + grant})
		return
	}
	// expires_in is whole seconds; the token lives at least that long.
	ttl := int64(math.Ceil(g.knobs.tokenTTL().Seconds()))
	issued := time.Now()
	expires := issued.Add(time.Duration(ttl) * time.Second)
	c := claims{JTI: newUUID(), Sub: id, Scope: g.opts.ClientScopes, ClientID: id, CID: id,
		GrantType: "client_credentials", IAT: issued.Unix(), Exp: expires.Unix() + 1, Iss: g.url + "/oauth/token",
		Zid: "uaa", Aud: []string{"bosh", id}}
	g.counts.tokenIssued()
	writeJSON(w, http.StatusOK, tokenReply{AccessToken: g.tokens.sign(c), TokenType: "bearer",
		ExpiresIn: ttl, Scope: strings.Join(c.Scope, " "), JTI: c.JTI})
}
