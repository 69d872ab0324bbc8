package vault

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-cleanhttp"
	"github.com/hashicorp/vault/api"
)

// Store reads and writes the broker's records in one KV mount of Vault.
// It is safe for concurrent use.
type Store struct {
	kv    *kv
	opts  Options
	log   *slog.Logger
	locks *mountLocks
	renew *renewer
	// shards is the shard count of the index layout last read (0: none
	// yet); a record's shard is read by it, beside the layout's own read.
	shards atomic.Int64
	// The parts of the store that stand on their own, each what one kind
	// of consumer uses: their methods are the Store's too.
	*History
	*RunLog
	*Leases
	*State
	*Secrets
}

// mountLocks serialize, within the process, what Vault cannot on one mount:
// every Store of the same address and mount shares them.
type mountLocks struct {
	v1      sync.Mutex      // index updates on KV v1
	backups [256]sync.Mutex // backup naming per instance (striped: held while a backup's parts are read)
}

var processLocks sync.Map // address + "\x00" + mount -> *mountLocks

func locksFor(address, mount string) *mountLocks {
	l, _ := processLocks.LoadOrStore(strings.TrimRight(address, "/")+"\x00"+mount, &mountLocks{})
	return l.(*mountLocks)
}

// Stats are cumulative counts of KV requests issued by a Store.
type Stats struct {
	// Reads counts GET and LIST requests on the mount.
	Reads uint64
	// Checks counts, of the Reads, the metadata reads IndexFrom makes to
	// tell an index shard unchanged (a fifth of a shard read's cost).
	Checks uint64
	// Writes counts PUT and DELETE requests on the mount.
	Writes uint64
	// WritesByKind counts them by the kind of document (WriteKinds).
	WritesByKind map[string]uint64
	// Renewals counts successful token renewals.
	Renewals uint64
}

// New validates opts (every problem at once, ErrInvalid) and connects to
// Vault: it checks that Vault is reachable and unsealed and that the token is
// valid, detects the KV version of the mount (or checks the configured one
// when it can), and starts renewing the token when it is renewable (Close
// stops that).
func New(ctx context.Context, opts Options) (*Store, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	client, err := newClient(opts)
	if err != nil {
		return nil, err
	}
	s := &Store{kv: &kv{client: client, mount: opts.Mount}, opts: opts, log: opts.Logger, locks: locksFor(opts.Address, opts.Mount)}
	s.History, s.RunLog, s.Leases, s.State = &History{kv: s.kv}, &RunLog{kv: s.kv}, &Leases{kv: s.kv}, &State{kv: s.kv}
	s.Secrets = &Secrets{kv: s.kv, opts: &s.opts}
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
	// The timeout is the http.Client's only: with api.Config.Timeout set, the
	// api package cancels a write's context as soon as it returns, before the
	// answer is read, and the connection is closed instead of reused (every
	// write dialed anew: ~1 connection per document in a cold run).
	cfg := &api.Config{Address: opts.Address, HttpClient: hc, MaxRetries: 0}
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
	by := make(map[string]uint64, len(WriteKinds))
	for i, k := range WriteKinds {
		by[k] = s.kv.byKind[i].Load()
	}
	return Stats{Reads: s.kv.reads.Load(), Checks: s.kv.checks.Load(), Writes: s.kv.writes.Load(), WritesByKind: by, Renewals: s.renew.count.Load()}
}

// KVVersion returns the KV version in use for the mount (1 or 2).
func (s *Store) KVVersion() int { return s.kv.version }

// Mount returns the KV mount in use.
func (s *Store) Mount() string { return s.kv.mount }
