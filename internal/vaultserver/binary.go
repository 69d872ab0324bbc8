package vaultserver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// ErrNoBinary means no Vault binary was found; see Binary for where it looks.
var ErrNoBinary = errors.New("no vault binary: run `make vault` (or set VAULT_BIN)")

// Binary returns the path of a Vault binary: $VAULT_BIN, else the binary that
// ci/vault-bin.sh caches under the user's cache directory keyed by
// ci/vault/go.sum, else `vault` on PATH.
func Binary() (string, error) {
	if p := os.Getenv("VAULT_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("VAULT_BIN=%s: %w", p, err)
		}
		return p, nil
	}
	if p, err := cachedBinary(); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath("vault"); err == nil {
		return p, nil
	}
	return "", ErrNoBinary
}

// cachedBinary returns the binary ci/vault-bin.sh caches; the key (the first
// 16 hex digits of the sha256 of ci/vault/go.sum) must match the script's.
func cachedBinary() (string, error) {
	sum, err := findUp(filepath.Join("ci", "vault", "go.sum"))
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(sum)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(data)
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(home, ".cache")
	}
	p := filepath.Join(cache, "blacksmith", "vault-"+hex.EncodeToString(h[:])[:16], "vault")
	if _, err := os.Stat(p); err != nil {
		return "", err
	}
	return p, nil
}

// findUp looks for rel in the working directory and its parents.
func findUp(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%s not found above the working directory", rel)
		}
		dir = parent
	}
}
