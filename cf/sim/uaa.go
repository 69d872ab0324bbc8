package sim

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"
)

// maxTokens bounds the tokens held; the oldest are forgotten first once
// expired tokens have been dropped.
const maxTokens = 100000

// tokens are the opaque access tokens issued, with their expiry.
type tokens struct {
	mu      sync.Mutex
	expires map[string]time.Time
	issued  int
}

func (t *tokens) init() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expires = map[string]time.Time{}
}

func (t *tokens) issue(ttl time.Duration) string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.expires) >= maxTokens {
		n := time.Now()
		for k, e := range t.expires {
			if !n.Before(e) || len(t.expires) >= maxTokens {
				delete(t.expires, k)
			}
		}
	}
	t.expires[tok] = time.Now().Add(ttl)
	t.issued++
	return tok
}

// valid says whether tok was issued and has not expired.
func (t *tokens) valid(tok string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.expires[tok]
	return ok && time.Now().Before(e)
}

// RevokeTokens makes every token issued so far invalid: the next /v3
// request with one is answered 401 CF-InvalidAuthToken.
func (c *CC) RevokeTokens() { c.tokens.init() }

// tokenReply is UAA's answer to a token request.
type tokenReply struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	Scope       string `json:"scope"`
	JTI         string `json:"jti"`
}

// maxForm bounds a token request's body.
const maxForm = 64 << 10

// issueToken is UAA's POST /oauth/token for the client-credentials grant;
// the client authenticates with basic auth or client_id/client_secret.
func (c *CC) issueToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": "unreadable form"})
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if !equal(id, c.opts.ClientID) || !equal(secret, c.opts.ClientSecret) {
		w.Header().Set("WWW-Authenticate", `Basic realm="UAA/client", error="unauthorized", error_description="Bad credentials"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized", "error_description": "Bad credentials"})
		return
	}
	if grant := r.PostForm.Get("grant_type"); grant != "client_credentials" {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client",
			"error_description": "Unauthorized grant type: " + grant})
		return
	}
	ttl := int64(math.Ceil(c.knobs.tokenTTL().Seconds()))
	tok := c.tokens.issue(time.Duration(ttl) * time.Second)
	writeJSON(w, http.StatusOK, tokenReply{AccessToken: tok, TokenType: "bearer", ExpiresIn: ttl,
		Scope: "cloud_controller.admin_read_only", JTI: newUUID()})
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// authenticate checks a /v3 request's bearer token; on failure it has
// answered the request as the Cloud Controller does.
func (t *tokens) authenticate(w http.ResponseWriter, r *http.Request) bool {
	h := r.Header.Get("Authorization")
	if h == "" {
		writeError(w, http.StatusUnauthorized, errNotAuthenticated)
		return false
	}
	scheme, tok, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "bearer") || !t.valid(strings.TrimSpace(tok)) {
		writeError(w, http.StatusUnauthorized, errInvalidAuthToken)
		return false
	}
	return true
}
