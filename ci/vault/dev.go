package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	log "github.com/hashicorp/go-hclog"
	kv "github.com/hashicorp/vault-plugin-secrets-kv"
	"github.com/hashicorp/vault/audit"
	"github.com/hashicorp/vault/helper/namespace"
	vaulthttp "github.com/hashicorp/vault/http"
	"github.com/hashicorp/vault/internalshared/configutil"
	"github.com/hashicorp/vault/sdk/logical"
	"github.com/hashicorp/vault/sdk/physical/inmem"
	"github.com/hashicorp/vault/vault"
	"github.com/hashicorp/vault/version"
)

// serve runs the development server: in-memory storage, initialized,
// unsealed and with secret/ mounted before it answers, until ctx ends.
func serve(ctx context.Context, f devFlags, stdout, stderr io.Writer) error {
	logger := log.New(&log.LoggerOptions{Name: "core", Level: log.LevelFromString(f.logLevel), Output: stderr})
	storage, err := inmem.NewInmem(nil, logger)
	if err != nil {
		return fmt.Errorf("in-memory storage: %w", err)
	}
	core, err := vault.NewCore(&vault.CoreConfig{
		Physical:    storage,
		StorageType: "inmem",
		AuditBackends: map[string]audit.Factory{
			"file":   audit.NewFileBackend,
			"socket": audit.NewSocketBackend,
			"syslog": audit.NewSyslogBackend,
		},
		LogicalBackends: map[string]logical.Factory{"kv": kv.Factory},
		BuiltinRegistry: kvOnly{},
		Logger:          logger,
		DisableMlock:    true,
		EnableRaw:       true,
		DevToken:        f.rootTokenID,
	})
	if err != nil {
		return fmt.Errorf("initializing core: %w", err)
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", f.listen, err)
	}
	listener := &configutil.Listener{Type: "tcp", Address: f.listen, TLSDisable: true}
	handler := vaulthttp.Handler.Handler(&vault.HandlerProperties{Core: core, ListenerConfig: listener})
	core.SetClusterHandler(handler)
	// As `vault server -dev` does, the server answers only once it is
	// initialized, unsealed and has secret/ mounted: a client that sees it
	// healthy finds everything in place.
	key, root, err := initDev(core, f)
	if err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 5 * time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, `==> Vault server configuration:

             Api Address: http://%s
                 Storage: inmem
                 Version: %s

==> Vault server started! Log data will stream in below:

WARNING! dev mode is enabled! In this mode, Vault runs entirely in-memory
and starts unsealed with a single unseal key. The root token is already
authenticated to the CLI, so you can immediately begin using Vault.

You may need to set the following environment variables:

    $ export VAULT_ADDR='http://%s'

The unseal key and root token are displayed below in case you want to
seal/unseal the Vault or re-authenticate.

Unseal Key: %s
Root Token: %s

Development mode should NOT be used in production installations!

`, f.listen, version.GetVersion().FullVersionNumber(false), f.listen, base64.StdEncoding.EncodeToString(key), root)

	select {
	case err := <-served:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	if err := core.Shutdown(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}

// initDev initializes and unseals the core with a single key share, makes
// the root token the one asked for and mounts secret/ as the dev server
// does; it returns the unseal key and the root token.
func initDev(core *vault.Core, f devFlags) ([]byte, string, error) {
	ctx := namespace.ContextWithNamespace(context.Background(), namespace.RootNamespace)
	init, err := core.Initialize(ctx, &vault.InitParams{
		BarrierConfig: &vault.SealConfig{SecretShares: 1, SecretThreshold: 1, Name: "shamir"},
	})
	if err != nil {
		return nil, "", fmt.Errorf("initializing: %w", err)
	}
	key := append([]byte(nil), init.SecretShares[0]...)
	if unsealed, err := core.Unseal(append([]byte(nil), key...)); err != nil || !unsealed {
		return nil, "", fmt.Errorf("unsealing: unsealed=%t: %v", unsealed, err)
	}
	root := init.RootToken
	if f.rootTokenID != "" {
		resp, err := core.HandleRequest(ctx, &logical.Request{
			ID: "dev-gen-root", Operation: logical.UpdateOperation, ClientToken: root, Path: "auth/token/create",
			Data: map[string]any{"id": f.rootTokenID, "policies": []string{"root"}, "no_parent": true, "no_default_policy": true},
		})
		if err != nil || resp == nil || resp.Auth == nil {
			return nil, "", fmt.Errorf("creating the root token %q: %v", f.rootTokenID, err)
		}
		if _, err := core.HandleRequest(ctx, &logical.Request{
			ID: "dev-revoke-init-root", Operation: logical.UpdateOperation, ClientToken: root, Path: "auth/token/revoke-self",
		}); err != nil {
			return nil, "", fmt.Errorf("revoking the initial root token: %w", err)
		}
		root = resp.Auth.ClientToken
	}
	kvVersion := "2"
	if f.kvV1 {
		kvVersion = "1"
	}
	resp, err := core.HandleRequest(ctx, &logical.Request{
		Operation: logical.UpdateOperation, ClientToken: root, Path: "sys/mounts/secret",
		Data: map[string]any{"type": "kv", "path": "secret/", "description": "key/value secret storage",
			"options": map[string]string{"version": kvVersion}},
	})
	if err != nil {
		return nil, "", fmt.Errorf("mounting secret/: %w", err)
	}
	if resp.IsError() {
		return nil, "", fmt.Errorf("mounting secret/: %w", resp.Error())
	}
	return key, root, nil
}
