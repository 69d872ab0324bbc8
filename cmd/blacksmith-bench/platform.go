package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/cf"
	ccsim "github.com/blacksmith-reconciler/blacksmith/cf/sim"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The platform scenario: what the platform cross-check
// (reconciler.Options.Platform: each whole run reads the broker's plans and
// managed instances from the Cloud Controller, beside the Directors'
// listing) adds to a steady run. On the deployments the steady run left,
// with the Cloud Controller simulator (a child process, as the Director's)
// holding a managed instance for each of them (all in step), two
// reconcilers of their own run steady runs in turn, one without and one
// with the cross-check, platformRuns each after a first one of each (not
// measured). Both run without the health sweep: it costs the same either
// way (at 10,000 deployments some 20 s of task polls a run) and would bury
// the difference.
const (
	platformRuns   = 5
	platformBroker = "blacksmith"
	// platformAdded bounds, in seconds, what the cross-check adds to a
	// steady run: the median with it less the median without.
	platformAdded = 0.5
	// platformRegistering is how many instances are registered with the
	// Cloud Controller simulator at once.
	platformRegistering = 8
)

// platformFigures are the platform scenario's own figures in a BENCH line
// (nil, and absent, for the others); the line's other figures are the
// last run's with the cross-check, its wall the median of those runs.
type platformFigures struct {
	// RunsEach is the number of measured steady runs of each reconciler.
	RunsEach int `json:"runs_each"`
	// WithoutS and WithS are the measured runs' walls without and with the
	// cross-check, in the order they ran (alternating, without first).
	WithoutS       []float64 `json:"without_s"`
	WithS          []float64 `json:"with_s"`
	WithoutMedianS float64   `json:"without_median_s"`
	WithMedianS    float64   `json:"with_median_s"`
	// AddedS is WithMedianS less WithoutMedianS.
	AddedS float64 `json:"added_s"`
	// CCRequests are the most Cloud Controller requests of a run with the
	// cross-check as its summary counts them (Summary.Platform.Requests),
	// CCRequestsCounted as the simulator does, CCRequestBound the most
	// allowed (3 + a list request per cf.DefaultPerPage instances);
	// CCRoutes are the last run's requests by route.
	CCRequests        int            `json:"cc_requests"`
	CCRequestsCounted int            `json:"cc_requests_counted"`
	CCRequestBound    int            `json:"cc_request_bound"`
	CCRoutes          map[string]int `json:"cc_routes"`
	// CCCPUS is the Cloud Controller simulator's CPU time per run with the cross-check.
	CCCPUS float64 `json:"cc_cpu_s"`
	// ReadS are the runs' Summary.Platform.Seconds (the read's own time,
	// beside the listing), ReadMedianS their median.
	ReadS       []float64 `json:"platform_read_s"`
	ReadMedianS float64   `json:"platform_read_median_s"`
	// The last run's report: its state, whether it read the platform, the
	// instances the platform lists and the counts by state.
	State     string         `json:"platform_state"`
	Fresh     bool           `json:"platform_fresh"`
	Instances int            `json:"platform_instances"`
	Counts    map[string]int `json:"platform_counts"`
	Unchecked int            `json:"platform_unchecked"`
	// Problems are what made a measured run other than a steady one with
	// every instance in step (the first maxProblems of ProblemCount).
	ProblemCount int      `json:"platform_problem_count"`
	Problems     []string `json:"platform_problems,omitempty"`
}

// platform runs the platform scenario over the n deployments of sims and
// the records of store; it moves clock on to where its runs left it. The
// result carries figures unless the scenario could not be set up; the error
// says a run failed or was not a steady one with every instance in step.
func (b *bench) platform(ctx context.Context, n int, sims []*simProcess, store *vault.Store, c *clock) (result, error) {
	cc, err := startSim(ctx, b.ccBin, 0, b.f.latency, "-broker", platformBroker)
	if err != nil {
		return result{}, err
	}
	defer cc.stop()
	if err := registerInstances(ctx, cc, sims); err != nil {
		return result{}, fmt.Errorf("registering the instances with the Cloud Controller: %w", err)
	}
	client, err := cf.New(cf.Options{API: cc.url, ClientID: ccsim.DefaultClientID, ClientSecret: ccsim.DefaultClientSecret, Logger: b.log})
	if err != nil {
		return result{}, err
	}
	// The reconcilers' time goes on as the clock's does, so that the
	// read's seconds (the reconciler's clock) are real ones.
	live := newLiveClock(c.now())
	defer func() { c.set(live.now()) }()
	noSweep := func(o *reconciler.Options) { o.Config.HealthSweep = 0 }
	without, cfg, err := b.manager(sims, store, live.now, noSweep)
	if err != nil {
		return result{}, err
	}
	with, _, err := b.manager(sims, store, live.now, noSweep, func(o *reconciler.Options) {
		o.Platform = &reconciler.PlatformOptions{Reader: client, BrokerName: platformBroker, Requests: client.Requests}
	})
	if err != nil {
		return result{}, err
	}
	for _, m := range []*reconciler.Manager{without, with} { // each one's first run
		live.advance(cfg.Interval)
		if _, err := m.RunOnce(ctx, report.RunOptions{Reason: "bench platform first run"}); err != nil {
			return result{}, err
		}
	}
	p := &platformFigures{RunsEach: platformRuns, CCRequestBound: 3 + (n+cf.DefaultPerPage-1)/cf.DefaultPerPage}
	var last result
	for i := range 2 * platformRuns {
		m, withPlatform := without, i%2 == 1
		if withPlatform {
			m = with
		}
		live.advance(cfg.Interval)
		if err := cc.reset(ctx); err != nil {
			return result{}, err
		}
		ccCPU, vaultCPU, simCPU := processCPU(cc.cmd.Process.Pid), processCPU(b.vault.Pid()), simsCPU(sims)
		r, err := measure(ctx, "platform", n, b.f.latency, cfg.MaxConcurrency, sims, store, m)
		if err != nil {
			return result{}, err
		}
		r.VaultCPUS = (processCPU(b.vault.Pid()) - vaultCPU).Seconds()
		r.SimCPUS = (simsCPU(sims) - simCPU).Seconds()
		if !withPlatform {
			p.WithoutS = append(p.WithoutS, r.WallS)
			p.check(fmt.Sprintf("run %d without", i/2+1), r, n)
			continue
		}
		p.CCCPUS += (processCPU(cc.cmd.Process.Pid) - ccCPU).Seconds() / platformRuns
		st, err := cc.stats(ctx)
		if err != nil {
			return result{}, err
		}
		p.WithS = append(p.WithS, r.WallS)
		p.observe(fmt.Sprintf("run %d with", i/2+1), r, st.Requests, n)
		last = r
	}
	p.WithoutMedianS, p.WithMedianS, p.ReadMedianS = median(p.WithoutS), median(p.WithS), median(p.ReadS)
	p.AddedS = p.WithMedianS - p.WithoutMedianS
	r := last
	r.WallS, r.platformFigures = p.WithMedianS, p
	r.judge("platform", b.f.latency, cfg.MaxConcurrency)
	if p.ProblemCount > 0 {
		return r, fmt.Errorf("%d problems, the first: %s", p.ProblemCount, p.Problems[0])
	}
	return r, nil
}

// check notes what makes run r other than a steady one.
func (p *platformFigures) check(run string, r result, n int) {
	switch {
	case r.Errors > 0:
		p.problem(run, "%d errors", r.Errors)
	case !r.Converged || r.ManifestsFetched > 0 || r.FeedMode != "watch" || r.Matched != n:
		p.problem(run, "not a steady run: converged %t, %d manifests fetched, feed %s, %d matched",
			r.Converged, r.ManifestsFetched, r.FeedMode, r.Matched)
	}
}

// observe takes the figures of run r with the cross-check, the simulator
// having counted routes of it, and notes what is wrong with it: not a
// steady run, no fresh whole read, the counts disagreeing, an instance
// not in step.
func (p *platformFigures) observe(run string, r result, routes map[string]int, n int) {
	p.check(run, r, n)
	rep := r.platformRead
	if rep == nil {
		p.problem(run, "no platform report")
		return
	}
	counted := 0
	for _, c := range routes {
		counted += c
	}
	p.CCRequests, p.CCRequestsCounted = max(p.CCRequests, rep.Requests), max(p.CCRequestsCounted, counted)
	p.CCRoutes, p.ReadS = routes, append(p.ReadS, rep.Seconds)
	p.State, p.Fresh, p.Instances, p.Counts, p.Unchecked = rep.State, rep.Fresh, rep.Instances, rep.Counts, rep.Unchecked
	switch {
	case rep.State != "known" || !rep.Fresh:
		p.problem(run, "the platform %s (fresh %t): %s", rep.State, rep.Fresh, rep.Reason)
	case rep.Requests != counted:
		p.problem(run, "the summary counts %d Cloud Controller requests, the simulator %d", rep.Requests, counted)
	case rep.Counts[report.InStep] != n:
		p.problem(run, "%d of %d instances in step: %v, %d unchecked", rep.Counts[report.InStep], n, rep.Counts, rep.Unchecked)
	}
}

func (p *platformFigures) problem(run, format string, args ...any) {
	p.ProblemCount++
	if len(p.Problems) < maxProblems {
		p.Problems = append(p.Problems, run+": "+fmt.Sprintf(format, args...))
	}
}

// judgePlatform sets the platform scenario's lower bound (the median run
// without the cross-check, so that the ratio is with against without) and
// target.
func (r *result) judgePlatform() {
	p := r.platformFigures
	if p == nil {
		r.Target, r.TargetMet = "no platform figures", false
		return
	}
	r.LowerBoundS = p.WithoutMedianS
	r.Target = fmt.Sprintf("steady runs (health sweep off), median with the platform cross-check < %.1f s over without; "+
		"<= 3 + ceil(n/%d) Cloud Controller requests a run, as the simulator counts them; every instance in step; every run steady, no error",
		platformAdded, cf.DefaultPerPage)
	r.TargetMet = p.ProblemCount == 0 && p.AddedS < platformAdded && p.CCRequests <= p.CCRequestBound &&
		p.CCRequestsCounted == p.CCRequests && len(p.WithS) == p.RunsEach && len(p.WithoutS) == p.RunsEach
}

// registerInstances registers with the Cloud Controller simulator cc a
// managed instance of the broker for each deployment of sims, in step: its
// guid the deployment's instance id, its plan the deployment's.
func registerInstances(ctx context.Context, cc *simProcess, sims []*simProcess) error {
	var names []string
	for _, s := range sims {
		var listing []struct {
			Name string `json:"name"`
		}
		if err := s.director(ctx, "/deployments?exclude_configs=true&exclude_releases=true&exclude_stemcells=true", &listing); err != nil {
			return err
		}
		for _, d := range listing {
			names = append(names, d.Name)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(platformRegistering)
	for _, name := range names {
		plan, id, ok := splitDeployment(name)
		if !ok {
			return fmt.Errorf("deployment %q is not {plan id}-{instance id}", name)
		}
		body, _ := json.Marshal(ccsim.NamedInstance{GUID: id, Name: "bench-" + id, Broker: platformBroker, Plan: plan,
			Org: "bench-org", Space: "bench-space"})
		g.Go(func() error { return cc.admin(gctx, http.MethodPost, "/_sim/service_instances", string(body), nil) })
	}
	return g.Wait()
}

// splitDeployment splits a deployment name {plan id}-{instance id} (a
// 36-character guid).
func splitDeployment(name string) (plan, id string, ok bool) {
	const guid = 36
	if len(name) < guid+2 || name[len(name)-guid-1] != '-' {
		return "", "", false
	}
	return name[:len(name)-guid-1], name[len(name)-guid:], true
}

// median is the middle of xs (the mean of the two middle ones of an even
// number); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// liveClock is a reconciler's clock that goes on in real time from where
// it was set, moved on by a scheduled interval between runs.
type liveClock struct {
	mu   sync.Mutex
	base time.Time
	from time.Time
}

func newLiveClock(t time.Time) *liveClock { return &liveClock{base: t, from: time.Now()} }

func (c *liveClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base.Add(time.Since(c.from))
}

func (c *liveClock) advance(d time.Duration) { c.mu.Lock(); c.base = c.base.Add(d); c.mu.Unlock() }
