package vaultserver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
)

// ErrNoBinary means no Vault binary was found; see Binary for where it looks.
var ErrNoBinary = errors.New("no vault binary: run `make vault` (or set VAULT_BIN)")

// Binary returns the path of a Vault binary: $VAULT_BIN, else the binary that
// ci/vault-bin.sh caches under the user's cache directory keyed by the
// content of ci/vault, else `vault` on PATH.
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

// cachedBinary returns the binary ci/vault-bin.sh caches; the key must match
// the script's (see sourceKey).
func cachedBinary() (string, error) {
	gomod, err := findUp(filepath.Join("ci", "vault", "go.mod"))
	if err != nil {
		return "", err
	}
	key, err := sourceKey(filepath.Dir(gomod))
	if err != nil {
		return "", err
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(home, ".cache")
	}
	p := filepath.Join(cache, "blacksmith", "vault-"+key, "vault")
	if _, err := os.Stat(p); err != nil {
		return "", err
	}
	return p, nil
}

// sourceKey is the first 16 hex digits of the sha256 over every file under
// dir, sorted by path ("./go.mod", ...), each written as its path, a newline
// and its content: what ci/vault-bin.sh computes with find, sort and cat.
func sourceKey(dir string) (string, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		paths = append(paths, "./"+filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return "", err
		}
		h.Write([]byte(p + "\n"))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
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
