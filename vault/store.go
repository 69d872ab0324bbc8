package vault

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-cleanhttp"
	"github.com/hashicorp/vault/api"
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
	// Backup configures backups taken before destructive changes.
	Backup BackupOptions
	// HistoryCap is the number of history entries kept in metadata. Default 50.
	HistoryCap int
	// Timeout bounds each request to Vault. Default 30s.
	Timeout time.Duration
	// Logger receives warnings (token renewal, fields kept raw). Default slog.Default().
	Logger *slog.Logger
}

// BackupOptions configures backups at {mount}/{id}/{Path}/{unix timestamp}.
// A zero BackupOptions means the defaults: enabled, retention 10, cleanup on,
// path "backups". To turn backups off, set Enabled false and any other field
// (e.g. Path), as config does by always filling Path.
type BackupOptions struct {
	// Enabled turns backups on. Default true (see above).
	Enabled bool
	// Retention is how many backups are kept per instance when Cleanup is on.
	// Default 10; 0 keeps all.
	Retention int
	// Cleanup deletes the oldest backups beyond Retention. Default true;
	// false keeps all.
	Cleanup bool
	// Path is the folder under {mount}/{id}/ that holds backups. Default "backups".
	Path string
}

// Store reads and writes the broker's records in one KV mount of Vault.
// It is safe for concurrent use.
type Store struct {
	kv      *kv
	opts    Options
	log     *slog.Logger
	v1mu    sync.Mutex     // serializes index updates on KV v1
	backups [16]sync.Mutex // serialize backup naming per instance (striped)
	renew   *renewer
}

// Stats are cumulative counts of KV requests issued by a Store.
type Stats struct {
	// Reads counts GET and LIST requests on the mount.
	Reads uint64
	// Writes counts PUT and DELETE requests on the mount.
	Writes uint64
	// Renewals counts successful token renewals.
	Renewals uint64
}

func (o *Options) defaults() error {
	if o.Token == "" {
		o.Token = os.Getenv("VAULT_TOKEN")
	}
	if o.Address == "" || o.Token == "" {
		return fmt.Errorf("%w: vault address and token are required", ErrInvalid)
	}
	o.Mount = strings.Trim(o.Mount, "/")
	if o.Mount == "" {
		o.Mount = "secret"
	}
	if o.KVVersion != 0 && o.KVVersion != 1 && o.KVVersion != 2 {
		return fmt.Errorf("%w: kv version %d (want 1 or 2)", ErrInvalid, o.KVVersion)
	}
	if o.Backup == (BackupOptions{}) {
		o.Backup = BackupOptions{Enabled: true, Retention: 10, Cleanup: true}
	}
	if o.Backup.Path = strings.Trim(o.Backup.Path, "/"); o.Backup.Path == "" {
		o.Backup.Path = "backups"
	}
	if o.HistoryCap == 0 {
		o.HistoryCap = 50
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return nil
}

// New connects to Vault: it checks that Vault is reachable and unsealed and
// that the token is valid, detects the KV version of the mount unless
// Options.KVVersion is set, and starts renewing the token when it is
// renewable (Close stops that).
func New(ctx context.Context, opts Options) (*Store, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	client, err := newClient(opts)
	if err != nil {
		return nil, err
	}
	s := &Store{kv: &kv{client: client, mount: opts.Mount}, opts: opts, log: opts.Logger}
	if err := s.checkSeal(ctx); err != nil {
		return nil, err
	}
	tok, err := client.Auth().Token().LookupSelfWithContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("looking up the vault token: %w", s.kv.classify(ctx, err))
	}
	if s.kv.version, err = s.resolveVersion(ctx); err != nil {
		return nil, err
	}
	s.renew = startRenewer(client, tok, s.log)
	return s, nil
}

// maxIdleConns bounds the connections kept open to Vault between requests.
const maxIdleConns = 32

func newClient(opts Options) (*api.Client, error) {
	hc := cleanhttp.DefaultPooledClient()
	tr := hc.Transport.(*http.Transport)
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	tr.MaxIdleConnsPerHost = maxIdleConns // the reconciler's writers and readers run side by side
	hc.Timeout = opts.Timeout
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	cfg := &api.Config{Address: opts.Address, HttpClient: hc, Timeout: opts.Timeout, MaxRetries: 0}
	tls := &api.TLSConfig{CACert: opts.CACert, Insecure: opts.SkipSSLValidation}
	if err := cfg.ConfigureTLS(tls); err != nil {
		return nil, fmt.Errorf("configuring TLS for vault: %w", err)
	}
	client, err := api.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating vault client: %w", err)
	}
	client.SetToken(opts.Token)
	return client, nil
}

func (s *Store) checkSeal(ctx context.Context) error {
	st, err := s.kv.client.Sys().SealStatusWithContext(ctx)
	if err != nil {
		return fmt.Errorf("checking vault at %s: %w", s.opts.Address, s.kv.classify(ctx, err))
	}
	if st.Sealed {
		return fmt.Errorf("checking vault at %s: %w", s.opts.Address, ErrSealed)
	}
	return nil
}

// Close stops the token renewal. The Store must not be used afterwards.
func (s *Store) Close() { s.renew.stop() }

// Stats returns the requests issued so far.
func (s *Store) Stats() Stats {
	return Stats{Reads: s.kv.reads.Load(), Writes: s.kv.writes.Load(), Renewals: s.renew.count.Load()}
}

// KVVersion returns the KV version in use for the mount (1 or 2).
func (s *Store) KVVersion() int { return s.kv.version }

// Mount returns the KV mount in use.
func (s *Store) Mount() string { return s.kv.mount }
