package main

import (
	"fmt"

	log "github.com/hashicorp/go-hclog"
	kv "github.com/hashicorp/vault-plugin-secrets-kv"
	"github.com/hashicorp/vault/audit"
	"github.com/hashicorp/vault/command/server"
	"github.com/hashicorp/vault/physical/raft"
	"github.com/hashicorp/vault/sdk/logical"
	"github.com/hashicorp/vault/sdk/physical"
	"github.com/hashicorp/vault/sdk/physical/file"
	"github.com/hashicorp/vault/vault"
)

// newStorage builds the configuration's storage backend: Vault's integrated
// Raft storage or its file storage.
func newStorage(config *server.Config, logger log.Logger) (physical.Backend, error) {
	var backend physical.Backend
	var err error
	switch config.Storage.Type {
	case "raft":
		backend, err = raft.NewRaftBackend(config.Storage.Config, logger)
	case "file":
		backend, err = file.NewFileBackend(config.Storage.Config, logger)
	default:
		err = fmt.Errorf("not in this build")
	}
	if err != nil {
		return nil, fmt.Errorf("storage %q: %w", config.Storage.Type, err)
	}
	return backend, nil
}

// coreConfig is the core's configuration as command/server.go's
// createCoreConfig and initHaBackend make it, with this build's engines:
// the storage is the HA backend when it can be one (Raft), the redirect
// address is api_addr and the cluster address cluster_addr.
func coreConfig(config *server.Config, backend physical.Backend, logger log.Logger) *vault.CoreConfig {
	c := &vault.CoreConfig{
		RawConfig:    config,
		Physical:     backend,
		StorageType:  config.Storage.Type,
		RedirectAddr: config.APIAddr,
		ClusterAddr:  config.ClusterAddr,
		ClusterName:  config.ClusterName,
		AuditBackends: map[string]audit.Factory{
			"file":   audit.NewFileBackend,
			"socket": audit.NewSocketBackend,
			"syslog": audit.NewSyslogBackend,
		},
		LogicalBackends: map[string]logical.Factory{"kv": kv.Factory},
		BuiltinRegistry: kvOnly{},
		Logger:          logger,
		DisableMlock:    config.DisableMlock,
		DisableCache:    config.DisableCache,
		MaxLeaseTTL:     config.MaxLeaseTTL,
		DefaultLeaseTTL: config.DefaultLeaseTTL,
		EnableUI:        false,
		EnableRaw:       config.EnableRawEndpoint,
	}
	if ha, ok := backend.(physical.HABackend); ok && ha.HAEnabled() {
		c.HAPhysical = ha
	}
	return c
}
