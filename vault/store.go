package vault

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/hashicorp/go-cleanhttp"
	"github.com/hashicorp/vault/api"
)

// Store reads and writes the broker's records in one KV mount of Vault.
// It is safe for concurrent use.
//
// Its own methods are what the broker uses (broker.Store): an instance's
// index record, secrets, history, backups, manifest, allowance and
// removal, each handed to the part that keeps that family of documents.
// The parts are its fields, each what one kind of consumer uses; New sets
// them, and they must not be replaced.
type Store struct {
	kv    *kv
	renew *renewer

	// Indexes reads and changes the instance index (Update, UpdateOver,
	// IndexFrom, Reshard, Remove).
	Indexes *Indexes
	// Documents are each instance's metadata, manifest and allowance, and
	// the list of the instances that have documents.
	Documents *Documents
	// Archive takes, lists and reads each instance's backups.
	Archive *Archive
	// Restores put an instance back as one of its backups holds it.
	Restores *Restores
	// Maintenance migrates a legacy Blacksmith index in and exports it
	// back out.
	Maintenance *Maintenance
	// History is each instance's events.
	History *History
	// RunLog is the reconciler's runs.
	RunLog *RunLog
	// Leases are the leases among daemons.
	Leases *Leases
	// State is the reconciler's state documents.
	State *State
	// Secrets are the secrets under the mount (an instance's, its
	// bindings').
	Secrets *Secrets

	removal *remover
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
	k := &kv{client: client, mount: opts.Mount, fo: &failover{wait: opts.FailoverWait}}
	if err := k.checkSeal(ctx, opts.Address); err != nil {
		return nil, err
	}
	tok, err := client.Auth().Token().LookupSelfWithContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("looking up the vault token: %w", k.classify(ctx, err))
	}
	if k.version, err = k.resolveVersion(ctx, opts.KVVersion); err != nil {
		return nil, err
	}
	s := assemble(k, &opts, locksFor(opts.Address, opts.Mount))
	s.renew = startRenewer(client, tok, opts.Logger)
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

// assemble makes a Store of its parts over k: each part holds what it
// reads and writes through, and the few parts it hands work to.
func assemble(k *kv, opts *Options, locks *mountLocks) *Store {
	log := opts.Logger
	docs := &indexDocs{kv: k, log: log}
	batch := &batcher{kv: k, docs: docs, locks: locks, maxRecordBytes: opts.MaxRecordBytes}
	reader := &stateReader{kv: k, docs: docs, backupPath: opts.Backup.Path}
	archive := &Archive{kv: k, opts: opts.Backup, locks: locks, log: log, reader: reader}
	secrets := &Secrets{kv: k, opts: opts}
	history := &History{kv: k}
	documents := &Documents{kv: k, opts: opts, secrets: secrets}
	return &Store{
		kv: k,
		Indexes: &Indexes{docs: docs, batch: batch, archive: archive, log: log,
			reshard: &resharder{kv: k, docs: docs, locks: locks}},
		Documents:   documents,
		Archive:     archive,
		Restores:    &Restores{kv: k, opts: opts, log: log, archive: archive, reader: reader, history: history, docs: documents, secrets: secrets, batch: batch},
		Maintenance: &Maintenance{kv: k, docs: docs, locks: locks, log: log},
		History:     history,
		RunLog:      &RunLog{kv: k},
		Leases:      &Leases{kv: k},
		State:       &State{kv: k},
		Secrets:     secrets,
		removal:     &remover{kv: k, opts: opts.Backup, archive: archive, reader: reader, batch: batch},
	}
}
