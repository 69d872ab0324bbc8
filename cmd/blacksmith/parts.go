package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/cf"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/internal/lease"
	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/operator"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The wiring point checks that the real parts fit the interfaces their
// users declare.
var (
	_ broker.Director       = (*bosh.Client)(nil)
	_ broker.DirectorReader = (*bosh.Client)(nil)
	_ broker.Store          = (*vault.Store)(nil)
	_ operator.Reconciler   = (*reconciler.Manager)(nil)
	_ ports.Director        = (*bosh.Client)(nil)
	_ ports.Tasks           = (*bosh.Client)(nil)
	_ ports.Deployer        = (*bosh.Client)(nil)
	_ ports.Operations      = (*broker.Broker)(nil)
	_ ports.Renderer        = (*broker.Broker)(nil)
	_ lease.Store           = (*vault.Leases)(nil)
	_ ports.PlatformReader  = (*cf.Client)(nil)
)

// parts are what every command builds from the configuration without I/O.
type parts struct {
	cfg       *config.Config
	log       *slog.Logger
	catalog   *catalog.Catalog
	registry  *prometheus.Registry
	oneShot   bool           // a command that runs once, beside the daemons (its own lease holder name)
	directors []*bosh.Client // every configured Director, the first the default (bosh as a list)
	platform  *cf.Client     // nil: no cf.api
	notifier  *notify.Notifier
}

// newParts loads the catalog, creates the metrics registry (with the Go and
// process collectors) and the Director client.
func newParts(cfg *config.Config, log *slog.Logger) (*parts, error) {
	cat, err := catalog.Load(cfg.Catalog.Dirs...)
	if err != nil {
		return nil, fmt.Errorf("loading the catalog: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	bm := bosh.NewMetrics(reg)
	var clients []*bosh.Client
	for _, b := range cfg.Directors() {
		c, err := newDirector(b, bm, log)
		if err != nil {
			return nil, err
		}
		clients = append(clients, c)
	}
	var names []string
	for _, b := range cfg.Directors() {
		names = append(names, b.Name)
	}
	if err := broker.CheckPlanDirectors(cat, names); err != nil {
		return nil, fmt.Errorf("loading the catalog: %w", err)
	}
	notifier, err := notify.New(notify.Options{Webhooks: webhooks(cfg.Notifications), Registerer: reg,
		Logger: log.With("component", "notify")})
	if err != nil {
		return nil, fmt.Errorf("notifications: %w", err)
	}
	platform, err := newPlatform(cfg.CF, reg, log)
	if err != nil {
		return nil, err
	}
	return &parts{cfg: cfg, log: log, catalog: cat, registry: reg, directors: clients, platform: platform, notifier: notifier}, nil
}

// newPlatform is the Cloud Controller's client; nil without cf.api.
func newPlatform(c config.CFConfig, reg prometheus.Registerer, log *slog.Logger) (*cf.Client, error) {
	if !c.Enabled() {
		return nil, nil
	}
	caPEM, err := c.CACertPEM()
	if err != nil {
		return nil, fmt.Errorf("reading cf.ca_cert: %w", err)
	}
	client, err := cf.New(cf.Options{API: c.API, ClientID: c.ClientID, ClientSecret: c.ClientSecret, CACert: string(caPEM),
		SkipSSLValidation: c.SkipSSLValidation, Timeout: c.Timeout, Registerer: reg, Logger: log.With("component", "cf")})
	if err != nil {
		return nil, fmt.Errorf("cf: %w", err)
	}
	return client, nil
}

// platformOptions turn the reconciler's platform cross-check on; nil
// without cf.api.
func (p *parts) platformOptions() *reconciler.PlatformOptions {
	if p.platform == nil {
		return nil
	}
	return &reconciler.PlatformOptions{Reader: p.platform, BrokerName: p.cfg.CF.BrokerName,
		CheckInterval: p.cfg.CF.CheckInterval, Requests: p.platform.Requests}
}

// newDirector is the client of one configured Director (its own rate
// limit, in-flight cap and director label).
func newDirector(b config.BOSHConfig, m *bosh.Metrics, log *slog.Logger) (*bosh.Client, error) {
	caPEM, err := b.CACertPEM()
	if err != nil {
		return nil, fmt.Errorf("reading the ca_cert of Director %s: %w", b.Name, err)
	}
	return bosh.New(bosh.Options{
		Name:              b.Name,
		Address:           b.Address,
		Username:          b.Username,
		Password:          b.Password,
		ClientID:          b.ClientID,
		ClientSecret:      b.ClientSecret,
		CACert:            string(caPEM),
		SkipSSLValidation: b.SkipSSLValidation,
		Timeout:           b.Timeout,
		RateLimit:         b.RateLimit,
		RateBurst:         b.RateBurst,
		MaxInFlight:       b.MaxInFlight,
		Metrics:           m,
		Logger:            log.With("component", "bosh"),
	})
}

// webhooks are the configured receivers: notifications.webhook_url (every
// event) first, then notifications.webhooks in order.
func webhooks(n config.NotificationsConfig) []notify.Webhook {
	var out []notify.Webhook
	if n.WebhookURL != "" {
		out = append(out, notify.Webhook{URL: n.WebhookURL, Secret: n.WebhookSecret})
	}
	for _, w := range n.Webhooks {
		out = append(out, notify.Webhook{URL: w.URL, Events: w.Events, Secret: w.Secret})
	}
	return out
}

// connectVault connects to Vault once and migrates a legacy index.
func connectVault(ctx context.Context, cfg *config.Config) (*vault.Store, error) {
	store, err := vault.New(ctx, vaultOptions(cfg))
	if err != nil {
		return nil, err
	}
	if _, err := store.Maintenance.Migrate(ctx); err != nil {
		store.Close()
		return nil, fmt.Errorf("migrating the legacy index: %w", err)
	}
	return store, nil
}

// vaultOptions are the Store's options from the configuration.
func vaultOptions(cfg *config.Config) vault.Options {
	b := cfg.Reconciler.Backup
	return vault.Options{
		Address:           cfg.Vault.Address,
		Token:             cfg.Vault.Token,
		Mount:             cfg.Vault.Mount,
		CACert:            cfg.Vault.CACert,
		SkipSSLValidation: cfg.Vault.SkipSSLValidation,
		KVVersion:         cfg.Vault.KVVersion,
		MaxRecordBytes:    cfg.Vault.MaxRecordBytes,
		Backup:            &vault.BackupOptions{Enabled: b.Enabled, Retention: b.Retention, Cleanup: b.Cleanup, Path: b.Path},
		Logger:            slog.Default().With("component", "vault"),
	}
}

// manager creates the reconciler on store; the broker settles stuck
// operations and renders an owned instance's manifest for a redeploy.
func (p *parts) manager(store *vault.Store, b *broker.Broker) (*reconciler.Manager, error) {
	ha, err := p.ha(store)
	if err != nil {
		return nil, err
	}
	return reconciler.New(reconciler.Options{
		HA:         ha,
		Config:     p.cfg.Reconciler,
		Directors:  p.reconcilerDirectors(),
		Operations: b,
		Renderer:   b,
		Hold:       holdInstance(b),
		Notifier:   p.notifier,
		Store:      store,
		Catalog:    p.catalog,
		Registerer: p.registry,
		Platform:   p.platformOptions(),
		Logger:     p.log.With("component", "reconciler"),
	})
}

// holdInstance is the broker's hold of an instance, for the reconciler's
// fleet upgrades: another daemon holding it is reconciler.ErrInstanceBusy.
func holdInstance(b *broker.Broker) func(context.Context, string) (context.Context, func(), error) {
	return func(ctx context.Context, id string) (context.Context, func(), error) {
		ctx, release, err := b.HoldInstance(ctx, id)
		if errors.Is(err, broker.ErrInstanceBusy) {
			err = fmt.Errorf("%w: %w", reconciler.ErrInstanceBusy, err)
		}
		return ctx, release, err
	}
}

// ha is the reconciler's election when ha.enabled: nil otherwise.
func (p *parts) ha(store *vault.Store) (*reconciler.HAOptions, error) {
	h := p.cfg.HA
	if !h.Enabled {
		return nil, nil
	}
	if store.KVVersion() != 2 {
		return nil, fmt.Errorf("ha.enabled needs a KV v2 mount (check-and-set); %s is KV v%d", store.Mount(), store.KVVersion())
	}
	id, err := p.haID()
	if err != nil {
		return nil, err
	}
	return &reconciler.HAOptions{Leases: store.Leases, ID: id, TTL: h.LeaseTTL}, nil
}

// haID is this daemon's name among those sharing the Vault mount: ha.id,
// else the host name and broker.listen. A command that runs once holds
// leases under a name of its own (the daemon's, "/cli-" and its process
// id): with the daemon's name, run on the daemon's VM, it would take the
// daemon's lease as its own renewal and release it at its end.
func (p *parts) haID() (string, error) {
	id := p.cfg.HA.ID
	if id == "" {
		host, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("ha.id is empty and the host name cannot be read: %w", err)
		}
		id = host + "/" + p.cfg.Broker.Listen
	}
	if p.oneShot {
		id += "/cli-" + strconv.Itoa(os.Getpid())
	}
	return id, nil
}

// broker creates the broker on store; with ha.enabled its limits hold
// across the daemons sharing the mount.
func (p *parts) broker(store *vault.Store) (*broker.Broker, error) {
	var shared broker.LimitLeases
	var holder string
	if p.cfg.HA.Enabled && store.KVVersion() == 2 {
		id, err := p.haID()
		if err != nil {
			return nil, err
		}
		shared, holder = store.Leases, id
	}
	return broker.New(broker.Options{
		SharedLimits: shared,
		HolderID:     holder,
		Catalog:      p.catalog,
		Directors:    p.brokerDirectors(),
		Store:        store,
		History:      vault.HistoryOptions{Keep: p.cfg.Reconciler.History.Keep, MaxAge: p.cfg.Reconciler.History.MaxAge},
		Username:     p.cfg.Broker.Username,
		Password:     p.cfg.Broker.Password,
		Limits: broker.Limits{
			MaxBodyBytes:       int64(p.cfg.Broker.MaxBodyBytes),
			MaxParametersBytes: p.cfg.Broker.MaxParametersBytes,
			MaxParametersDepth: p.cfg.Broker.MaxParametersDepth,
			MaxIDLength:        p.cfg.Broker.MaxIDLength,
		},
		Metrics: broker.NewMetrics(p.registry),
		Logger:  p.log.With("component", "broker"),
	})
}

// oneShotManager builds, for a command that runs once (reconcile, restore
// --redeploy, rebuild-index), the reconciler on store, with the broker that
// settles stuck operations.
func oneShotManager(cfg *config.Config, log *slog.Logger, store *vault.Store) (*reconciler.Manager, error) {
	p, err := newParts(cfg, log)
	if err != nil {
		return nil, fmt.Errorf("starting: %w", err)
	}
	p.oneShot = true
	b, err := p.broker(store)
	if err != nil {
		return nil, fmt.Errorf("creating the broker: %w", err)
	}
	m, err := p.manager(store, b)
	if err != nil {
		return nil, fmt.Errorf("creating the reconciler: %w", err)
	}
	return m, nil
}

// reconcilerDirectors are the Directors, for the reconciler.
func (p *parts) reconcilerDirectors() []ports.NamedDirector {
	var out []ports.NamedDirector
	for _, c := range p.directors {
		out = append(out, ports.NamedDirector{Name: c.Name(), Director: c, Tasks: c, Deployer: c})
	}
	return out
}

// brokerDirectors are the Directors, for the broker.
func (p *parts) brokerDirectors() []broker.NamedDirector {
	var out []broker.NamedDirector
	for _, c := range p.directors {
		out = append(out, broker.NamedDirector{Name: c.Name(), Director: c, Reader: c})
	}
	return out
}
