//go:build !linux

package vaultcluster

import "os/exec"

// dieWithParent does nothing where the kernel cannot tie a child's life to
// its parent's: Close must end the nodes.
func dieWithParent(*exec.Cmd) {}
