package config

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"
)

// MaxConcurrencyLimit bounds reconciler.max_concurrency: each unit is two
// goroutines and 64 queued instances, and the Director and Vault see as
// many requests at once.
const MaxConcurrencyLimit = 1000

func validateReconciler(r ReconcilerConfig, ck checker) {
	ck.positive("reconciler.interval", r.Interval)
	if r.WatchInterval != 0 && r.WatchInterval < MinWatchInterval {
		ck.fail("reconciler.watch_interval", "must be 0 (off) or at least %s, got %s", MinWatchInterval, r.WatchInterval)
	}
	ck.atLeast("reconciler.max_concurrency", r.MaxConcurrency, 1)
	if r.MaxConcurrency > MaxConcurrencyLimit {
		ck.fail("reconciler.max_concurrency", "must be at most %d, got %d", MaxConcurrencyLimit, r.MaxConcurrency)
	}
	ck.atLeast("reconciler.batch_size", r.BatchSize, 1)
	ck.atLeast("reconciler.retry_attempts", r.RetryAttempts, 0)
	ck.notNegative("reconciler.retry_delay", r.RetryDelay)
	if r.RetryDelay == 0 { // it would retry in a hot loop
		ck.positive("reconciler.retry_delay", r.RetryDelay)
	}
	ck.positive("reconciler.cache_ttl", r.CacheTTL)
	ck.positive("reconciler.resync_period", r.ResyncPeriod)
	ck.notNegative("reconciler.health_sweep", r.HealthSweep)
	if r.HealthSweep > 0 && r.Interval > 0 && r.HealthSweep < r.Interval { // a run cannot check more than all
		ck.fail("reconciler.health_sweep", "must be 0 (off) or at least reconciler.interval (%s), got %s",
			r.Interval, r.HealthSweep)
	}
	ck.between("reconciler.health.tasks_at_once", r.Health.TasksAtOnce, 1, MaxHealthTasksAtOnce)
	ck.atLeast("reconciler.backup.retention", r.Backup.Retention, 0)
	if r.Backup.Enabled {
		ck.required("reconciler.backup.path", r.Backup.Path)
	}
	ck.notNegative("reconciler.orphan_grace_period", r.OrphanGracePeriod)
	ck.positive("reconciler.stop_timeout", r.StopTimeout)
	ck.between("reconciler.breaker_threshold", r.BreakerThreshold, 1, 1000)
	ck.positive("reconciler.quarantine.backoff", r.Quarantine.Backoff)
	ck.positive("reconciler.quarantine.max_backoff", r.Quarantine.MaxBackoff)
	if r.Quarantine.MaxBackoff > 0 && r.Quarantine.MaxBackoff < r.Quarantine.Backoff {
		ck.fail("reconciler.quarantine.max_backoff", "must be at least reconciler.quarantine.backoff (%s), got %s",
			r.Quarantine.Backoff, r.Quarantine.MaxBackoff)
	}
	ck.positive("reconciler.stuck_operation_after", r.StuckOperationAfter)
	ck.atLeast("reconciler.history.keep", r.History.Keep, 0)
	ck.notNegative("reconciler.history.max_age", r.History.MaxAge)
	ck.between("reconciler.run_log", r.RunLog, 1, 10000)
	switch r.Remediation.Mode {
	case RemediateNone, RemediateRedeploy, RemediatePurge:
	default:
		ck.fail("reconciler.remediation.mode", "must be none, redeploy or purge, got %q", r.Remediation.Mode)
	}
	ck.notNegative("reconciler.remediation.min_age", r.Remediation.MinAge)
	ck.between("reconciler.remediation.max_per_run", r.Remediation.MaxPerRun, 1, 1000)
	ck.notNegative("reconciler.remediation.retirement_period", r.Remediation.RetirementPeriod)
	switch r.Remediation.OrphanDeployments {
	case OrphanDeploymentsReport, OrphanDeploymentsDelete:
	default:
		ck.fail("reconciler.remediation.orphan_deployments", "must be report or delete, got %q", r.Remediation.OrphanDeployments)
	}
	validateUpgrades(r.Upgrades, ck)
	if s := r.Remediation.OrphanDeploymentsMaxShare; s < 0 || s > 1 {
		ck.fail("reconciler.remediation.orphan_deployments_max_share", "must be between 0 and 1, got %v", s)
	}
	if r.MinConfidence < 0 || r.MinConfidence > 1 {
		ck.fail("reconciler.min_confidence", "must be between 0 and 1, got %v", r.MinConfidence)
	}
	for _, release := range slices.Sorted(maps.Keys(r.Releases)) {
		if r.Releases[release] == "" {
			ck.fail("reconciler.releases."+release, "service id required")
		}
	}
	for i, rule := range r.Rules {
		validateRule(fmt.Sprintf("reconciler.rules[%d]", i), rule, ck)
	}
	for i, pattern := range r.Ignore {
		if _, err := CompileIgnore(pattern); err != nil {
			ck.fail(fmt.Sprintf("reconciler.ignore[%d]", i), "%v", err)
		}
	}
}

// validateRule checks the rule's pattern (Rule.Compile), one problem per flaw.
func validateRule(key string, r Rule, ck checker) {
	if r.Pattern == "" {
		ck.fail(key+".pattern", "required")
		return
	}
	if _, err := r.Compile(); err != nil {
		for _, e := range flatten(err) {
			ck.fail(key+".pattern", "%v", e)
		}
	}
}

// Compile compiles the rule's pattern, anchored at both ends (a deployment
// name must match it whole), and checks the named groups the matcher reads:
// (?P<instance>...), and (?P<plan>...) unless PlanID is set. The pattern
// must compile on its own too, so that it cannot close the anchoring group.
// Every flaw is in the error (errors.Join), worded without the key.
func (r Rule) Compile() (*regexp.Regexp, error) {
	if _, err := regexp.Compile(r.Pattern); err != nil {
		return nil, fmt.Errorf("invalid regexp: %w", err)
	}
	re, err := regexp.Compile(`^(?:` + r.Pattern + `)$`)
	if err != nil {
		return nil, fmt.Errorf("invalid regexp: %w", err)
	}
	var errs []error
	if re.SubexpIndex("instance") < 0 {
		errs = append(errs, errors.New("needs a named group (?P<instance>...)"))
	}
	if re.SubexpIndex("plan") < 0 && r.PlanID == "" {
		errs = append(errs, errors.New("needs a named group (?P<plan>...) unless plan_id is set"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return re, nil
}

// flatten lists the errors an errors.Join holds, or err alone.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// maxIgnorePattern bounds a reconciler.ignore pattern.
const maxIgnorePattern = 1024

// CompileIgnore compiles a reconciler.ignore pattern, anchored at both ends
// (a deployment name must match it whole).
func CompileIgnore(pattern string) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, errors.New("empty pattern")
	}
	if len(pattern) > maxIgnorePattern {
		return nil, fmt.Errorf("pattern longer than %d characters", maxIgnorePattern)
	}
	re, err := regexp.Compile("^(?:" + pattern + ")$")
	if err != nil {
		return nil, fmt.Errorf("invalid regexp: %w", err)
	}
	return re, nil
}

// MinWatchInterval bounds reconciler.watch_interval from below: the watch
// reads two pages of each Director's feeds each time.
const MinWatchInterval = 5 * time.Second

// MaxHealthTasksAtOnce bounds reconciler.health.tasks_at_once: a Director
// runs 3 workers by default (director.workers).
const MaxHealthTasksAtOnce = 10

// MaxUpgradesInFlight bounds reconciler.upgrades.max_in_flight (and the
// flags and parameters that override it): each is a Director task.
const MaxUpgradesInFlight = 100

func validateUpgrades(u UpgradesConfig, ck checker) {
	switch u.Mode {
	case UpgradeReport, UpgradeAuto, UpgradeOff:
	default:
		ck.fail("reconciler.upgrades.mode", "must be report, auto or off, got %q", u.Mode)
	}
	ck.between("reconciler.upgrades.max_per_run", u.MaxPerRun, 1, 100000)
	if _, err := ParseWindow(u.Window); err != nil {
		ck.fail("reconciler.upgrades.window", "%v", err)
	}
	ck.between("reconciler.upgrades.canaries", u.Canaries, 0, 1000)
	ck.between("reconciler.upgrades.max_in_flight", u.MaxInFlight, 1, MaxUpgradesInFlight)
	ck.between("reconciler.upgrades.max_failures", u.MaxFailures, 0, 100000)
	ck.between("reconciler.upgrades.attempt_limit", u.AttemptLimit, 1, 100)
	ck.positive("reconciler.upgrades.task_timeout", u.TaskTimeout)
}
