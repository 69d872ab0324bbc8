package reconciler

import (
	"cmp"
	"maps"
	"slices"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// claims ties each instance to the one deployment of a run that wins it,
// whatever the order the fetches finish in: the deployment named
// {planID}-{instanceID} (preclaim), else the deployment the index record
// names (as soon as it is matched), else, once every deployment is
// observed, the claimant whose name sorts first (settle). A claimant that
// must wait for settle is held, with what it fetched, and written only if
// it wins. The orphaner leaves claimed instances alone. It is safe for
// concurrent use.
type claims struct {
	index  map[string]*vault.Record // as read at the start of the run
	listed map[string]bool          // the run's deployments

	mu      sync.Mutex
	byID    map[string]string       // instance id -> deployment that won it
	waiting map[string][]*heldClaim // instance id -> claimants held until settle
	matched map[string]bool         // deployments that got as far as the matcher
}

// heldClaim is a claimant held until settle, with what the observer found.
type heldClaim struct {
	d  bosh.Deployment
	sc *scanned
	mt Match
}

// lostClaim is a held claimant that lost; kept says the winner is the
// deployment the index record names, skipped this run.
type lostClaim struct {
	Conflict
	kept bool
}

func newClaims(index map[string]*vault.Record, deps []bosh.Deployment) *claims {
	c := &claims{index: index, listed: make(map[string]bool, len(deps)), byID: map[string]string{},
		waiting: map[string][]*heldClaim{}, matched: map[string]bool{}}
	for _, d := range deps {
		c.listed[d.Name] = true
	}
	return c
}

// preclaim ties the instances that deployments named {planID}-{instanceID}
// stand for to those deployments before anything is fetched, so that another
// deployment claiming one of them (a copy of its manifest, say) never wins,
// however the fetches are timed; among such names the first listed wins.
func (c *claims) preclaim(m *matcher, deps []bosh.Deployment) {
	for _, d := range deps {
		if mt, ok := m.matchByName(d.Name); ok {
			c.mu.Lock()
			if _, taken := c.byID[mt.InstanceID]; !taken {
				c.byID[mt.InstanceID] = d.Name
			}
			c.mu.Unlock()
		}
	}
}

// seen notes that a deployment got as far as the matcher (matched or not):
// one the index record names that did not is skipped this run (locked,
// not fetched), and settle holds its instance for it.
func (c *claims) seen(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.matched[name] = true
}

// claim ties an instance id to a deployment. It returns the deployment that
// holds it and false when another one won it already; true when the
// deployment wins it now (it is preclaimed for it, or the index record names
// it); and held true when the decision waits for settle, which then gets h.
func (c *claims) claim(id, name string, h *heldClaim) (other string, ok, held bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if other, taken := c.byID[id]; taken {
		return other, other == name, false
	}
	if rec := c.index[id]; rec != nil && rec.Deployment(id) == name {
		c.byID[id] = name
		return "", true, false
	}
	c.waiting[id] = append(c.waiting[id], h)
	return "", false, true
}

// settle decides the instances whose claimants were held, once every
// deployment of the run is observed: the winner already tied (preclaimed or
// named by the index record), else the deployment the index record names
// when it is listed but was skipped this run (nobody wins: its claim is
// unknown), else the claimant whose name sorts first. It returns the
// winners to go on with, sorted by instance id, and the held claimants
// that lost.
func (c *claims) settle() ([]*heldClaim, []lostClaim) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var won []*heldClaim
	var lost []lostClaim
	for _, id := range slices.Sorted(maps.Keys(c.waiting)) {
		held := slices.SortedFunc(slices.Values(c.waiting[id]), func(a, b *heldClaim) int { return cmp.Compare(a.d.Name, b.d.Name) })
		winner, taken := c.byID[id]
		kept := false
		if rec := c.index[id]; !taken && rec != nil && c.listed[rec.Deployment(id)] && !c.matched[rec.Deployment(id)] {
			winner, taken, kept = rec.Deployment(id), true, true
		}
		if !taken {
			winner = held[0].d.Name
			won = append(won, held[0])
			held = held[1:]
		}
		c.byID[id] = winner
		for _, h := range held {
			lost = append(lost, lostClaim{Conflict: Conflict{InstanceID: id, Winner: winner, Loser: h.d.Name}, kept: kept})
		}
	}
	c.waiting = map[string][]*heldClaim{}
	return won, lost
}

// isClaimed says whether a deployment of this run won the instance.
func (c *claims) isClaimed(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.byID[id]
	return ok
}
