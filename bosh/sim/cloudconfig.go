package sim

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"
)

// DefaultCloudConfig is the cloud config a new Director holds, shaped like
// bosh-lite's: three azs, the vm_types, vm_extensions, disk_types and
// networks the seeded and sample manifests name. Its subnets are loopback
// ranges, like the addresses the simulator gives VMs.
const DefaultCloudConfig = `azs:
- name: z1
  cloud_properties: {}
- name: z2
  cloud_properties: {}
- name: z3
  cloud_properties: {}
vm_types:
- name: default
  cloud_properties: {cpu: 2, ram: 4096, disk: 20480}
- name: small
  cloud_properties: {cpu: 2, ram: 4096, disk: 20480}
- name: medium
  cloud_properties: {cpu: 4, ram: 8192, disk: 40960}
- name: large
  cloud_properties: {cpu: 8, ram: 16384, disk: 81920}
vm_extensions:
- name: 50GB_ephemeral_disk
  cloud_properties: {disk: 51200}
disk_types:
- name: default
  disk_size: 10240
- name: 5GB
  disk_size: 5120
- name: 10GB
  disk_size: 10240
- name: 50GB
  disk_size: 51200
networks:
- name: default
  type: manual
  subnets:
  - range: 127.64.0.0/16
    gateway: 127.64.0.1
    azs: [z1, z2, z3]
    reserved: [127.64.0.2-127.64.0.10]
    cloud_properties: {}
- name: services
  type: manual
  subnets:
  - range: 127.65.0.0/16
    gateway: 127.65.0.1
    azs: [z1, z2, z3]
    cloud_properties: {}
compilation:
  workers: 2
  az: z1
  network: default
  vm_type: default
  reuse_compilation_vms: true
`

// cloudNames are the names the current cloud configs declare, which a
// deploy's instance groups may use, and the azs each network's subnets
// cover. The Director merges every current cloud config into one before it
// plans a deploy.
type cloudNames struct {
	azs, vmTypes, vmExtensions, diskTypes map[string]bool
	networks                              map[string]map[string]bool // network -> azs of its subnets
}

type namedList []struct {
	Name string `yaml:"name"`
}

// cloudConfigDoc is the part of a cloud config the simulator reads.
type cloudConfigDoc struct {
	AZs          namedList `yaml:"azs"`
	VMTypes      namedList `yaml:"vm_types"`
	VMExtensions namedList `yaml:"vm_extensions"`
	DiskTypes    namedList `yaml:"disk_types"`
	Networks     []struct {
		Name    string `yaml:"name"`
		Subnets []struct {
			AZ  string   `yaml:"az"`
			AZs []string `yaml:"azs"`
		} `yaml:"subnets"`
	} `yaml:"networks"`
}

func newCloudNames() cloudNames {
	return cloudNames{azs: map[string]bool{}, vmTypes: map[string]bool{}, vmExtensions: map[string]bool{},
		diskTypes: map[string]bool{}, networks: map[string]map[string]bool{}}
}

// add merges a cloud config's names into n; a config that does not parse
// adds nothing (the Director stores cloud configs unchecked, and a deploy
// then finds none of their names).
func (n cloudNames) add(text string) {
	var doc cloudConfigDoc
	if yaml.Unmarshal([]byte(text), &doc) != nil {
		return
	}
	for _, l := range []struct {
		from namedList
		to   map[string]bool
	}{{doc.AZs, n.azs}, {doc.VMTypes, n.vmTypes}, {doc.VMExtensions, n.vmExtensions}, {doc.DiskTypes, n.diskTypes}} {
		for _, e := range l.from {
			l.to[e.Name] = true
		}
	}
	for _, nw := range doc.Networks {
		azs := map[string]bool{}
		for _, sn := range nw.Subnets {
			if sn.AZ != "" {
				azs[sn.AZ] = true
			}
			for _, az := range sn.AZs {
				azs[az] = true
			}
		}
		n.networks[nw.Name] = azs
	}
}

// checkCloud checks a manifest against the current cloud configs.
func (cb *configBook) checkCloud(doc *manifestDoc) error {
	cb.db.mu.RLock()
	defer cb.db.mu.RUnlock()
	return cb.cloudNamesLocked().check(doc)
}

// cloudNamesLocked merges the current config of each cloud config name.
func (cb *configBook) cloudNamesLocked() cloudNames {
	n := newCloudNames()
	seen := map[string]bool{}
	for _, c := range slices.Backward(cb.db.configs) {
		if c.typ == "cloud" && !seen[c.name] {
			seen[c.name] = true
			n.add(c.content)
		}
	}
	return n
}

func groupError(code int, format string, args ...any) error {
	return &manifestError{code: code, msg: fmt.Sprintf(format, args...)}
}

// Director error codes of a deploy checked against the cloud config
// (errors.rb of cloudfoundry/bosh).
const (
	codeUnknownDiskType = 140012
	codeUnknownVMType   = 140004
	codeBadVMConfig     = 140022
	codeUnknownNetwork  = 150001
	codeMissingNetwork  = 140009
	codeNetworkAZ       = 150006
	codeUnknownAZ       = 140018
	codeMissingAZs      = 140017
)

// checkCloud refuses a manifest whose instance groups name what the cloud
// config lacks, with the Director's error, in the order its instance group
// parser meets them: persistent disk type, vm_type, vm_extensions,
// networks, azs. Errands are checked too, as the Director does.
func (n cloudNames) check(doc *manifestDoc) error {
	for _, g := range doc.InstanceGroups {
		if err := n.checkGroup(&g); err != nil {
			return err
		}
	}
	return nil
}

func (n cloudNames) checkGroup(g *groupDoc) error {
	if g.PersistentDiskType != "" && !n.diskTypes[g.PersistentDiskType] {
		return groupError(codeUnknownDiskType, "Instance group '%s' references an unknown disk type '%s'", g.Name, g.PersistentDiskType)
	}
	switch {
	case g.VMType == "" && !hasVMResources(g):
		return groupError(codeBadVMConfig, "Instance group '%s' is missing either 'vm_type' or 'vm_resources' section.", g.Name)
	case g.VMType != "" && hasVMResources(g):
		return groupError(codeBadVMConfig, "Instance group '%s' can only specify 'vm_type' or 'vm_resources' keys.", g.Name)
	case g.VMType != "" && !n.vmTypes[g.VMType]:
		return groupError(codeUnknownVMType, "Instance group '%s' references an unknown vm type '%s'", g.Name, g.VMType)
	}
	for _, ext := range g.VMExtensions {
		if !n.vmExtensions[ext] {
			return groupError(codeDirector, "The vm_extension '%s' has not been configured in cloud-config.", ext)
		}
	}
	if len(g.Networks) == 0 {
		return groupError(codeMissingNetwork, "Instance group '%s' must specify at least one network", g.Name)
	}
	for _, nw := range g.Networks {
		if _, ok := n.networks[nw.Name]; !ok {
			return groupError(codeUnknownNetwork, "Instance group '%s' references an unknown network '%s'", g.Name, nw.Name)
		}
	}
	if g.AZs != nil && len(g.AZs) == 0 {
		return groupError(codeMissingAZs, "Instance group '%s' has empty availability zones", g.Name)
	}
	for _, az := range g.AZs {
		for _, nw := range g.Networks {
			if covered := n.networks[nw.Name]; len(covered) > 0 && !covered[az] {
				return groupError(codeNetworkAZ, "Instance group '%s' must specify availability zone that matches availability zones of network '%s'", g.Name, nw.Name)
			}
		}
		if !n.azs[az] {
			return groupError(codeUnknownAZ, "Instance group '%s' references unknown availability zone '%s'", g.Name, az)
		}
	}
	return nil
}

func hasVMResources(g *groupDoc) bool { return !g.VMResources.IsZero() }
