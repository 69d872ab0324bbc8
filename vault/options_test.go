package vault_test

import (
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("Options", func() {
	// Nothing listens on 127.0.0.1:1: options that pass validation fail with
	// ErrUnreachable instead, and the spec fails.
	const nowhere = "http://127.0.0.1:1"

	DescribeTable("refuses bad options before any request, naming them",
		func(opts vault.Options, want ...string) {
			if opts.Token == "" {
				opts.Token = "t"
			}
			_, err := vault.New(ctx, opts)
			Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%v", err)
			for _, w := range want {
				Expect(err.Error()).To(ContainSubstring(w))
			}
		},
		Entry("an address without a scheme", vault.Options{Address: "127.0.0.1:8200"}, `address "127.0.0.1:8200"`),
		Entry("an address of another scheme", vault.Options{Address: "ftp://127.0.0.1"}, `address "ftp://127.0.0.1"`),
		Entry("an address without a host", vault.Options{Address: "http://"}, `address "http://"`),
		Entry("a mount that climbs out", vault.Options{Address: nowhere, Mount: "a/../b"}, `mount "a/../b"`),
		Entry("a KV version of 3", vault.Options{Address: nowhere, KVVersion: 3}, "kv version 3"),
		Entry("a backup path that climbs out", vault.Options{Address: nowhere,
			Backup: &vault.BackupOptions{Enabled: true, Retention: 1, Cleanup: true, Path: "../other"}}, `backup path "../other"`),
		Entry("a negative retention", vault.Options{Address: nowhere,
			Backup: &vault.BackupOptions{Enabled: true, Retention: -1, Cleanup: true}}, "backup retention -1"),
		Entry("a negative history cap", vault.Options{Address: nowhere, HistoryCap: -5}, "history cap -5"),
		Entry("a negative timeout", vault.Options{Address: nowhere, Timeout: -time.Second}, "timeout -1s"),
		Entry("a negative record bound", vault.Options{Address: nowhere, MaxRecordBytes: -1}, "max record bytes -1"),
		Entry("a record bound over 1 MiB", vault.Options{Address: nowhere, MaxRecordBytes: 1<<20 + 1}, "max record bytes 1048577"),
		Entry("a negative manifest bound", vault.Options{Address: nowhere, MaxManifestBytes: -1}, "max manifest bytes -1"),
		Entry("a negative secret bound", vault.Options{Address: nowhere, MaxSecretBytes: -1}, "max secret bytes -1"),
		Entry("every problem at once", vault.Options{Address: "x", Mount: "..", HistoryCap: -1},
			`address "x"`, `mount ".."`, "history cap -1"),
	)
})
