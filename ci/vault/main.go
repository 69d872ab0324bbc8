// Command vault is a real HashiCorp Vault server in development mode, built
// from Vault's own packages with only what this project's suites and
// `make run` use: Vault's core (its barrier, router, token store, policies,
// system backend, seal and unseal), its HTTP API handler, in-memory storage
// and the KV secrets engine (v1 and v2). It is `vault server -dev` without
// the CLI, the other storage backends, auth methods and secrets engines, so
// that it builds in minutes instead of the ten the whole of Vault takes.
//
// It takes the dev server's flags the suites use and prints its banner
// (the unseal key, the root token) as `vault server -dev` does:
//
//	vault server -dev -dev-root-token-id=root -dev-listen-address=127.0.0.1:8200 [-dev-no-store-token] [-dev-kv-v1]
//
// Like every dev server it keeps nothing on disk and is never for production.
package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	log "github.com/hashicorp/go-hclog"
	kv "github.com/hashicorp/vault-plugin-secrets-kv"
	"github.com/hashicorp/vault/audit"
	"github.com/hashicorp/vault/helper/namespace"
	vaulthttp "github.com/hashicorp/vault/http"
	"github.com/hashicorp/vault/internalshared/configutil"
	"github.com/hashicorp/vault/sdk/helper/consts"
	"github.com/hashicorp/vault/sdk/logical"
	"github.com/hashicorp/vault/sdk/physical/inmem"
	"github.com/hashicorp/vault/vault"
	"github.com/hashicorp/vault/version"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// devFlags are the flags of `vault server -dev` this server understands.
type devFlags struct {
	dev, noStoreToken, kvV1 bool
	rootTokenID, listen     string
	logLevel                string
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "version" || args[0] == "-version" || args[0] == "--version") {
		fmt.Fprintln(stdout, version.GetVersion().FullVersionNumber(true))
		return 0
	}
	if len(args) == 0 || args[0] != "server" {
		fmt.Fprintln(stderr, "usage: vault server -dev [-dev-root-token-id=ID] [-dev-listen-address=ADDR] [-dev-no-store-token] [-dev-kv-v1] [-log-level=LEVEL]")
		return 1
	}
	var f devFlags
	fs := flag.NewFlagSet("vault server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&f.dev, "dev", false, "development mode (the only mode of this build)")
	fs.StringVar(&f.rootTokenID, "dev-root-token-id", "", "the root token's id")
	fs.StringVar(&f.listen, "dev-listen-address", "127.0.0.1:8200", "the address to listen on")
	fs.BoolVar(&f.noStoreToken, "dev-no-store-token", false, "do not write ~/.vault-token (this build never does)")
	fs.BoolVar(&f.kvV1, "dev-kv-v1", false, "mount secret/ as KV version 1")
	fs.StringVar(&f.logLevel, "log-level", "info", "trace, debug, info, warn or error")
	if err := fs.Parse(args[1:]); err != nil {
		return 1
	}
	if !f.dev || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "this Vault build only runs in development mode: vault server -dev ...")
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, f, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	return 0
}

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

// kvOnly is the plugin catalog's registry of built-in plugins: the KV
// secrets engine and nothing else.
type kvOnly struct{}

func (kvOnly) Contains(name string, t consts.PluginType) bool {
	return name == "kv" && t == consts.PluginTypeSecrets
}

func (r kvOnly) Get(name string, t consts.PluginType) (func() (any, error), bool) {
	if !r.Contains(name, t) {
		return nil, false
	}
	return func() (any, error) { return logical.Factory(kv.Factory), nil }, true
}

func (kvOnly) Keys(t consts.PluginType) []string {
	if t == consts.PluginTypeSecrets {
		return []string{"kv"}
	}
	return nil
}

func (r kvOnly) DeprecationStatus(name string, t consts.PluginType) (consts.DeprecationStatus, bool) {
	if !r.Contains(name, t) {
		return consts.Unknown, false
	}
	return consts.Supported, true
}

func (kvOnly) IsBuiltinEntPlugin(string, consts.PluginType) bool { return false }
