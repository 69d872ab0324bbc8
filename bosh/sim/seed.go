package sim

import "fmt"

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

// prepareSeedPlans fills in plan defaults and parses each plan's manifest
// once; plans without a plan id or a release are left out.
func prepareSeedPlans(plans []SeedPlan) []*seedPlan {
	var out []*seedPlan
	for _, p := range plans {
		if p.PlanID == "" || p.Release == "" {
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

// SeedDeployments creates n deployments at once, without tasks or events,
// drawn in turn from plans (default: Options.SeedPlans). Each is named
// "{planID}-{uuid}" and has a realistic manifest with
// properties.blacksmith{service_id, plan_id, instance_id}, the plan's
// release, a stemcell and instance groups with VMs. It returns the names.
func (d *Director) SeedDeployments(n int, plans []SeedPlan) []string {
	if len(plans) == 0 {
		plans = d.opts.SeedPlans
	}
	prepared := prepareSeedPlans(plans)
	if n <= 0 || len(prepared) == 0 {
		return nil
	}
	names := make([]string, n)
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range names {
		p := prepared[i%len(prepared)]
		uuid := newUUID()
		s := &seedInfo{plan: p, name: p.PlanID + "-" + uuid, uuid: uuid}
		d.applyLocked(s.name, "", s, p.content)
		names[i] = s.name
	}
	return names
}
