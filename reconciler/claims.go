package reconciler

import (
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
)

// claims ties each instance to the one deployment of a run that matched it
// (the first one); the orphaner leaves claimed instances alone. It is safe
// for concurrent use.
type claims struct {
	mu   sync.Mutex
	byID map[string]string // instance id -> deployment that matched it
}

func newClaims() *claims { return &claims{byID: map[string]string{}} }

// preclaim ties the instances that deployments named {planID}-{instanceID}
// stand for to those deployments before anything is fetched, so that another
// deployment claiming one of them (a copy of its manifest, say) never wins,
// however the fetches are timed; among such names the first listed wins.
func (c *claims) preclaim(m *matcher, deps []bosh.Deployment) {
	for _, d := range deps {
		if mt, ok := m.matchByName(d.Name); ok {
			c.claim(mt.InstanceID, d.Name)
		}
	}
}

// claim ties an instance id to a deployment; false (and the deployment that
// holds it) when another deployment was tied to it first.
func (c *claims) claim(id, name string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if other, ok := c.byID[id]; ok && other != name {
		return other, false
	}
	c.byID[id] = name
	return "", true
}

// isClaimed says whether a deployment of this run matched the instance.
func (c *claims) isClaimed(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.byID[id]
	return ok
}
