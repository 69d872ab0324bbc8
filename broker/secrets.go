package broker

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/blacksmith-reconciler/blacksmith/operation"
)

// secretAlphabet is what generated passwords are made of: letters and
// digits only, so that they need no quoting in YAML, URLs or shells.
const secretAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// credentialsPath is where an instance's generated secrets live, relative to the mount.
func credentialsPath(id string) string { return id + "/credentials" }

// bindingPath is where a binding's credentials live, relative to the mount.
func bindingPath(id, bindingID string) string { return id + "/bindings/" + bindingID }

// newSecrets generates an instance's secrets: .Secrets.password (32
// characters) and .Secrets.username ("u" and 15 characters).
func newSecrets() map[string]any {
	return map[string]any{"username": "u" + randomString(15), "password": randomString(32)}
}

// bindingSecrets generates a per_binding binding's secrets: a username
// derived from the instance and binding ids ("b" and 15 hex digits: not a
// secret, and found again in the manifest that declares it when Vault
// loses the binding) and a random password of 32 characters.
func bindingSecrets(id, bid string) map[string]any {
	return map[string]any{"username": bindingUsername(id, bid), "password": randomString(32)}
}

// bindingUsername is the username of binding bid of instance id.
func bindingUsername(id, bid string) string {
	sum := sha256.Sum256([]byte(id + "/" + bid))
	return "b" + hex.EncodeToString(sum[:])[:15]
}

// randomString returns n characters of secretAlphabet drawn uniformly.
func randomString(n int) string {
	out := make([]byte, n)
	buf := make([]byte, 1)
	for i := 0; i < n; {
		if _, err := rand.Read(buf); err != nil {
			panic(err) // crypto/rand never fails on supported platforms
		}
		// 248 = 4*62: values above it would bias the first letters.
		if buf[0] < 248 {
			out[i] = secretAlphabet[int(buf[0])%len(secretAlphabet)]
			i++
		}
	}
	return string(out)
}

// instanceSecrets returns the instance's stored secrets, or new ones when it
// has none yet (stored is then false).
func (r *renderer) instanceSecrets(ctx context.Context, id string) (secrets map[string]any, stored bool, err error) {
	s, ok, err := r.secrets.Secret(ctx, credentialsPath(id))
	if err != nil {
		return nil, false, fmt.Errorf("reading the secrets of instance %s: %w", id, err)
	}
	if ok {
		return s, true, nil
	}
	return newSecrets(), false, nil
}

// heldSecrets are the secrets to render an existing instance's manifest
// with: its stored ones, else stand-ins (operation.StandIns) that the
// running manifest's configuration-server variables replace. An instance
// that runs is never given generated secrets: they would replace the
// password its applications use.
func (r *renderer) heldSecrets(ctx context.Context, id string) (map[string]any, error) {
	s, ok, err := r.secrets.Secret(ctx, credentialsPath(id))
	switch {
	case err != nil:
		return nil, r.report.internal("could not read the instance's secrets", err, "instance", id)
	case ok:
		return s, nil
	}
	return operation.StandIns(secretKeys...), nil
}

// secretKeys are the keys of an instance's secrets (newSecrets).
var secretKeys = []string{"username", "password"}
