package bosh

import (
	"context"
	"fmt"
)

// Release is one entry of GET /releases: a release uploaded to the
// Director, with each of its versions.
type Release struct {
	// Name is the release's name.
	Name string `json:"name"`
	// Versions are its uploaded versions, oldest first as the Director
	// sorts them.
	Versions []ReleaseVersion `json:"release_versions"`
}

// ReleaseVersion is one uploaded version of a release.
type ReleaseVersion struct {
	// Version is the version, e.g. "16.1.0" or "1.0.0-dev.3".
	Version string `json:"version"`
	// CommitHash and UncommittedChanges say what the release was built from.
	CommitHash         string `json:"commit_hash"`
	UncommittedChanges bool   `json:"uncommitted_changes"`
	// CurrentlyDeployed says some deployment runs it (not which).
	CurrentlyDeployed bool `json:"currently_deployed"`
	// JobNames are the jobs it holds.
	JobNames []string `json:"job_names"`
}

// Releases lists the releases uploaded to the Director (GET /releases: one
// request, no task).
func (c *Client) Releases(ctx context.Context) ([]Release, error) {
	var out []Release
	if err := c.conn.getJSON(ctx, request{path: "/releases", endpoint: epReleases}, &out); err != nil {
		return nil, fmt.Errorf("listing releases: %w", err)
	}
	return out, nil
}
