package redeploy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Source is what a redeploy may deploy of an instance: what the broker
// renders for an owned record, else a manifest kept in Vault that is not
// one recorded as drift.
type Source struct {
	// Renderer renders the broker's manifests; nil: none is rendered.
	Renderer ports.Renderer
	// Drifts are the SHA-256 digests of the instance's manifests recorded
	// as drift (changed on a Director behind the broker's back): never
	// deployed.
	Drifts map[string]bool
}

// Manifest is what to deploy of instance id for record rec: the broker's
// rendering when rec is owned and a Renderer is given, else stored (what
// Vault or a backup keeps; ok false: none), unless stored is a manifest
// recorded as drift: ErrRefused. what names stored in errors; the second
// result names what is deployed.
func (s Source) Manifest(ctx context.Context, id string, rec *vault.Record, stored string, ok bool, what string) (string, string, error) {
	if s.Renderer != nil && rec.Owned() {
		text, err := s.Renderer.RenderManifest(ctx, id, rec)
		if err != nil {
			return "", "", fmt.Errorf("%w: rendering the plan's manifest with the recorded parameters: %w", ErrRefused, err)
		}
		return text, "the manifest rendered from the plan's templates with the recorded parameters", nil
	}
	switch {
	case !ok:
		return "", "", fmt.Errorf("%w: %s: there is none", ErrRefused, what)
	case s.Drifts[digest(stored)]:
		return "", "", fmt.Errorf("%w: %s is one recorded as drift (changed on the Director behind the broker's back): "+
			"only what the broker rendered, or what the reconciler first found, is deployed", ErrRefused, what)
	}
	return stored, what, nil
}

// Drifts are the digests of the manifests recorded as drift in an
// instance's metadata history and in its history events.
func Drifts(md *vault.Metadata, events []vault.Event) map[string]bool {
	out := map[string]bool{}
	if md != nil {
		for _, h := range md.History {
			if h.Action == "drift" && h.ManifestSHA256 != "" {
				out[h.ManifestSHA256] = true
			}
		}
	}
	for _, e := range events {
		if sha := e.Details["manifest_sha256"]; e.Kind == "drift" && sha != "" {
			out[sha] = true
		}
	}
	return out
}

func digest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}
