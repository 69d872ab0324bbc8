package vault

import (
	"encoding/json"
)

// Metadata is what the reconciler keeps per instance at {mount}/{id}/metadata.
// Fields this package does not know are kept in Extra and written back.
type Metadata struct {
	Releases   []Resource     `json:"releases,omitempty"`
	Stemcells  []Resource     `json:"stemcells,omitempty"`
	VMs        []VMSummary    `json:"vms,omitempty"`
	Properties map[string]any `json:"properties,omitempty"`
	// History is the reconciliation history, oldest first, capped at
	// Options.HistoryCap entries on write.
	History []HistoryEntry `json:"history,omitempty"`
	// Extra holds every field not above, preserved byte for byte.
	Extra map[string]json.RawMessage `json:"-"`
	// version is the document's version when Metadata read it (KV v2); 0
	// for metadata that was not read. PutMetadata checks it.
	version int
	// raw is the document as Metadata read it (nil when not read): what
	// BackupFrom keeps of it.
	raw json.RawMessage
}

// rawOrNil is the document as read, nil for nil metadata.
func (m *Metadata) rawOrNil() json.RawMessage {
	if m == nil {
		return nil
	}
	return m.raw
}

// Resource is a release or stemcell name and version.
type Resource struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Extra holds fields not above, preserved byte for byte.
	Extra map[string]json.RawMessage `json:"-"`
}

// VMSummary is one VM of a deployment.
type VMSummary struct {
	ID    string   `json:"id"`
	Job   string   `json:"job"`
	Index int      `json:"index"`
	AZ    string   `json:"az,omitempty"`
	IPs   []string `json:"ips,omitempty"`
	// Extra holds fields not above, preserved byte for byte.
	Extra map[string]json.RawMessage `json:"-"`
}

// HistoryEntry is one event in an instance's reconciliation history.
type HistoryEntry struct {
	Time string `json:"time"` // RFC 3339
	// Action is "created", "updated", "drift", "orphaned", "unorphaned",
	// "restored", ...
	Action         string `json:"action"`
	Detail         string `json:"detail,omitempty"`
	ManifestSHA256 string `json:"manifest_sha256,omitempty"`
	// Extra holds fields not above, preserved byte for byte.
	Extra map[string]json.RawMessage `json:"-"`
}

// AddHistory appends e and keeps the newest limit entries (all when limit <= 0).
func (m *Metadata) AddHistory(e HistoryEntry, limit int) {
	m.History = append(m.History, e)
	m.History = capHistory(m.History, limit)
}

func capHistory(h []HistoryEntry, limit int) []HistoryEntry {
	if limit > 0 && len(h) > limit {
		return append([]HistoryEntry(nil), h[len(h)-limit:]...)
	}
	return h
}

func (m *Metadata) fields() []field {
	return []field{
		{"releases", &m.Releases, false},
		{"stemcells", &m.Stemcells, false},
		{"vms", &m.VMs, false},
		{"properties", &m.Properties, false},
		{"history", &m.History, false},
	}
}

// UnmarshalJSON decodes metadata, keeping unknown fields in Extra.
func (m *Metadata) UnmarshalJSON(data []byte) error {
	*m = Metadata{}
	return decodeInto(data, m.fields(), &m.Extra)
}

// MarshalJSON encodes the known fields and Extra with sorted keys.
func (m Metadata) MarshalJSON() ([]byte, error) {
	return encodeObject(m.fields(), m.Extra)
}

func (r *Resource) fields() []field {
	return []field{{"name", &r.Name, true}, {"version", &r.Version, true}}
}

// UnmarshalJSON decodes a resource, keeping unknown fields in Extra.
func (r *Resource) UnmarshalJSON(data []byte) error {
	*r = Resource{}
	return decodeInto(data, r.fields(), &r.Extra)
}

// MarshalJSON encodes the known fields and Extra.
func (r Resource) MarshalJSON() ([]byte, error) {
	return encodeObject(r.fields(), r.Extra)
}

func (v *VMSummary) fields() []field {
	return []field{
		{"id", &v.ID, true},
		{"job", &v.Job, true},
		{"index", &v.Index, true},
		{"az", &v.AZ, false},
		{"ips", &v.IPs, false},
	}
}

// UnmarshalJSON decodes a VM summary, keeping unknown fields in Extra.
func (v *VMSummary) UnmarshalJSON(data []byte) error {
	*v = VMSummary{}
	return decodeInto(data, v.fields(), &v.Extra)
}

// MarshalJSON encodes the known fields and Extra.
func (v VMSummary) MarshalJSON() ([]byte, error) {
	return encodeObject(v.fields(), v.Extra)
}

func (h *HistoryEntry) fields() []field {
	return []field{
		{"time", &h.Time, true},
		{"action", &h.Action, true},
		{"detail", &h.Detail, false},
		{"manifest_sha256", &h.ManifestSHA256, false},
	}
}

// UnmarshalJSON decodes a history entry, keeping unknown fields in Extra.
func (h *HistoryEntry) UnmarshalJSON(data []byte) error {
	*h = HistoryEntry{}
	return decodeInto(data, h.fields(), &h.Extra)
}

// MarshalJSON encodes the known fields and Extra.
func (h HistoryEntry) MarshalJSON() ([]byte, error) {
	return encodeObject(h.fields(), h.Extra)
}
