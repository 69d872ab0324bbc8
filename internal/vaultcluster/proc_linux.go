package vaultcluster

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the node's process receive SIGKILL when the process
// that started it ends, so that no node outlives a killed test binary.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
