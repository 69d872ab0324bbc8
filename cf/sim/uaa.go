package sim

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// maxTokens bounds the tokens held; the oldest are forgotten first once
// expired tokens have been dropped.
const maxTokens = 100000

// tokens are the access tokens issued, with their expiry: JWTs as UAA
// issues them (the cf CLI reads their claims: the client, the expiry; it
// checks no signature), signed with a key of the simulator's, and valid as
// long as the simulator holds them.
type tokens struct {
	mu      sync.Mutex
	expires map[string]time.Time
	issued  int
	key     []byte // HMAC-SHA256 key of the signatures
}

func (t *tokens) init() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expires = map[string]time.Time{}
	if t.key == nil {
		t.key = make([]byte, 32)
		_, _ = rand.Read(t.key)
	}
}

// claims are a client-credentials token's claims, as UAA writes them.
type claims struct {
	JTI         string   `json:"jti"`
	Sub         string   `json:"sub"`
	Authorities []string `json:"authorities"`
	Scope       []string `json:"scope"`
	ClientID    string   `json:"client_id"`
	CID         string   `json:"cid"`
	AZP         string   `json:"azp"`
	GrantType   string   `json:"grant_type"`
	IAT         int64    `json:"iat"`
	Exp         int64    `json:"exp"`
	Iss         string   `json:"iss"`
	ZID         string   `json:"zid"`
	Aud         []string `json:"aud"`
}

// jwt is c as a JWT signed with key (HS256).
func jwt(c claims, key []byte) string {
	enc := base64.RawURLEncoding
	head := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body := head + "." + enc.EncodeToString(simkit.JSON(c))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(body))
	return body + "." + enc.EncodeToString(mac.Sum(nil))
}

// issue issues a token for client, valid for ttl, its issuer iss.
func (t *tokens) issue(client, iss string, ttl time.Duration) (tok, jti string) {
	at := time.Now()
	jti = newUUID()
	c := claims{JTI: jti, Sub: client, Authorities: []string{readScope}, Scope: []string{readScope}, ClientID: client, CID: client,
		AZP: client, GrantType: "client_credentials", IAT: at.Unix(), Exp: at.Add(ttl).Unix(), Iss: iss, ZID: "uaa",
		Aud: []string{"cloud_controller", client}}
	t.mu.Lock()
	tok = jwt(c, t.key)
	defer t.mu.Unlock()
	if len(t.expires) >= maxTokens {
		n := time.Now()
		for k, e := range t.expires {
			if !n.Before(e) || len(t.expires) >= maxTokens {
				delete(t.expires, k)
			}
		}
	}
	t.expires[tok] = at.Add(ttl)
	t.issued++
	return tok, jti
}

// readScope is the scope of the tokens issued.
const readScope = "cloud_controller.admin_read_only"

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
	tok, jti := c.tokens.issue(id, c.url+UAAPrefix+"/oauth/token", time.Duration(ttl)*time.Second)
	writeJSON(w, http.StatusOK, tokenReply{AccessToken: tok, TokenType: "bearer", ExpiresIn: ttl, Scope: readScope, JTI: jti})
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
