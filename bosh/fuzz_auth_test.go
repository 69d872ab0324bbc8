package bosh

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// directorAddresses are the configured addresses FuzzParseInfo checks the
// authentication decision against. No request is sent to any of them.
var directorAddresses = []string{
	"https://10.0.0.6:25555", "http://10.0.0.6:25555", "http://127.0.0.1:25555",
	"http://[::1]:25555", "http://localhost:25555",
}

// FuzzParseInfo: a /info that decodes reads back the same once re-encoded,
// and, whatever URL it names, the client secret would only go where
// trustedTokenURL (a rule written apart) allows, for Directors configured
// at https, plain http and loopback addresses; a refusal names the token URL.
func FuzzParseInfo(f *testing.F) {
	uaaAt := func(u string) string {
		return strings.ReplaceAll(seedInfoUAA, "https://uaa.bosh.invalid:8443", u)
	}
	for _, s := range []string{
		seedInfoBasic, seedInfoUAA, uaaAt("http://127.0.0.1:25555"), uaaAt("http://127.0.0.2:8443"),
		uaaAt("http://127.0.0.1:25556"), uaaAt("https://uaa.bosh.invalid:8443/"), uaaAt("https://:443"),
		uaaAt("http://127.0.0.1:25555@uaa.bosh.invalid"), uaaAt("HTTP://LOCALHOST:25555"), uaaAt(""),
		`{"user_authentication":{"type":"ldap"}}`, "null",
	} {
		f.Add([]byte(s))
	}
	clients := make([]*Client, len(directorAddresses))
	for i, addr := range directorAddresses {
		c, err := New(Options{Name: "lab", Address: addr, Username: "admin", Password: "admin",
			ClientID: "blacksmith", ClientSecret: "secret", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			f.Fatal(err)
		}
		clients[i] = c
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		info, err := parseInfo(body)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "decoding /info: ") {
				t.Fatalf("error %q does not say what failed", err)
			}
			return
		}
		reencodes(t, info)
		kind, uaaURL := info.UserAuthentication.Type, info.UserAuthentication.Options.URL
		for _, c := range clients {
			a, err := c.conn.newAuthenticator(kind, uaaURL)
			switch a := a.(type) {
			case *uaaAuth:
				if kind != "uaa" || !trustedTokenURL(c.conn.base, a.tokenURL) {
					t.Fatalf("director %s, /info type %q: the client secret would go to %q", c.conn.base, kind, a.tokenURL)
				}
			case basicAuth:
				if kind != "basic" {
					t.Fatalf("basic auth for /info type %q", kind)
				}
			case nil:
				if err == nil {
					t.Fatalf("neither an authenticator nor an error for /info type %q", kind)
				}
				tokenURL := strings.TrimSuffix(uaaURL, "/") + "/oauth/token"
				if errors.Is(err, ErrUntrustedUAA) && len(strconv.Quote(tokenURL)) <= maxErrorText &&
					!strings.Contains(err.Error(), "UAA at "+strconv.Quote(tokenURL)+": ") {
					t.Fatalf("refusal %q does not name the token URL %q", err, tokenURL)
				}
				if len(err.Error()) > maxErrorText+200 {
					t.Fatalf("error of %d bytes", len(err.Error()))
				}
			}
		}
	})
}

// trustedTokenURL is the rule for where the client secret may go, written
// apart from the client's: https to any named host, or exactly the
// Director's own scheme and host:port when that is plain http on a loopback host.
func trustedTokenURL(director *url.URL, token string) bool {
	u, err := url.Parse(token)
	if err != nil || u.Hostname() == "" {
		return false
	}
	if u.Scheme == "https" {
		return true
	}
	h := director.Hostname()
	ip := net.ParseIP(h)
	loopback := strings.EqualFold(h, "localhost") || (ip != nil && ip.IsLoopback())
	return u.Scheme == "http" && director.Scheme == "http" && loopback && u.Host == director.Host
}

// FuzzParseToken: a token answer that is accepted has an access token that
// can be sent in an Authorization header and renewal and expiry times in
// order; a refusal matches ErrUnauthorized exactly for a 401 or a 400
// invalid_client, and is of bounded size.
func FuzzParseToken(f *testing.F) {
	for _, s := range []struct {
		status int
		body   string
	}{
		{200, `{"access_token":"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJqdGkiOiI0ZjEifQ.c2lnbmF0dXJl","token_type":"bearer","expires_in":43199,"scope":"bosh.admin","jti":"4f1"}`},
		{200, `{"access_token":"a1b2c3","token_type":"Bearer","expires_in":0}`},
		{200, `{"access_token":"a1b2c3"}`}, {200, `{"token_type":"bearer"}`}, {200, "<html>sign in</html>"},
		{401, `{"error":"unauthorized","error_description":"Bad credentials"}`},
		{400, `{"error":"invalid_client","error_description":"Unauthorized grant type: password"}`},
		{503, "Service Unavailable"},
		{500, `{"error":"server_error","error_description":"` + strings.Repeat("x", 700) + `"}`},
	} {
		f.Add(s.status, []byte(s.body))
	}
	u := &uaaAuth{c: &conn{name: "lab", opts: Options{ClientID: "blacksmith"}}, tokenURL: "https://uaa.bosh.invalid:8443/oauth/token"}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if a, err := parseToken(body); err == nil {
			if a.AccessToken == "" {
				t.Fatal("an empty access token accepted")
			}
			reencodes(t, a)
			if h := tokenKind(a.TokenType) + " " + a.AccessToken; !validHeaderValue(h) {
				t.Fatalf("token accepted that cannot be sent in a header: %q", h)
			}
			start := time.Unix(1_000_000, 0)
			renew, expires := tokenTimes(start, a.ExpiresIn)
			if !start.Before(renew) || !renew.Before(expires) {
				t.Fatalf("expires_in %d: renewal at %v, expiry at %v after the fetch", a.ExpiresIn, renew.Sub(start), expires.Sub(start))
			}
		}

		err := u.refused(response{status: status, body: body})
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		want := status == http.StatusUnauthorized || (status == http.StatusBadRequest && e.Error == "invalid_client")
		if errors.Is(err, ErrUnauthorized) != want {
			t.Fatalf("status %d, error %q: ErrUnauthorized %v, want %v", status, e.Error, !want, want)
		}
		if len(err.Error()) > 2*maxErrorText+200 {
			t.Fatalf("refusal of %d bytes from an answer of %d", len(err.Error()), len(body))
		}
	})
}

// validHeaderValue says whether net/http would send s as a header value.
func validHeaderValue(s string) bool {
	for _, b := range []byte(s) {
		if (b < ' ' && b != '\t') || b == 0x7f {
			return false
		}
	}
	return true
}
