package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blacksmith-reconciler/blacksmith/config"
)

// FuzzLoad: any file loads or gives problems, never a panic, and no problem
// ever quotes a secret (here, the ones set in the environment).
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		"broker:\n  username: a\n  password: b\n",
		"reconciler:\n  interval: 1h\n  rules:\n  - {name: r, pattern: '^(?P<instance>.*)$', plan_id: p}\n",
		"vault: {token: [x], kv_version: 3}\nbosh: {timeout: -1s, rate_limit: NaN}\n",
		"&a [*a, *a, *a]\n",
		"---\n---\n",
		"broker:\n  max_body_bytes: 99999999999999999999\n",
		"catalog: {dirs: /nonexistent}\n",
		"reconciler: {releases: {redis: [1]}}\n",
		"cf: {api: 'https://u:p@api.invalid/v3?t=1', check_interval: 1s, ca_cert: '-----BEGIN'}\nreconciler: {remediation: {orphan_deployments: delete}}\n",
	} {
		f.Add(seed)
	}
	secrets := map[string]string{
		"BLACKSMITH_BROKER_USERNAME": "admin", "BLACKSMITH_BROKER_PASSWORD": "pw-9f8e7d6c5b4a",
		"VAULT_ADDR": "http://127.0.0.1:8200", "VAULT_TOKEN": "tok-1a2b3c4d5e6f",
		"BOSH_ENVIRONMENT": "https://127.0.0.1:25555", "BOSH_CLIENT": "c", "BOSH_CLIENT_SECRET": "cs-0a9b8c7d6e5f",
		"BLACKSMITH_CF_API": "https://api.sys.invalid", "BLACKSMITH_CF_CLIENT_ID": "r", "BLACKSMITH_CF_BROKER_NAME": "b",
		"BLACKSMITH_CF_CLIENT_SECRET": "cfs-5e4d3c2b1a09",
	}
	env := func(k string) (string, bool) { v, ok := secrets[k]; return v, ok }
	f.Fuzz(func(t *testing.T, file string) {
		path := filepath.Join(t.TempDir(), "blacksmith.conf")
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := config.Load(path, env)
		if err == nil {
			if c == nil {
				t.Fatal("no configuration and no error")
			}
			return
		}
		var p *config.Problems
		if !errors.As(err, &p) || len(p.List) == 0 {
			t.Fatalf("error is not a list of problems: %v", err)
		}
		for _, name := range []string{"BLACKSMITH_BROKER_PASSWORD", "VAULT_TOKEN", "BOSH_CLIENT_SECRET", "BLACKSMITH_CF_CLIENT_SECRET"} {
			if strings.Contains(err.Error(), secrets[name]) {
				t.Fatalf("a problem quotes the secret of %s: %v", name, err)
			}
		}
	})
}
