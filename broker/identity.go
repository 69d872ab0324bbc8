package broker

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/pivotal-cf/brokerapi/v11/middlewares"
)

// Who asked and where: what the platform says of a request, recorded for
// the operator (the history's events, the instance's record) and never used
// to authorise anything.

// Bounds of what is kept of the platform's word.
const (
	maxIdentityHeader = 4 << 10 // X-Broker-API-Originating-Identity, as sent
	maxContextBytes   = 16 << 10
	maxContextValue   = 255
)

// platformName is what may name a platform in the originating identity.
var platformName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// identity is the platform user a request comes from.
type identity struct {
	platform string // e.g. "cloudfoundry", "kubernetes"
	user     string // user_id (Cloud Foundry), else username or uid (Kubernetes)
}

// parseIdentity reads X-Broker-API-Originating-Identity: "{platform}
// {base64 of a JSON object}". An empty header is no identity and no error;
// anything malformed is an error saying what (the request goes on without
// an identity).
func parseIdentity(header string) (identity, error) {
	if header == "" {
		return identity{}, nil
	}
	if len(header) > maxIdentityHeader {
		return identity{}, fmt.Errorf("%d bytes, more than %d", len(header), maxIdentityHeader)
	}
	platform, encoded, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !platformName.MatchString(platform) {
		return identity{}, errors.New(`not "{platform} {base64 JSON}"`)
	}
	encoded = strings.TrimSpace(encoded)
	data, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		if data, err = base64.RawStdEncoding.DecodeString(encoded); err != nil {
			return identity{}, errors.New("its value is not base64")
		}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return identity{}, errors.New("its value is not a JSON object")
	}
	for _, key := range []string{"user_id", "username", "uid"} {
		if user, ok := plainValue(fields[key]); ok {
			return identity{platform: strings.ToLower(platform), user: user}, nil
		}
	}
	return identity{}, errors.New("its value names no user (user_id, username or uid)")
}

// plainValue is raw as a string the operator may see: a JSON string of at
// most maxContextValue bytes, without control characters.
func plainValue(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	if s == "" || len(s) > maxContextValue || !utf8.ValidString(s) || strings.ContainsFunc(s, isControl) {
		return "", false
	}
	return s, true
}

// identities reads who asked from the requests' originating identity.
type identities struct {
	log *slog.Logger
	// warned is set once a malformed originating identity was logged as a warning.
	warned atomic.Bool
}

// of is the identity of the request ctx carries (brokerapi keeps the
// header's value there); a malformed one is logged (a warning the first
// time, then at debug level) and counts as none.
func (is *identities) of(ctx context.Context) identity {
	header, _ := ctx.Value(middlewares.OriginatingIdentityKey).(string)
	id, err := parseIdentity(header)
	if err != nil {
		if is.warned.CompareAndSwap(false, true) {
			is.log.Warn("a request's X-Broker-API-Originating-Identity is malformed and was ignored (said once; later ones at debug level)",
				"error", err)
		} else {
			is.log.Debug("a request's X-Broker-API-Originating-Identity is malformed and was ignored", "error", err)
		}
	}
	return id
}

// addTo puts who asked into a history event's details.
func (is *identities) addTo(ctx context.Context, details map[string]string) {
	if id := is.of(ctx); id.user != "" {
		details["platform"], details["user"] = id.platform, id.user
	}
}

// contextKeys are the OSB context fields kept in an instance's record:
// Cloud Foundry's and Kubernetes' names and guids of where it lives.
var contextKeys = []string{"platform", "organization_guid", "organization_name", "space_guid", "space_name",
	"instance_name", "namespace", "clusterid"}

// platformContext is what the record keeps of a request's context object:
// the known fields that are plain strings (each at most maxContextValue,
// no control characters); nil when there is none or it is not an object.
func platformContext(raw json.RawMessage) map[string]string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || len(raw) > maxContextBytes || raw[0] != '{' {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return nil
	}
	out := map[string]string{}
	for _, k := range contextKeys {
		if v, ok := plainValue(fields[k]); ok {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
