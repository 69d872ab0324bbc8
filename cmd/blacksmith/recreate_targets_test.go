package main

import (
	"testing"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// recreate-all sets aside what a fleet upgrade sets aside: an instance
// adopted from BOSH no operator confirmed, and one retiring (a recreate
// would start the VMs its retirement stopped); an orphaned one is not in
// scope at all.
func TestRecreateSetsAsideWhatIsNotTheBrokersToRecreate(t *testing.T) {
	d, err := bosh.New(bosh.Options{Address: "https://director.invalid:25555", Username: "u", Password: "p"})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(change func(*vault.Record)) *vault.Record {
		r := &vault.Record{ServiceID: "redis", PlanID: "redis-small", DeploymentName: "redis-small-x"}
		change(r)
		return r
	}
	ix := &vault.Index{Records: map[string]*vault.Record{
		"made":     rec(func(*vault.Record) {}),
		"adopted":  rec(func(r *vault.Record) { r.Adopted = true }),
		"retiring": rec(func(r *vault.Record) { r.Retiring = &vault.Retirement{StoppedAt: "2026-11-28T10:00:00Z"} }),
		"orphaned": rec(func(r *vault.Record) { r.Orphaned = true }),
	}}
	targets, results, aside, err := recreateTargets(ix, []*bosh.Client{d}, recreateScope{})
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 1 || targets[0].id != "made" || len(results) != 1 || results[0].InstanceID != "made" {
		t.Fatalf("targets %+v, results %+v: want only the instance the broker made", targets, results)
	}
	got := map[string]string{}
	for _, r := range aside {
		if r.State != recreateSkip || r.Reason == "" {
			t.Errorf("%s set aside as %q (%q): want skipped with a reason", r.InstanceID, r.State, r.Reason)
		}
		got[r.InstanceID] = r.Reason
	}
	if len(got) != 2 || got["adopted"] == "" || got["retiring"] == "" {
		t.Fatalf("set aside %v: want the adopted and the retiring instance", got)
	}
}
