package match

import (
	"cmp"
	"maps"
	"slices"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Claims ties each instance to the one deployment of a run that wins it,
// whatever the order the fetches finish in: the deployment named
// {planID}-{instanceID} (Preclaim), else the deployment the index record
// names (as soon as it is matched), else, once every deployment is
// observed, the claimant whose name sorts first (Settle). A claimant that
// must wait for Settle is held, with what the caller found (H), and goes
// on only if it wins. It is safe for concurrent use.
type Claims[H any] struct {
	index  map[string]*vault.Record // as read at the start of the run
	listed map[string]bool          // the run's deployments

	mu      sync.Mutex
	byID    map[string]string    // instance id -> deployment that won it
	waiting map[string][]Held[H] // instance id -> claimants held until Settle
	matched map[string]bool      // deployments that got as far as the matcher
}

// Held is a claimant held until Settle: its deployment and what the caller
// found of it.
type Held[H any] struct {
	Deployment string
	Value      H
}

// Lost is a held claimant that lost; Kept says the winner is the deployment
// the index record names, which was skipped this run.
type Lost struct {
	report.Conflict
	Kept bool
}

// Verdict is what a claim decided.
type Verdict int

const (
	// Won: the deployment holds the instance.
	Won Verdict = iota
	// Taken: another deployment won it already (a conflict).
	Taken
	// Waiting: decided by Settle, once every deployment is observed.
	Waiting
	// Owned: the instance's record is owned (the broker's, or an adoption
	// an operator confirmed) and names another deployment: a conflict,
	// whatever the strategy that matched, never written.
	Owned
)

// NewClaims starts the claims of a run over the index as read and the
// deployments listed.
func NewClaims[H any](index map[string]*vault.Record, deps []bosh.Deployment) *Claims[H] {
	c := &Claims[H]{index: index, listed: make(map[string]bool, len(deps)), byID: map[string]string{},
		waiting: map[string][]Held[H]{}, matched: map[string]bool{}}
	for _, d := range deps {
		c.listed[d.Name] = true
	}
	return c
}

// Preclaim ties the instances that deployments named {planID}-{instanceID}
// stand for to those deployments before anything is fetched, so that another
// deployment claiming one of them (a copy of its manifest, say) never wins,
// however the fetches are timed; among such names the first listed wins.
func (c *Claims[H]) Preclaim(m *Matcher, deps []bosh.Deployment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range deps {
		if mt, ok := m.ByName(d.Name); ok {
			if rec := c.index[mt.InstanceID]; rec.Owned() && rec.Deployment(mt.InstanceID) != d.Name {
				continue // the record's own deployment keeps it, or nobody
			}
			if _, taken := c.byID[mt.InstanceID]; !taken {
				c.byID[mt.InstanceID] = d.Name
			}
		}
	}
}

// Seen notes that a deployment got as far as the matcher (matched or not):
// one the index record names that did not is skipped this run (locked,
// not fetched), and Settle holds its instance for it.
func (c *Claims[H]) Seen(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.matched[name] = true
}

// Claim ties instance id to deployment name: Won when it is preclaimed for
// it or the index record names it; Owned, with the deployment the record
// names, when the record is owned and names another deployment (whether
// that one is listed or gone); Taken, with the deployment that holds it,
// when another one won it already; Waiting when the decision waits for
// Settle, which then gets h.
func (c *Claims[H]) Claim(id, name string, h H) (Verdict, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rec := c.index[id]; rec.Owned() && rec.Deployment(id) != name {
		return Owned, rec.Deployment(id)
	}
	if other, taken := c.byID[id]; taken {
		if other == name {
			return Won, other
		}
		return Taken, other
	}
	if rec := c.index[id]; rec != nil && rec.Deployment(id) == name {
		c.byID[id] = name
		return Won, name
	}
	c.waiting[id] = append(c.waiting[id], Held[H]{Deployment: name, Value: h})
	return Waiting, ""
}

// Settle decides the instances whose claimants were held, once every
// deployment of the run is observed: the winner already tied (preclaimed or
// named by the index record), else the deployment the index record names
// when it is listed but was skipped this run (nobody wins: its claim is
// unknown), else the claimant whose name sorts first. It returns the
// winners to go on with, sorted by instance id, and the held claimants
// that lost.
func (c *Claims[H]) Settle() ([]Held[H], []Lost) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var won []Held[H]
	var lost []Lost
	for _, id := range slices.Sorted(maps.Keys(c.waiting)) {
		held := slices.SortedFunc(slices.Values(c.waiting[id]), func(a, b Held[H]) int { return cmp.Compare(a.Deployment, b.Deployment) })
		winner, taken := c.byID[id]
		kept := false
		if rec := c.index[id]; !taken && rec != nil && c.listed[rec.Deployment(id)] && !c.matched[rec.Deployment(id)] {
			winner, taken, kept = rec.Deployment(id), true, true
		}
		if !taken {
			winner = held[0].Deployment
			won = append(won, held[0])
			held = held[1:]
		}
		c.byID[id] = winner
		for _, h := range held {
			lost = append(lost, Lost{Conflict: report.Conflict{InstanceID: id, Winner: winner, Loser: h.Deployment}, Kept: kept})
		}
	}
	c.waiting = map[string][]Held[H]{}
	return won, lost
}

// IsClaimed says whether a deployment of this run won the instance.
func (c *Claims[H]) IsClaimed(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.byID[id]
	return ok
}
