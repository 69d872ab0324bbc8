package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
)

func validateReconciler(r ReconcilerConfig, ck checker) {
	ck.positive("reconciler.interval", r.Interval)
	ck.atLeast("reconciler.max_concurrency", r.MaxConcurrency, 1)
	ck.atLeast("reconciler.batch_size", r.BatchSize, 1)
	ck.atLeast("reconciler.retry_attempts", r.RetryAttempts, 0)
	ck.notNegative("reconciler.retry_delay", r.RetryDelay)
	ck.positive("reconciler.cache_ttl", r.CacheTTL)
	ck.atLeast("reconciler.backup.retention", r.Backup.Retention, 0)
	if r.Backup.Enabled {
		ck.required("reconciler.backup.path", r.Backup.Path)
	}
	ck.notNegative("reconciler.orphan_grace_period", r.OrphanGracePeriod)
	ck.positive("reconciler.stop_timeout", r.StopTimeout)
	for _, release := range slices.Sorted(maps.Keys(r.Releases)) {
		if r.Releases[release] == "" {
			ck.fail("reconciler.releases."+release, "service id required")
		}
	}
	for i, rule := range r.Rules {
		validateRule(fmt.Sprintf("reconciler.rules[%d]", i), rule, ck)
	}
}

// validateRule checks that the pattern compiles and has the groups the matcher needs.
func validateRule(key string, r Rule, ck checker) {
	if r.Pattern == "" {
		ck.fail(key+".pattern", "required")
		return
	}
	re, err := regexp.Compile(r.Pattern)
	if err != nil {
		ck.fail(key+".pattern", "invalid regexp: %v", err)
		return
	}
	groups := re.SubexpNames()
	if !slices.Contains(groups, "instance") {
		ck.fail(key+".pattern", "needs a named group (?P<instance>...)")
	}
	if !slices.Contains(groups, "plan") && r.PlanID == "" {
		ck.fail(key+".pattern", "needs a named group (?P<plan>...) unless plan_id is set")
	}
}
