package bosh

import (
	"context"
	"fmt"
)

// Stemcell is one entry of GET /stemcells: an uploaded stemcell version and
// the deployments that use it.
type Stemcell struct {
	// Name is the stemcell's name, e.g. "bosh-vsphere-esxi-ubuntu-jammy-go_agent".
	Name string `json:"name"`
	// OperatingSystem is what a manifest's stemcells[].os names, e.g. "ubuntu-jammy".
	OperatingSystem string `json:"operating_system"`
	// Version is the version, e.g. "1.506".
	Version string `json:"version"`
	// CID is its id in the IaaS; CPI the CPI it was uploaded with ("" for the default).
	CID string `json:"cid"`
	CPI string `json:"cpi"`
	// Deployments are the deployments that use this version.
	Deployments []StemcellUser `json:"deployments"`
	// APIVersion is the stemcell's API version (0 when the Director has none).
	APIVersion int `json:"api_version"`
	// ID is the Director's id of it.
	ID int `json:"id"`
}

// StemcellUser is a deployment that uses a stemcell version.
type StemcellUser struct {
	// Name is the deployment's name.
	Name string `json:"name"`
}

// Stemcells lists the stemcells uploaded to the Director, with the
// deployments that use each (GET /stemcells: one request, no task).
func (c *Client) Stemcells(ctx context.Context) ([]Stemcell, error) {
	var out []Stemcell
	if err := c.conn.getJSON(ctx, request{path: "/stemcells", endpoint: epStemcells}, &out); err != nil {
		return nil, fmt.Errorf("listing stemcells: %w", err)
	}
	return out, nil
}
