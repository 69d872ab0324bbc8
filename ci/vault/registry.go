package main

import (
	kv "github.com/hashicorp/vault-plugin-secrets-kv"
	"github.com/hashicorp/vault/sdk/helper/consts"
	"github.com/hashicorp/vault/sdk/logical"
)

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
