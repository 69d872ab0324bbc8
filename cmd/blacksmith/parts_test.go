package main

import (
	"strings"
	"testing"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// A configuration that turns backups off must reach vault as "off", even
// with every other backup key zero (vault once read an all-zero
// BackupOptions as "the defaults, backups on").
func TestBackupsOffStayOff(t *testing.T) {
	cfg := config.Default()
	cfg.Reconciler.Backup = config.BackupConfig{Enabled: false, Retention: 0, Cleanup: false, Path: ""}
	got := vaultOptions(cfg).Backup
	if got == nil {
		t.Fatal("no BackupOptions: vault would take its defaults, backups on")
	}
	if got.Enabled {
		t.Fatal("backups turned on")
	}
	cfg.Reconciler.Backup = config.BackupConfig{Enabled: true, Retention: 4, Cleanup: true, Path: "bk"}
	if got := vaultOptions(cfg).Backup; got == nil || *got != (vault.BackupOptions{Enabled: true, Retention: 4, Cleanup: true, Path: "bk"}) {
		t.Fatalf("backup options %+v", got)
	}
}

// A command that runs once holds leases under a name of its own: with the
// daemon's, run on the daemon's VM, it would renew the daemon's reconciler
// lease as its own and release it when it ends (two leaders).
func TestOneShotHolderIsNotTheDaemons(t *testing.T) {
	cfg := config.Default()
	cfg.HA.ID = "vm-a"
	daemon := &parts{cfg: cfg}
	cli := &parts{cfg: cfg, oneShot: true}
	d, err := daemon.haID()
	if err != nil || d != "vm-a" {
		t.Fatalf("daemon id %q, %v", d, err)
	}
	c, err := cli.haID()
	if err != nil || c == d || !strings.HasPrefix(c, "vm-a/cli-") {
		t.Fatalf("one-shot id %q (daemon %q), %v", c, d, err)
	}
}

// A Director's content printed for an operator's terminal can neither move
// the cursor nor reorder what is shown.
func TestPrintableEscapesWhatATerminalObeys(t *testing.T) {
	for in, want := range map[string]string{
		"redis-small-a1":              "redis-small-a1",
		"x\x1b[2J\x1b[Hdone":          `x\u001B[2J\u001B[Hdone`,
		"ok\rfailed":                  `ok\u000Dfailed`,
		"redis-\u202etxt.exe":         `redis-\u202Etxt.exe`,
		"line\u2028two\u200b\u00adés": `line\u2028two\u200B\u00ADés`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}
