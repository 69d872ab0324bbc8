package sim

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Auth modes of the simulator.
const (
	AuthBasic = "basic"
	AuthUAA   = "uaa"
)

// Defaults filled in by New for zero Options fields.
const (
	DefaultAddr         = "127.0.0.1:0"
	DefaultUsername     = "admin"
	DefaultPassword     = "admin"
	DefaultClientID     = "blacksmith"
	DefaultClientSecret = "secret"
	DefaultTokenTTL     = 10 * time.Minute
	DefaultTaskDuration = 100 * time.Millisecond
	DefaultWorkers      = 3
	DefaultLockTimeout  = 10 * time.Second
	// DefaultAgentTimeout is how long the Director waits for an agent's
	// get_state in a vm-state task (jobs/vm_state.rb:4, TIMEOUT = 5).
	DefaultAgentTimeout = 5 * time.Second
	DefaultName         = "bosh-director-sim"
	DefaultEventsKept   = 10000
)

// ErrBadOptions is returned by New for options it cannot serve.
var ErrBadOptions = errors.New("bad simulator options")

// Options configures a Director. The zero value is a basic-auth simulator over
// plain HTTP on a free loopback port.
type Options struct {
	// Addr is the listen address. Default "127.0.0.1:0" (a free loopback port).
	Addr string
	// Auth is "basic" or "uaa". Default "basic".
	Auth string
	// Username and Password are the basic-auth credentials. Default "admin"/"admin".
	Username, Password string
	// ClientID and ClientSecret are the client credentials the built-in UAA
	// token endpoint (uaa mode) accepts. Default "blacksmith"/"secret".
	ClientID, ClientSecret string
	// ClientScopes are the scopes of the tokens it issues. Default ["bosh.admin"];
	// ["bosh.read"] gives a read-only client, any other scope a client the
	// Director refuses with code 600000.
	ClientScopes []string
	// TokenTTL is the lifetime of issued tokens, rounded up to whole seconds.
	// Default 10m.
	TokenTTL time.Duration
	// UAAURL is the UAA address /info advertises in uaa mode; its host must
	// be a loopback address, localhost or a name under .invalid, since
	// clients contact it. Default: the simulator's own URL, which serves
	// POST /oauth/token.
	UAAURL string
	// TLS serves HTTPS with a certificate signed by a CA generated at start.
	// Default false (plain HTTP).
	TLS bool
	// CACertPath is where the CA certificate PEM is written when TLS is on.
	// Default "" (not written; see CACertPEM).
	CACertPath string
	// Latency is added to every request except the /_sim admin API. Default 0.
	Latency time.Duration
	// Failures are injected from the start (see Faults.Inject). Default none.
	Failures []Failure
	// TaskDuration is how long a task stays processing. Default 100ms; a
	// negative value means no delay at all.
	TaskDuration time.Duration
	// Workers is how many tasks run at once; later tasks stay queued, as on a
	// real Director. Default 3.
	Workers int
	// DedicatedStatusWorker gives the first of several workers to the
	// urgent queue alone (vm-state tasks), as
	// director.enable_dedicated_status_worker does (jobs/director/spec:81-83,
	// templates/bpm.yml:55-59). Default false, the Director's default: every
	// worker takes the oldest task of either queue.
	DedicatedStatusWorker bool
	// AgentTimeout is how long a vm-state task waits for each answer of an
	// unresponsive agent: it asks three times (the first try and
	// GET_STATE_MAX_RETRIES = 2, agent_client.rb:15 and 31, each with
	// vm_state.rb's TIMEOUT), its VMs at once, so a deployment with an
	// unresponsive agent holds its worker 3 x AgentTimeout longer. Default
	// 5s, the Director's; a negative value means no wait.
	AgentTimeout time.Duration
	// LockTimeout is how long a task waits for its deployment's lock before
	// it ends in error. Default 10s.
	LockTimeout time.Duration
	// Releases and Stemcells are the releases ("name/version") and the
	// stemcells ("os/version") uploaded at start. When either is given, a
	// deploy is checked as the Director checks it (30005, 30006, 50003;
	// "latest" is the newest uploaded), and what the seeds, PutDeployment
	// and UploadRelease/UploadStemcell bring counts as uploaded too.
	// Default nil: every release and stemcell a manifest names counts as
	// uploaded.
	Releases, Stemcells []string
	// ErrandJobs are the jobs that run as errands wherever they are
	// colocated: the simulator knows no release's jobs, so none has the
	// bin/run a real release would give it. GET .../errands lists them
	// after the errand instance groups, and a run of one runs on every
	// instance with a VM of the groups that hold it. Default none.
	ErrandJobs []string
	// Errands are the outcomes errand runs are scripted to have from the
	// start (see ErrandOutcome; PUT /_sim/errands replaces them, POST
	// /_sim/reset brings them back). Default none: every run exits 0 with
	// a line of stdout.
	Errands []ErrandOutcome
	// Seed is the number of deployments created at start (no tasks, one
	// event each), see SeedDeployments; at most MaxSeed. Default 0.
	Seed int
	// SeedPlans are the plans seeded deployments are drawn from. Default
	// DefaultSeedPlans(): redis-small, redis-large, postgresql-small.
	SeedPlans []SeedPlan
	// ExternalHost is the host:port the Director believes it has, used in the
	// absolute Location of task redirects: a loopback address, localhost or a
	// name under .invalid (e.g. 127.0.0.2:25555), so that a client that
	// wrongly follows it reaches no real host. Default: its own listen address.
	ExternalHost string
	// EventsKept is how many events GET /events can reach: older ones are
	// dropped as the Director's scheduled cleanup drops them (see
	// Knobs.SetEventsKept). Default 10000, the Director's own default; a
	// negative value is refused.
	EventsKept int
	// NoEvents makes the Director record no event, as a Director at its
	// own default does: director.events.record_events defaults to false
	// (cloudfoundry/bosh jobs/director/spec:371-373, config.rb:208 and
	// 650-651), and then EventManager#create_event returns an event it
	// does not save (src/bosh-director/lib/bosh/director/api/event_manager.rb:26-29):
	// GET /events answers [] whatever happens. Default false: events are
	// recorded (bosh-deployment turns them on), as the project's runs assume
	// today.
	NoEvents bool
	// Name is the Director name in /info. Default "bosh-director-sim".
	Name string
	// UUID is the Director UUID in /info. Default: random.
	UUID string
	// Logger receives a line per finished task (debug level). Default: discards.
	Logger *slog.Logger
}

// SeedPlan is a service plan seeded deployments are drawn from (in JSON as
// POST /_sim/seed takes it).
type SeedPlan struct {
	// ServiceID goes into properties.blacksmith. No default.
	ServiceID string `json:"service_id"`
	// PlanID goes into properties.blacksmith, and the deployment is named
	// "{PlanID}-{instance uuid}". Required. It, the service id, the release
	// and the version are letters, digits, '.', '_', '+' and '-'.
	PlanID string `json:"plan_id"`
	// Release is the BOSH release (and the name of its main job). Required.
	Release string `json:"release"`
	// Version is the release version. Default "1.0.0".
	Version string `json:"version"`
	// Instances is the size of the main instance group, at most 1000.
	// Default (0) 1.
	Instances int `json:"instances"`
}

// DefaultSeedPlans are the plans used when Options.SeedPlans is empty.
func DefaultSeedPlans() []SeedPlan {
	return []SeedPlan{
		{ServiceID: "redis", PlanID: "redis-small", Release: "redis", Version: "16.1.0", Instances: 1},
		{ServiceID: "redis", PlanID: "redis-large", Release: "redis", Version: "16.1.0", Instances: 3},
		{ServiceID: "postgresql", PlanID: "postgresql-small", Release: "postgres", Version: "48", Instances: 1},
	}
}

// withDefaults fills in every default; it is the only place defaults live.
func (o Options) withDefaults() Options {
	o.Addr = or(o.Addr, DefaultAddr)
	o.Auth = or(o.Auth, AuthBasic)
	o.Username = or(o.Username, DefaultUsername)
	o.Password = or(o.Password, DefaultPassword)
	o.ClientID = or(o.ClientID, DefaultClientID)
	o.ClientSecret = or(o.ClientSecret, DefaultClientSecret)
	if len(o.ClientScopes) == 0 {
		o.ClientScopes = []string{"bosh.admin"}
	}
	if o.TokenTTL <= 0 {
		o.TokenTTL = DefaultTokenTTL
	}
	switch {
	case o.TaskDuration == 0:
		o.TaskDuration = DefaultTaskDuration
	case o.TaskDuration < 0:
		o.TaskDuration = 0
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	switch {
	case o.AgentTimeout == 0:
		o.AgentTimeout = DefaultAgentTimeout
	case o.AgentTimeout < 0:
		o.AgentTimeout = 0
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if len(o.SeedPlans) == 0 {
		o.SeedPlans = DefaultSeedPlans()
	}
	if o.EventsKept == 0 {
		o.EventsKept = DefaultEventsKept
	}
	o.Name = or(o.Name, DefaultName)
	o.UUID = or(o.UUID, newUUID())
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// validate refuses options the simulator cannot serve as asked.
func (o Options) validate() error {
	switch {
	case o.Auth != AuthBasic && o.Auth != AuthUAA:
		return fmt.Errorf("%w: auth %q is neither %q nor %q", ErrBadOptions, o.Auth, AuthBasic, AuthUAA)
	case o.CACertPath != "" && !o.TLS:
		return fmt.Errorf("%w: a CA certificate path (%s) is only written with TLS on", ErrBadOptions, o.CACertPath)
	case o.Seed < 0 || o.Seed > MaxSeed:
		return fmt.Errorf("%w: seed %d is not between 0 and %d", ErrBadOptions, o.Seed, MaxSeed)
	case o.EventsKept < 1:
		return fmt.Errorf("%w: events kept %d is less than 1", ErrBadOptions, o.EventsKept)
	}
	if err := o.validateHosts(); err != nil {
		return err
	}
	for _, p := range o.SeedPlans {
		if err := p.validate(); err != nil {
			return err
		}
	}
	for _, f := range o.Failures {
		if err := checkFailure(&f); err != nil {
			return err
		}
	}
	if slices.Contains(o.ErrandJobs, "") {
		return fmt.Errorf("%w: an errand job has no name", ErrBadOptions)
	}
	for _, e := range o.Errands {
		if err := e.check(); err != nil {
			return err
		}
	}
	_, err := parseUploads(o.Releases, o.Stemcells)
	return err
}

// validateHosts refuses an external host or UAA URL that could make a
// client contact a real host.
func (o Options) validateHosts() error {
	if o.ExternalHost != "" && !harmlessHost(hostOf(o.ExternalHost)) {
		return fmt.Errorf("%w: external host %q is neither loopback, localhost nor under .invalid", ErrBadOptions, o.ExternalHost)
	}
	if o.UAAURL == "" {
		return nil
	}
	u, err := url.Parse(o.UAAURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !harmlessHost(u.Hostname()) {
		return fmt.Errorf("%w: UAA URL %q is not http(s) on a loopback address, localhost or a name under .invalid", ErrBadOptions, o.UAAURL)
	}
	return nil
}

// harmlessHost says whether host is a loopback address, localhost or a name
// under .invalid: nothing outside this machine answers any of them.
func harmlessHost(host string) bool {
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	return h == "localhost" || strings.HasSuffix(h, ".localhost") || strings.HasSuffix(h, ".invalid")
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
