// Command vault is HashiCorp Vault's own server and CLI, built from Vault's
// published Go packages so that tests and `make run` get a real Vault on a
// machine that can only reach the Go module proxy. It lives in a module of its
// own so that Vault's dependency graph never enters the blacksmith module.
package main

import (
	"os"

	"github.com/hashicorp/vault/command"
)

func main() {
	os.Exit(command.Run(os.Args[1:]))
}
