package fleet

import (
	"encoding/json"
	"fmt"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
)

// packedVM is what records take of a VM (records.New's digest, the
// metadata's VM summaries): the cached copy keeps only that, encoded, and
// not the VM list decoded from the Director's answer, its agent and IaaS
// ids and its times, which was a third of the reconciler's memory between
// runs (~700 bytes a deployment against ~100 packed), compressed against
// the first packed list of the same releases (zip.go). A steady run does not
// decode it: the fingerprint kept with the copy (memo.go) spares it.
type packedVM struct {
	ID    string   `json:"i"`
	Job   string   `json:"j"`
	Index int      `json:"n"`
	AZ    string   `json:"z,omitempty"`
	IPs   []string `json:"p"` // null and [] kept apart, as the answer had them
}

// packVMs encodes what records take of vms.
func packVMs(vms []bosh.VM) []byte {
	out := make([]packedVM, len(vms))
	for i, v := range vms {
		out[i] = packedVM{ID: v.ID, Job: v.Job, Index: v.Index, AZ: v.AZ, IPs: v.IPs}
	}
	b, err := json.Marshal(out)
	if err != nil { // strings, ints and lists of strings: never expected
		panic(fmt.Sprintf("fleet: VMs do not encode: %v", err))
	}
	return b
}

// VMs is the deployment's VMs: the Director's answer in the copy a fetch
// returns; in the cached copy, only their id, job, index, AZ and IPs (what
// records take), decoded at each call. nil when they were not fetched.
func (s *Fetched) VMs() []bosh.VM {
	if s.packed.data == nil {
		return s.vms
	}
	text, err := inflate(s.packed)
	var packed []packedVM
	if err == nil {
		err = json.Unmarshal([]byte(text), &packed)
	}
	if err != nil { // what packVMs wrote and deflate compressed in this process: never expected
		panic(fmt.Sprintf("fleet: cached VMs do not decode: %v", err))
	}
	vms := make([]bosh.VM, len(packed))
	for i, v := range packed {
		vms[i] = bosh.VM{ID: v.ID, Job: v.Job, Index: v.Index, AZ: v.AZ, IPs: v.IPs}
	}
	return vms
}
