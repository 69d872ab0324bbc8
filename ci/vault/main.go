// Command vault is a real HashiCorp Vault server built from Vault's own
// packages with only what this project's suites, `make run` and `make soak`
// use: Vault's core (its barrier, router, token store, policies, system
// backend, seal and unseal, HA and request forwarding), its HTTP API handler,
// in-memory, file and integrated Raft storage and the KV secrets engine (v1
// and v2). It is `vault server` without the CLI's other commands, the other
// storage backends, auth methods and secrets engines, so that it builds in
// minutes instead of the ten the whole of Vault takes.
//
// It runs in development mode with the dev server's flags the suites use,
// printing its banner (the unseal key, the root token) as `vault server -dev`
// does:
//
//	vault server -dev -dev-root-token-id=root -dev-listen-address=127.0.0.1:8200 [-dev-no-store-token] [-dev-kv-v1]
//
// Like every dev server it then keeps nothing on disk and is never for
// production. Or it runs as Vault's server does from a configuration file:
//
//	vault server -config=vault.hcl [-log-level=LEVEL]
//
// The file is read by Vault's own configuration parser; this build accepts
// `storage "raft"` (path, node_id, retry_join { leader_api_addr }) or
// `storage "file"` (path), `listener "tcp"` blocks, api_addr, cluster_addr
// and disable_mlock. Such a server starts sealed and uninitialized: it is
// initialized and unsealed over the HTTP API (sys/init, sys/unseal), joins
// a Raft cluster through retry_join, and as a standby forwards requests to
// the active node over the cluster listener (the API port plus one unless
// the listener names its cluster_address).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/vault/version"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// devFlags are the flags of `vault server` this server understands: the
// dev server's and -config.
type devFlags struct {
	dev, noStoreToken, kvV1 bool
	rootTokenID, listen     string
	logLevel                string
	config                  string
}

const usage = "usage: vault server -dev [-dev-root-token-id=ID] [-dev-listen-address=ADDR] [-dev-no-store-token] [-dev-kv-v1] [-log-level=LEVEL]\n" +
	"       vault server -config=FILE [-log-level=LEVEL]"

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "version" || args[0] == "-version" || args[0] == "--version") {
		fmt.Fprintln(stdout, version.GetVersion().FullVersionNumber(true))
		return 0
	}
	if len(args) == 0 || args[0] != "server" {
		fmt.Fprintln(stderr, usage)
		return 1
	}
	var f devFlags
	fs := flag.NewFlagSet("vault server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&f.dev, "dev", false, "development mode: in-memory, initialized and unsealed")
	fs.StringVar(&f.config, "config", "", "a configuration file (HCL or JSON) to run from")
	fs.StringVar(&f.rootTokenID, "dev-root-token-id", "", "the root token's id")
	fs.StringVar(&f.listen, "dev-listen-address", "127.0.0.1:8200", "the address to listen on")
	fs.BoolVar(&f.noStoreToken, "dev-no-store-token", false, "do not write ~/.vault-token (this build never does)")
	fs.BoolVar(&f.kvV1, "dev-kv-v1", false, "mount secret/ as KV version 1")
	fs.StringVar(&f.logLevel, "log-level", "info", "trace, debug, info, warn or error")
	if err := fs.Parse(args[1:]); err != nil {
		return 1
	}
	if fs.NArg() > 0 || f.dev == (f.config != "") {
		fmt.Fprintln(stderr, "this Vault build runs either in development mode or from one configuration file:\n"+usage)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	serveMode := serve
	if f.config != "" {
		serveMode = serveConfig
	}
	if err := serveMode(ctx, f, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	return 0
}
