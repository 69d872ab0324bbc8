package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"sort"
	"time"
)

// invariants are what must hold once the soak has settled.
type invariants struct {
	Expected          int      `json:"records_expected"`
	Lost              int      `json:"records_lost"`
	LostIDs           []string `json:"lost_ids,omitempty"`
	Duplicated        int      `json:"duplicated_deployments"`
	Stuck             int      `json:"stuck_operations"`
	StuckOps          []string `json:"stuck,omitempty"`
	Bindings          int      `json:"bindings_checked"`
	BindingsBroken    int      `json:"bindings_broken"`
	BrokenBindings    []string `json:"broken_bindings,omitempty"`
	TwoLeaders        int      `json:"two_leaders"`
	Unactionable      int      `json:"osb_unactionable"`
	UnactionableSeen  []string `json:"osb_unactionable_seen,omitempty"`
	IndexProblems     int      `json:"index_problems"`
	LeaderAfterSettle bool     `json:"leader_after_settle"`
	PlatformHeld      int      `json:"platform_instances"`
	PlatformDeleted   int      `json:"platform_instances_deleted"`
	DeletedIDs        []string `json:"platform_deleted_ids,omitempty"`
	OrphansRetired    int      `json:"orphan_deployments_deleted"`
	UpgradeEnded      bool     `json:"upgrade_ended"`
	UpgradeHalf       int      `json:"upgrade_half_applied"`
}

// upgrade adds the fleet upgrade's end to the invariants: it ended (at
// once or resumed), and nothing is left half-applied.
func (v *invariants) upgrade(u upgradeFigures) {
	v.UpgradeEnded = u.Started && u.Problem == ""
	v.UpgradeHalf = u.HalfApplied
}

// held says whether every invariant held.
func (v invariants) held() bool {
	return v.Lost == 0 && v.Duplicated == 0 && v.Stuck == 0 && v.BindingsBroken == 0 && v.TwoLeaders == 0 &&
		v.Unactionable == 0 && v.IndexProblems == 0 && v.LeaderAfterSettle && v.PlatformDeleted == 0 &&
		v.UpgradeEnded && v.UpgradeHalf == 0
}

// instanceOf takes the instance id out of a deployment's name, "{plan id}-{instance id}".
var instanceOf = regexp.MustCompile(`([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`)

// directorDeployments lists the Director's deployments' names.
func directorDeployments(ctx context.Context, director string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, director+"/deployments?exclude_configs=true&exclude_releases=true&exclude_stemcells=true", nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(simUser, simPass)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	var list []struct {
		Name string `json:"name"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(raw, &list) != nil {
		return nil, fmt.Errorf("GET /deployments: %d %.200s", res.StatusCode, raw)
	}
	names := make([]string, 0, len(list))
	for _, d := range list {
		names = append(names, d.Name)
	}
	return names, nil
}

// check settles the soak and reads what must hold: every deployment's and
// every live instance's record in Vault, no instance deployed twice, no
// operation left in progress, every binding's credentials as the bind
// returned them, never two leaders, every OSB answer one a platform can
// act on.
func (s *soak) check(ctx context.Context) (invariants, error) {
	var v invariants
	v.TwoLeaders, _ = s.leaders.counts()
	s.ledger.mu.Lock()
	v.Unactionable, v.UnactionableSeen = len(s.ledger.unactionable), s.ledger.unactionable
	v.StuckOps = append(v.StuckOps, s.ledger.stuck...)
	live := map[string]bool{}
	for id := range s.ledger.live {
		if !s.ledger.leaving[id] {
			live[id] = true
		}
	}
	gone := map[string]bool{} // instances whose deprovision succeeded
	for id := range s.ledger.leaving {
		if !s.ledger.live[id] {
			gone[id] = true
		}
	}
	bindings := map[string]string{}
	for k, pw := range s.ledger.bindings {
		bindings[k] = pw
	}
	s.ledger.mu.Unlock()

	b := &broker{daemons: s.daemons, client: &http.Client{Timeout: 30 * time.Second}}
	for id := range live {
		a := b.do(ctx, http.MethodGet, "/v2/service_instances/"+id+"/last_operation", nil)
		var st struct {
			State string `json:"state"`
		}
		if a.status == http.StatusOK && json.Unmarshal(a.body, &st) == nil && st.State == "in progress" {
			v.StuckOps = append(v.StuckOps, "in progress after settling "+id)
		}
	}
	v.Stuck = len(v.StuckOps)

	var names []string
	for _, sim := range s.world.directors {
		listed, err := directorDeployments(ctx, sim.url)
		if err != nil {
			return v, err
		}
		names = append(names, listed...)
	}
	deployed := map[string]int{}
	for _, n := range names {
		if m := instanceOf.FindString(n); m != "" {
			deployed[m]++
		}
	}
	idx, err := s.store.Index(ctx)
	if err != nil {
		return v, fmt.Errorf("reading the index: %w", err)
	}
	v.IndexProblems = len(idx.Problems)
	expected := map[string]bool{}
	for id, n := range deployed {
		expected[id] = true
		if n > 1 {
			v.Duplicated++
		}
	}
	for id := range live {
		expected[id] = true
	}
	v.Expected = len(expected)
	for id := range expected {
		if _, ok := idx.Records[id]; !ok {
			v.LostIDs = append(v.LostIDs, id)
		}
	}
	sort.Strings(v.LostIDs)
	v.Lost = len(v.LostIDs)

	for k, pw := range bindings {
		if gone[k[:36]] { // deprovisioned after an unbind that failed: its bindings went with it
			continue
		}
		v.Bindings++
		doc, ok, err := s.store.Secret(ctx, k[:36]+"/bindings/"+k[37:])
		creds, _ := doc["credentials"].(map[string]any)
		switch {
		case err != nil:
			v.BrokenBindings = append(v.BrokenBindings, k+": "+err.Error())
		case !ok:
			v.BrokenBindings = append(v.BrokenBindings, k+": no secret")
		case pw != "" && creds["password"] != pw:
			v.BrokenBindings = append(v.BrokenBindings, k+": another password")
		}
	}
	v.BindingsBroken = len(v.BrokenBindings)
	v.LeaderAfterSettle = s.leader() != nil
	s.checkPlatform(&v, deployed)
	return v, nil
}

// checkPlatform counts the instances the platform holds, and has not
// asked to deprovision, whose deployment is gone (none may be), and the
// orphan deployments retired.
func (s *soak) checkPlatform(v *invariants, deployed map[string]int) {
	s.ledger.mu.Lock()
	leaving := maps.Clone(s.ledger.leaving)
	s.ledger.mu.Unlock()
	for id := range s.cc.holds() {
		v.PlatformHeld++
		// An instance whose deprovision the platform asked for, cut when
		// the clients stopped, is "delete in progress" there: its
		// deployment may be gone.
		if deployed[id] == 0 && !leaving[id] {
			v.DeletedIDs = append(v.DeletedIDs, id)
		}
	}
	sort.Strings(v.DeletedIDs)
	v.PlatformDeleted = len(v.DeletedIDs)
	for _, n := range s.orphans {
		if deployed[instanceOf.FindString(n)] == 0 {
			v.OrphansRetired++
		}
	}
}
