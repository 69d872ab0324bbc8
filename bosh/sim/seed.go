package sim

import (
	"fmt"
	"regexp"
	"strconv"
)

// MaxSeed is the most deployments Options.Seed and POST /_sim/seed create.
const MaxSeed = 100_000

// maxInstances bounds the size of an instance group, seeded or posted.
const maxInstances = 1000

// seedName is what a seed plan's ids, release and version may hold: they
// stand unquoted in a deployment name and in its YAML manifest.
var seedName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

// seedManifest is the manifest of a seeded deployment: 1 name, 2 release,
// 3 version, 4 instances, 5 service id, 6 plan id, 7 instance id.
const seedManifest = `---
name: %[1]s
releases:
- name: %[2]s
  version: "%[3]s"
stemcells:
- alias: default
  os: ubuntu-jammy
  version: "1.506"
instance_groups:
- name: %[2]s
  instances: %[4]d
  azs: [z1, z2, z3]
  jobs:
  - name: %[2]s
    release: %[2]s
    properties:
      %[2]s:
        password: ((%[2]s_password))
  vm_type: small
  persistent_disk_type: default
  stemcell: default
  networks:
  - name: services
- name: smoke-tests
  lifecycle: errand
  instances: 1
  azs: [z1]
  jobs:
  - name: smoke-tests
    release: %[2]s
  vm_type: small
  stemcell: default
  networks:
  - name: services
update:
  canaries: 1
  max_in_flight: 1
  canary_watch_time: 30000-240000
  update_watch_time: 30000-240000
properties:
  blacksmith:
    service_id: %[5]s
    plan_id: %[6]s
    instance_id: %[7]s
`

// seedPlan is a plan with its defaults and the content all its deployments
// share.
type seedPlan struct {
	SeedPlan
	content *content
}

// seedInfo is what a seeded deployment's manifest is rendered from, so that
// 10,000 of them hold no manifest text.
type seedInfo struct {
	plan       *seedPlan
	name, uuid string
}

func (s *seedInfo) render() string {
	p := s.plan
	return fmt.Sprintf(seedManifest, s.name, p.Release, p.Version, p.Instances, p.ServiceID, p.PlanID, s.uuid)
}

// validate refuses a plan whose manifest could not be rendered as asked.
func (p SeedPlan) validate() error {
	fields := []struct {
		key, value string
		required   bool
	}{{"plan id", p.PlanID, true}, {"release", p.Release, true}, {"service id", p.ServiceID, false}, {"version", p.Version, false}}
	for _, f := range fields {
		switch {
		case f.value == "" && f.required:
			return fmt.Errorf("%w: seed plan %+v: the %s is required", ErrBadOptions, p, f.key)
		case f.value != "" && !seedName.MatchString(f.value):
			return fmt.Errorf("%w: seed plan %+v: %s %q: use letters, digits, '.', '_', '+' and '-'", ErrBadOptions, p, f.key, f.value)
		}
	}
	if p.Instances < 0 || p.Instances > maxInstances {
		return fmt.Errorf("%w: seed plan %+v: instances %d is not between 0 and %d", ErrBadOptions, p, p.Instances, maxInstances)
	}
	return nil
}

// ParseSeedPlan reads a seed plan written as comma-separated key=value
// pairs, e.g. "service_id=redis,plan_id=redis-small,release=redis,version=16.1.0,instances=1".
// It is the syntax of the binary's -seed-plan flag.
func ParseSeedPlan(spec string) (SeedPlan, error) {
	var p SeedPlan
	err := parseKeyValues("seed plan", spec, func(key, value string) error {
		var err error
		switch key {
		case "service_id":
			p.ServiceID = value
		case "plan_id":
			p.PlanID = value
		case "release":
			p.Release = value
		case "version":
			p.Version = value
		case "instances":
			p.Instances, err = strconv.Atoi(value)
		default:
			err = fmt.Errorf("unknown key")
		}
		return err
	})
	if err == nil {
		err = p.validate()
	}
	if err != nil {
		return SeedPlan{}, err
	}
	return p, nil
}

// prepareSeedPlans fills in plan defaults and parses each plan's manifest
// once; plans that validate refuses are left out.
func prepareSeedPlans(plans []SeedPlan) []*seedPlan {
	var out []*seedPlan
	for _, p := range plans {
		if p.validate() != nil {
			continue
		}
		p.Version = or(p.Version, "1.0.0")
		p.Instances = max(p.Instances, 1)
		sp := &seedPlan{SeedPlan: p}
		_, doc, err := parseManifest((&seedInfo{plan: sp, name: p.PlanID, uuid: newUUID()}).render())
		if err != nil {
			continue // a release or plan name that breaks the YAML
		}
		sp.content = contentOf(doc)
		out = append(out, sp)
	}
	return out
}

// seed creates n deployments at once drawn in turn from plans (default:
// Options.SeedPlans), one create event each, and returns their names
// (Director.SeedDeployments).
func (dp *deploys) seed(n int, plans []SeedPlan) []string {
	if len(plans) == 0 {
		plans = dp.seedPlans
	}
	prepared := prepareSeedPlans(plans)
	if n <= 0 || len(prepared) == 0 {
		return nil
	}
	names := make([]string, n)
	dp.db.mu.Lock()
	defer dp.db.mu.Unlock()
	dp.db.events.grow(n)
	for i := range names {
		p := prepared[i%len(prepared)]
		uuid := newUUID()
		s := &seedInfo{plan: p, name: p.PlanID + "-" + uuid, uuid: uuid}
		dp.applyLocked(s.name, "", s, p.content)
		dp.rec.recordLocked(adminEvent("create", s.name))
		names[i] = s.name
	}
	return names
}
