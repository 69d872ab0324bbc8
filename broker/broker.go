package broker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/pivotal-cf/brokerapi/v11/domain"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Director creates and deletes deployments and reports on their tasks.
type Director interface {
	// Manifest and Diff preview a deploy (operation.Prepare): what runs,
	// and what the Director says deploying another manifest changes.
	Manifest(ctx context.Context, name string) (string, error)
	Diff(ctx context.Context, name string, manifest []byte) (bosh.DeploymentDiff, error)
	Deploy(ctx context.Context, manifest []byte) (bosh.Task, error)
	DeleteDeployment(ctx context.Context, name string, force bool) (bosh.Task, error)
	// ChangeState stops (hard) or starts a deployment's instances: an
	// orphan deployment's retirement.
	ChangeState(ctx context.Context, name, state string) (bosh.Task, error)
	Task(ctx context.Context, id int) (bosh.Task, error)
}

// DirectorReader finds tasks by context id (an operation whose task id was
// never recorded) and lists a deployment's VMs (for binding credentials).
type DirectorReader interface {
	Tasks(ctx context.Context, q bosh.TaskQuery) ([]bosh.Task, error)
	VMs(ctx context.Context, name string) ([]bosh.VM, error)
}

// Records reads and writes the index of service instances.
type Records interface {
	Record(ctx context.Context, id string) (*vault.Record, error)
	Index(ctx context.Context) (*vault.Index, error)
	Update(ctx context.Context, changes map[string]vault.Change) (vault.UpdateResult, error)
}

// Secrets reads and writes secrets under the Vault mount: an instance's
// generated secrets and a binding's credentials are created once
// (CreateSecret, check-and-set), the list of an instance's bindings changed
// by check-and-set (UpdateSecret).
type Secrets interface {
	Secret(ctx context.Context, path string) (map[string]any, bool, error)
	PutSecret(ctx context.Context, path string, data map[string]any) error
	CreateSecret(ctx context.Context, path string, data map[string]any) error
	UpdateSecret(ctx context.Context, path string, change func(cur map[string]any, ok bool) (map[string]any, error)) error
}

// History is an instance's history: appended to (AppendEvent), pruned to
// the retention, and asked when an event of a kind was last appended
// (LastEvent: a deprovision, once the record is gone), and read (Events:
// whether a binding was unbound). It stays when the
// instance goes.
type History interface {
	AppendEvent(ctx context.Context, id string, e vault.Event) error
	PruneEvents(ctx context.Context, id string, opts vault.HistoryOptions, now time.Time) (int, error)
	LastEvent(ctx context.Context, id, kind string) (time.Time, bool, error)
	Events(ctx context.Context, id string, limit int) ([]vault.Event, error)
}

// Store is everything the broker keeps in Vault: records (backed up when an
// operation succeeds), manifests, secrets and each instance's history.
// Nothing is deleted without a backup: an instance goes with RemoveAll (one
// backup holding its record, metadata, manifest and every secret), a binding
// with DeleteSecretsBackedUp.
type Store interface {
	Records
	Secrets
	History
	Backups
	Documents
}

// Backups are an instance's backups: taken (of its records, of everything,
// of what its Director runs), listed, and a secret read back from one.
type Backups interface {
	Backup(ctx context.Context, id string) (string, error)
	BackupAll(ctx context.Context, id string) (string, error)
	BackupRunning(ctx context.Context, id, running string) (string, error)
	Backups(ctx context.Context, id string) ([]string, error)
	BackupSecret(ctx context.Context, id, backupID, path string) (map[string]any, bool, error)
}

// Documents are an instance's other documents: its manifest, the
// allowances an operator gave it, and its removal (records, secrets and
// bindings' credentials, each backed up first).
type Documents interface {
	Manifest(ctx context.Context, id string) (string, bool, error)
	PutManifest(ctx context.Context, id, text string) error
	// AllowedNow are the classes of guarded change an operator allowed
	// for the instance's operations (blacksmith allow-changes), nil: none.
	AllowedNow(ctx context.Context, id string, now time.Time) ([]string, error)
	RemoveAll(ctx context.Context, id string) (string, error)
	DeleteSecretsBackedUp(ctx context.Context, id string, paths ...string) (string, error)
}

// Options configures a Broker. Defaults are filled in by New.
type Options struct {
	// Catalog is the services and plans offered. Required.
	Catalog *catalog.Catalog
	// Directors are the BOSH Directors, in configuration order: a plan's
	// new instances go to the one its plan.yml names, else the first; with
	// several, their records name it, and an instance's later operations go
	// to the Director its record names. Required: at least one, each with
	// both clients; a single one named "" is named "default", each of
	// several needs a name of its own.
	Directors []NamedDirector
	// Store keeps the records, manifests and secrets. Required.
	Store Store
	// Username and Password guard /v2/* (the daemon puts the operator's
	// /b/reconcile behind them too). Required.
	Username, Password string
	// History is the retention of each instance's history
	// (reconciler.history): the broker prunes an instance's history to it
	// after each event it appends, so that binds and unbinds do not grow it
	// for good. Default zero: kept whole.
	History vault.HistoryOptions
	// LostTaskGrace is how long an operation whose BOSH task id was never
	// recorded (the Director refused or could not be reached, or the daemon
	// died before recording it) waits for a task with its context id to show
	// up before last_operation reports it failed. Default 2m.
	LostTaskGrace time.Duration
	// SharedLimits, with HolderID, are the leases in Vault that make the
	// broker safe across every daemon sharing the Vault mount: the count of
	// a plan's or service's instances and the new record's write are one
	// step (a lease around it), so that together the daemons never exceed
	// a limit; and the operations on one instance (provision, update,
	// deprovision, bind, unbind, and a last_operation or SettleOperation
	// that records an outcome) are serialised (a lease per instance, see
	// InstanceLeaseTTL). Default nil: both within this process only.
	SharedLimits LimitLeases
	// HolderID names this daemon in SharedLimits' leases; required with
	// SharedLimits, distinct for every daemon. Default "".
	HolderID string
	// InstanceLeaseTTL is how long an instance's lease in SharedLimits lasts
	// unless renewed; an operation renews it every third of it while it
	// runs. It bounds how long a daemon that died during an operation keeps
	// the others from the instance. Each daemon judges expiry on its own
	// wall clock: the daemons' clocks must agree to well within it (NTP).
	// Default 15s.
	InstanceLeaseTTL time.Duration
	// InstanceLeaseWait bounds how long an operation waits for an
	// instance's lease that another daemon holds; then it is refused with
	// 422 ConcurrencyError (last_operation answers the recorded state,
	// SettleOperation ErrInstanceBusy). Default 5s.
	InstanceLeaseWait time.Duration
	// DirectorTimeout bounds the Director and Vault calls an operation makes
	// after its record is written; they run even when the platform hangs up.
	// Default 2m.
	DirectorTimeout time.Duration
	// RememberDeleted is how long last_operation answers "succeeded" for an
	// instance a deprovision removed (the spec: a broker SHOULD NOT forget
	// an operation's state at once), before it answers 410 Gone. Default 1h.
	RememberDeleted time.Duration
	// DirectorRetries is how many more times a call to the Director is
	// made after a transient fault (5xx, 429, no answer, a timeout) before
	// an operation or a bind fails, within the operation's deadline.
	// Default DefaultDirectorRetries; negative: none.
	DirectorRetries int
	// Limits bound what one request may hold. Default DefaultLimits.
	Limits Limits
	// Metrics receives the broker's series. Default nil: not counted.
	Metrics *Metrics
	// Logger receives the operator's log. Default slog.Default().
	Logger *slog.Logger
	// Now is the clock of an orphan deployment's retirement (when its VMs
	// were stopped, whether its deletion is due). Default time.Now.
	Now func() time.Time
}

// Broker implements the Open Service Broker API (domain.ServiceBroker) and
// the few methods the reconciler and the operator call. It is safe for
// concurrent use. Its methods are the OSB handlers and those methods: the
// work behind them is done by its parts (parts.go), each a type holding only
// what it uses: the instance's hold (locker), the limits (limiter), the
// operation's marks (recorder), the deploys (deployer), the renderings
// (renderer), the bindings' documents (bindingStore), provision and update
// (provisioner), deprovision (remover), last_operation (settler), bind and
// unbind (binder, bindingSettler), binding recovery (recoverer), retirement
// (retirer), binding rotation (rotator) and the history (history).
type Broker struct {
	opts      Options
	log       *slog.Logger
	report    reporter
	records   records
	locks     *locker
	limits    *limiter
	ops       *recorder
	history   *history
	bindings  *bindingStore
	render    *renderer
	provision *provisioner
	remove    *remover
	settle    *settler
	bind      *binder
	bindOps   *bindingSettler
	recovery  *recoverer
	retire    *retirer
	rotate    *rotator
}

var _ domain.ServiceBroker = (*Broker)(nil)

// ErrInvalidOptions is returned by New when a required option is missing.
var ErrInvalidOptions = errors.New("invalid broker options")

// New checks opts, fills in the defaults and returns a Broker.
func New(opts Options) (*Broker, error) {
	opts = withDefaults(opts)
	var missing []error
	if opts.Catalog == nil {
		missing = append(missing, errors.New("catalog is required"))
	}
	if len(opts.Directors) == 0 {
		missing = append(missing, errors.New("a director is required"))
	}
	if opts.Store == nil {
		missing = append(missing, errors.New("store is required"))
	}
	if opts.SharedLimits != nil && opts.HolderID == "" {
		missing = append(missing, errors.New("holder id is required with shared limits"))
	}
	if opts.InstanceLeaseTTL < 0 || opts.InstanceLeaseWait < 0 {
		missing = append(missing, errors.New("instance lease ttl and wait must not be negative"))
	}
	if err := checkDirectors(opts); err != nil {
		missing = append(missing, err)
	}
	if opts.Username == "" || opts.Password == "" {
		missing = append(missing, errors.New("username and password are required"))
	}
	if err := errors.Join(missing...); err != nil {
		return nil, errors.Join(ErrInvalidOptions, err)
	}
	return assemble(opts), nil
}

// withDefaults fills in the defaults documented on Options.
func withDefaults(o Options) Options {
	if len(o.Directors) == 1 && o.Directors[0].Name == "" {
		o.Directors = []NamedDirector{o.Directors[0]}
		o.Directors[0].Name = "default"
	}
	if o.LostTaskGrace == 0 {
		o.LostTaskGrace = 2 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.DirectorTimeout == 0 {
		o.DirectorTimeout = 2 * time.Minute
	}
	if o.RememberDeleted == 0 {
		o.RememberDeleted = time.Hour
	}
	switch {
	case o.DirectorRetries == 0:
		o.DirectorRetries = DefaultDirectorRetries
	case o.DirectorRetries < 0:
		o.DirectorRetries = 0
	}
	if o.InstanceLeaseTTL == 0 {
		o.InstanceLeaseTTL = defaultInstanceLeaseTTL
	}
	if o.InstanceLeaseWait == 0 {
		o.InstanceLeaseWait = defaultInstanceLeaseWait
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Limits = o.Limits.withDefaults()
	return o
}

// detached returns a context that outlives the platform's request (which
// may be cancelled when the platform gives up) but is bounded by timeout
// (Options.DirectorTimeout), for the work that follows a record's write; it
// ends too when the instance's lease is lost (another broker took the
// instance over).
func detached(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	d, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	if lost, ok := ctx.Value(leaseLostKey{}).(<-chan struct{}); ok { // the instance's lease: stop when it is lost
		go func() {
			select {
			case <-lost:
				cancel()
			case <-d.Done():
			}
		}()
	}
	return d, cancel
}
