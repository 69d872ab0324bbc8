package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/hashicorp/cli"
	log "github.com/hashicorp/go-hclog"
	"github.com/hashicorp/vault/command/server"
	vaulthttp "github.com/hashicorp/vault/http"
	"github.com/hashicorp/vault/internalshared/configutil"
	"github.com/hashicorp/vault/vault"
	"github.com/hashicorp/vault/version"
)

// serveConfig runs a server from the configuration file f.config as Vault's
// `vault server -config` does (command/server.go): storage, core, listeners,
// the cluster listener's addresses and handler, retry_join for Raft, then
// the HTTP servers, until ctx ends. The server starts sealed; on Raft it
// joins a leader named in retry_join once unsealed or initializes through
// sys/init.
func serveConfig(ctx context.Context, f devFlags, stdout, stderr io.Writer) error {
	config, err := server.LoadConfigFile(f.config)
	if err != nil {
		return fmt.Errorf("reading %s: %w", f.config, err)
	}
	if err := checkConfig(config); err != nil {
		return fmt.Errorf("%s: %w", f.config, err)
	}
	logger := log.New(&log.LoggerOptions{Name: "core", Level: log.LevelFromString(f.logLevel), Output: stderr})
	backend, err := newStorage(config, logger.Named("storage."+config.Storage.Type))
	if err != nil {
		return err
	}
	core, err := vault.NewCore(coreConfig(config, backend, logger))
	if err != nil {
		return fmt.Errorf("initializing core: %w", err)
	}
	lns, clusterAddrs, err := listen(config, stderr)
	if err != nil {
		return err
	}
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	// Before the first unseal, as command/server.go does: where the cluster
	// listener binds and what serves the requests standbys forward.
	core.SetClusterListenerAddrs(clusterAddrs)
	core.SetClusterHandler(vaulthttp.Handler.Handler(&vault.HandlerProperties{Core: core, ListenerConfig: &configutil.Listener{}}))
	if config.Storage.Type == "raft" {
		if err := core.InitiateRetryJoin(ctx); err != nil {
			return fmt.Errorf("starting raft retry join: %w", err)
		}
	}
	served := make(chan error, len(lns))
	servers := make([]*http.Server, 0, len(lns))
	for i, ln := range lns {
		srv := &http.Server{
			Handler:           vaulthttp.Handler.Handler(&vault.HandlerProperties{Core: core, ListenerConfig: config.Listeners[i]}),
			ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 5 * time.Minute,
			ErrorLog: logger.StandardLogger(nil),
		}
		servers = append(servers, srv)
		go func() { served <- srv.Serve(ln) }()
	}
	fmt.Fprintf(stdout, `==> Vault server configuration:

             Api Address: %s
         Cluster Address: %s
                 Storage: %s
                 Version: %s

==> Vault server started! Log data will stream in below:

`, config.APIAddr, config.ClusterAddr, config.Storage.Type, version.GetVersion().FullVersionNumber(false))
	select {
	case err := <-served:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range servers {
		_ = srv.Shutdown(shutdown)
	}
	if err := core.Shutdown(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}

// checkConfig refuses what this build does not have: storage other than
// raft or file, listeners other than tcp, seals other than Shamir.
func checkConfig(config *server.Config) error {
	switch {
	case config.Storage == nil:
		return errors.New(`a storage block is required: storage "raft" or storage "file"`)
	case config.Storage.Type != "raft" && config.Storage.Type != "file":
		return fmt.Errorf("storage %q is not in this Vault build: only \"raft\" and \"file\"", config.Storage.Type)
	case config.HAStorage != nil:
		return errors.New("ha_storage is not in this Vault build: raft storage is HA itself")
	case len(config.Listeners) == 0:
		return errors.New(`at least one listener "tcp" block is required`)
	case len(config.Seals) > 0:
		return errors.New("seal blocks are not in this Vault build: it seals with Shamir keys only")
	case config.Storage.Type == "raft" && config.ClusterAddr == "":
		return errors.New("cluster_addr must be set when using raft storage")
	}
	for _, l := range config.Listeners {
		if l.Type != "tcp" {
			return fmt.Errorf("listener %q is not in this Vault build: only \"tcp\"", l.Type)
		}
	}
	return nil
}

// listen opens the configuration's listeners with Vault's listener code and
// returns them with their cluster addresses: each listener's
// cluster_address, else its own address with the port plus one, as
// command/server.go's InitListeners synthesizes them.
func listen(config *server.Config, logs io.Writer) ([]net.Listener, []*net.TCPAddr, error) {
	ui := &cli.BasicUi{Writer: logs, ErrorWriter: logs}
	var lns []net.Listener
	var addrs []*net.TCPAddr
	for _, l := range config.Listeners {
		ln, _, _, err := server.NewListener(l, logs, ui)
		if err != nil {
			for _, open := range lns {
				_ = open.Close()
			}
			return nil, nil, fmt.Errorf("listener on %s: %w", l.Address, err)
		}
		lns = append(lns, ln)
		if l.ClusterAddress != "" {
			addr, err := net.ResolveTCPAddr("tcp", l.ClusterAddress)
			if err != nil {
				return nil, nil, fmt.Errorf("cluster_address %q: %w", l.ClusterAddress, err)
			}
			addrs = append(addrs, addr)
			continue
		}
		tcp, ok := ln.Addr().(*net.TCPAddr)
		if !ok {
			return nil, nil, fmt.Errorf("listener on %s is not TCP", l.Address)
		}
		addrs = append(addrs, &net.TCPAddr{IP: tcp.IP, Port: tcp.Port + 1})
	}
	return lns, addrs, nil
}
