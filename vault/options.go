package vault

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"
)

// Default size bounds (see Options).
const (
	DefaultMaxRecordBytes   = 32 << 10
	DefaultMaxManifestBytes = maxString
	DefaultMaxSecretBytes   = 256 << 10
)

// Options configures a Store. Defaults are filled in by New.
type Options struct {
	// Address is Vault's URL, e.g. https://vault.example:8200. Required.
	Address string
	// Token is the Vault token. Default: $VAULT_TOKEN; one of them is required.
	Token string
	// Mount is the KV mount holding the broker's records. Default "secret".
	Mount string
	// CACert is the path of a PEM file with the CA(s) that sign Vault's
	// certificate. Default: the system roots.
	CACert string
	// SkipSSLValidation turns off TLS certificate verification. Default false.
	SkipSSLValidation bool
	// KVVersion is the mount's KV version, 1 or 2. Default 0: detected from
	// sys/internal/ui/mounts, then sys/mounts; set it when the token may read
	// neither. When set and the token may read them, New checks it against
	// the mount and refuses a mismatch.
	KVVersion int
	// Backup configures backups taken before destructive changes. Default
	// nil: enabled, retention 10, cleanup on, path "backups". A value given is
	// taken as it is (an empty Path aside, which is "backups").
	Backup *BackupOptions
	// HistoryCap is the number of history entries kept in metadata. Default 50; negative is refused.
	HistoryCap int
	// Timeout bounds each request to Vault. Default 30s; negative is refused.
	Timeout time.Duration
	// FailoverWait bounds how long requests ride out a failover of a Vault
	// cluster: answers that say no node is active right now (refused
	// connections, a balancer's 502 and 503, 429, a sealed node's 503, a
	// standby's 500 "local node not active", a Raft follower's "node is not
	// the leader") are retried, with backoff, until FailoverWait has passed
	// since the first of them; then they fail at once, until Vault answers
	// again, so that a Vault down for good is seen as soon as before (the
	// breaker). Default 15s; negative turns the retries off.
	FailoverWait time.Duration
	// MaxRecordBytes bounds the encoded size of one index record: Update
	// refuses (ErrTooLarge, nothing written) a change that would store a
	// larger one, so that no record can grow its shard past what Vault
	// accepts. Default 32 KiB (0 means the default); at most 1 MiB; negative
	// is refused. It cannot be turned off.
	MaxRecordBytes int
	// MaxManifestBytes bounds a manifest (PutManifest, CreateManifest,
	// Restore: ErrTooLarge). Default 1 MiB, the longest string Vault's
	// listener accepts by default (0 means the default); negative is refused.
	MaxManifestBytes int
	// MaxSecretBytes bounds the JSON encoding of one secret (PutSecret,
	// Restore: ErrTooLarge). Default 256 KiB (0 means the default); negative
	// is refused.
	MaxSecretBytes int
	// Logger receives warnings (token renewal, fields kept raw). Default slog.Default().
	Logger *slog.Logger
}

// BackupOptions configures backups at {mount}/{id}/{Path}/{unix timestamp}.
// Options.Backup nil means the defaults; a BackupOptions given means what it
// says, so a zero one turns backups off.
type BackupOptions struct {
	// Enabled turns backups on.
	Enabled bool
	// Retention is how many backups are kept per instance when Cleanup is on.
	// Default 10; 0 keeps all; negative is refused.
	Retention int
	// Cleanup deletes the oldest backups beyond Retention. Default true;
	// false keeps all.
	Cleanup bool
	// Path is the folder under {mount}/{id}/ that holds backups. Default "backups".
	Path string
}

// defaults fills in the defaults and validates the result.
func (o *Options) defaults() error {
	if o.Token == "" {
		o.Token = os.Getenv("VAULT_TOKEN")
	}
	if o.Mount = strings.Trim(o.Mount, "/"); o.Mount == "" {
		o.Mount = "secret"
	}
	b := BackupOptions{Enabled: true, Retention: 10, Cleanup: true}
	if o.Backup != nil {
		b = *o.Backup // a copy: the caller's value is not changed
	}
	if b.Path = strings.Trim(b.Path, "/"); b.Path == "" {
		b.Path = "backups"
	}
	o.Backup = &b
	if o.HistoryCap == 0 {
		o.HistoryCap = 50
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	if o.FailoverWait == 0 {
		o.FailoverWait = DefaultFailoverWait
	}
	if o.MaxRecordBytes == 0 {
		o.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if o.MaxManifestBytes == 0 {
		o.MaxManifestBytes = DefaultMaxManifestBytes
	}
	if o.MaxSecretBytes == 0 {
		o.MaxSecretBytes = DefaultMaxSecretBytes
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o.validate()
}

// validate reports every problem of filled-in options at once, each naming
// the option.
func (o *Options) validate() error {
	var bad []string
	if !validAddress(o.Address) {
		bad = append(bad, fmt.Sprintf("address %q (want http(s)://host:port)", o.Address))
	}
	if o.Token == "" {
		bad = append(bad, "token (set it or $VAULT_TOKEN)")
	}
	if validPath(o.Mount) != nil {
		bad = append(bad, fmt.Sprintf("mount %q", o.Mount))
	}
	if o.KVVersion < 0 || o.KVVersion > 2 {
		bad = append(bad, fmt.Sprintf("kv version %d (want 1 or 2, or 0 to detect)", o.KVVersion))
	}
	if validPath(o.Backup.Path) != nil {
		bad = append(bad, fmt.Sprintf("backup path %q", o.Backup.Path))
	}
	if o.Backup.Retention < 0 {
		bad = append(bad, fmt.Sprintf("backup retention %d (want 0 to keep all, or more)", o.Backup.Retention))
	}
	if o.HistoryCap < 0 {
		bad = append(bad, fmt.Sprintf("history cap %d (must not be negative)", o.HistoryCap))
	}
	if o.Timeout < 0 {
		bad = append(bad, fmt.Sprintf("timeout %s (must not be negative)", o.Timeout))
	}
	if o.MaxRecordBytes < 0 || o.MaxRecordBytes > maxString {
		bad = append(bad, fmt.Sprintf("max record bytes %d (want 1 to %d, or 0 for the default)", o.MaxRecordBytes, maxString))
	}
	if o.MaxManifestBytes < 0 {
		bad = append(bad, fmt.Sprintf("max manifest bytes %d (must not be negative)", o.MaxManifestBytes))
	}
	if o.MaxSecretBytes < 0 {
		bad = append(bad, fmt.Sprintf("max secret bytes %d (must not be negative)", o.MaxSecretBytes))
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: vault options: %s", ErrInvalid, strings.Join(bad, "; "))
	}
	return nil
}

// validAddress accepts the addresses Vault's client dials: http(s)://host
// and unix:///path.
func validAddress(addr string) bool {
	u, err := url.Parse(addr)
	switch {
	case err != nil:
		return false
	case u.Scheme == "http" || u.Scheme == "https":
		return u.Host != ""
	case u.Scheme == "unix":
		return u.Path != ""
	}
	return false
}
