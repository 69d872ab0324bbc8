package reconciler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/platform"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// PlatformOptions turn the platform cross-check on: each run (at most every
// CheckInterval) reads the broker's instances from the platform and holds
// them against Vault's records and the Directors' deployments.
type PlatformOptions struct {
	// Reader reads the platform. Required.
	Reader ports.PlatformReader
	// BrokerName is the name the broker is registered under. Required.
	BrokerName string
	// CheckInterval is cf.check_interval: 0 reads the platform in every run.
	CheckInterval time.Duration
	// Requests counts Reader's requests so far (a read's are reported);
	// nil: not counted.
	Requests func() int64
}

// InstancePlatform is the platform's record of an instance, as the last
// whole read of the platform found it.
type InstancePlatform struct {
	// View is "known" (a whole read at ReadAt) or "unknown" (none yet).
	View   string    `json:"view"`
	ReadAt time.Time `json:"read_at,omitzero"`
	// Record is the platform's record; nil when that read did not find it.
	Record *report.PlatformRecord `json:"record"`
	// AbsentSince and Reads are its proof as an orphan deployment (absent:
	// not one).
	AbsentSince time.Time `json:"absent_since,omitzero"`
	Reads       int       `json:"reads,omitempty"`
}

// platformOf is the instance view's platform part; nil without a platform.
func platformOf(ctx context.Context, t *platform.Tracker, state memory.StateStore, id string, problems *[]string) *InstancePlatform {
	if t == nil {
		return nil
	}
	v := t.Last()
	if v == nil {
		return &InstancePlatform{View: report.PlatformUnknown}
	}
	ip := &InstancePlatform{View: report.PlatformKnown, ReadAt: v.ReadAt}
	if in, ok := v.Instances[id]; ok {
		ip.Record = in.Record()
	}
	var doc platform.Doc
	if _, err := state.ReadState(ctx, platform.DocName, &doc); err != nil {
		*problems = append(*problems, "platform: "+err.Error())
	} else if e, ok := doc.Absent[id]; ok {
		ip.AbsentSince, ip.Reads = time.Unix(e.Since, 0).UTC(), e.Reads
	}
	return ip
}

// platformMetrics are the cross-check's gauges, registered only with a
// platform configured (an unread platform is not a down one).
type platformMetrics struct {
	instances *prometheus.GaugeVec
	up        prometheus.Gauge
	readAt    prometheus.Gauge
}

func newPlatformMetrics(r prometheus.Registerer) (*platformMetrics, error) {
	reg := &registrar{reg: r}
	pm := &platformMetrics{
		instances: register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "blacksmith_platform_instances",
			Help: "Instances by state against the platform (the Cloud Controller) as of the last complete run that could read it: in_step, orphan_deployment (Vault and BOSH, not the platform), platform_only (the platform, not Vault), orphan (the platform and Vault, no deployment), creating, absent.",
		}, []string{"state"})),
		up: newGauge(reg, "blacksmith_platform_up",
			"1 when the last complete run could read the platform (the Cloud Controller) whole, else 0."),
		readAt: newGauge(reg, "blacksmith_platform_last_read_timestamp_seconds",
			"Unix time of the last whole read of the platform (the Cloud Controller)."),
	}
	if reg.err != nil {
		return nil, reg.err
	}
	return pm, nil
}

// observe publishes a complete run's platform report (nil: the run did
// not look).
func (pm *platformMetrics) observe(rep *report.PlatformReport) {
	if pm == nil || rep == nil {
		return
	}
	if rep.State != report.PlatformKnown {
		pm.up.Set(0)
		return
	}
	pm.up.Set(1)
	if !rep.ReadAt.IsZero() {
		pm.readAt.Set(float64(rep.ReadAt.Unix()))
	}
	for _, s := range platform.States {
		pm.instances.WithLabelValues(s).Set(float64(rep.Counts[s]))
	}
}

// ErrNoPlatform is Views.Platform's error when no platform is configured;
// ErrPlatformUnknown is matched by its error when the platform (or a
// Director, or the index) could not be read whole.
var (
	ErrNoPlatform      = errors.New("no platform configured (cf.api)")
	ErrPlatformUnknown = errors.New("the platform could not be held against the instances")
)

// Platform holds the instances against the platform once, outside a
// run (blacksmith orphan-deployments): every Director listed (one that
// cannot be is an error: its deployments would look gone), the index read,
// the platform read whole; nothing is written and nobody is told. The
// orphan deployments carry the proof the daemon's runs keep (absent since,
// reads); the report lists every one (not the first MaxPlatformListed).
func (v *Views) Platform(ctx context.Context) (report.PlatformReport, error) {
	t := v.parts.Platform
	if t == nil {
		return report.PlatformReport{}, ErrNoPlatform
	}
	start := v.now()
	var deps []bosh.Deployment
	var idx *vault.Index
	var view *platform.View
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		deps, err = v.parts.Directors.ListAll(gctx)
		return err
	})
	g.Go(func() (err error) {
		idx, err = v.parts.Vault.Index.Index(gctx)
		return err
	})
	g.Go(func() (err error) {
		view, _, _, _, err = t.Read(gctx, v.now, true)
		return err
	})
	if err := g.Wait(); err != nil {
		return report.PlatformReport{}, fmt.Errorf("%w: %w", ErrPlatformUnknown, err)
	}
	listed := make(map[string]bool, len(deps))
	for _, d := range deps {
		listed[d.Name] = true
	}
	j := platform.Classify(view, platform.Input{Index: idx.Records, Listed: func(name string) bool { return listed[name] },
		OutOfRun: func(*vault.Record) bool { return false }, Claimed: func(string) bool { return false },
		Start: start, Grace: v.cfg.OrphanGracePeriod, Limit: math.MaxInt})
	j.Report.Fresh = true
	var doc platform.Doc
	if _, err := v.stores.state.ReadState(ctx, platform.DocName, &doc); err != nil {
		v.parts.Log.Warn("the orphan deployments' proof could not be read", "error", err)
	}
	platform.Fill(&j.Report, doc, func(id string) bool {
		rec, _, err := v.parts.Vault.Backups.LatestBackupRecord(ctx, id)
		return err == nil && rec != nil
	})
	return j.Report, nil
}
