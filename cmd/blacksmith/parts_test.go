package main

import (
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
