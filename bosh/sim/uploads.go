package sim

import (
	"fmt"
	"slices"
	"strings"
)

// Director error codes of releases and stemcells a deploy needs (errors.rb
// of cloudfoundry/bosh).
const (
	codeReleaseNotFound        = 30005
	codeReleaseVersionNotFound = 30006
	codeStemcellNotFound       = 50003
)

// uploads are the releases and stemcells uploaded to a Director that
// checks them (Options.Releases or Options.Stemcells given): a deploy
// naming another fails as the Director's fails it. Nil: every release and
// stemcell a manifest names counts as uploaded.
type uploads struct {
	releases  map[string][]string // name -> versions
	stemcells map[string][]string // operating system or name -> versions
}

// parseUploads reads "name/version" lists; an entry without both halves is
// an error naming it.
func parseUploads(releases, stemcells []string) (*uploads, error) {
	if releases == nil && stemcells == nil {
		return nil, nil
	}
	u := &uploads{releases: map[string][]string{}, stemcells: map[string][]string{}}
	for _, l := range []struct {
		what    string
		entries []string
		to      map[string][]string
	}{{"release", releases, u.releases}, {"stemcell", stemcells, u.stemcells}} {
		for _, e := range l.entries {
			name, version, ok := strings.Cut(e, "/")
			if !ok || name == "" || version == "" || !seedName.MatchString(name) || !seedName.MatchString(version) {
				return nil, fmt.Errorf("%w: %s %q is not NAME/VERSION (letters, digits, . _ + -)", ErrBadOptions, l.what, e)
			}
			if !slices.Contains(l.to[name], version) {
				l.to[name] = append(l.to[name], version)
			}
		}
	}
	return u, nil
}

// addRelease and addStemcell record an upload (the seeds' releases and
// stemcells count as uploaded by the operator who deployed them).
func (u *uploads) addRelease(name, version string) {
	if u != nil && !slices.Contains(u.releases[name], version) {
		u.releases[name] = append(u.releases[name], version)
	}
}

func (u *uploads) addStemcell(osOrName, version string) {
	if u != nil && !slices.Contains(u.stemcells[osOrName], version) {
		u.stemcells[osOrName] = append(u.stemcells[osOrName], version)
	}
}

// latest is the highest version uploaded, "" when none.
func latest(versions []string) string {
	if len(versions) == 0 {
		return ""
	}
	return slices.MaxFunc(versions, compareVersions)
}

// resolve checks a manifest's releases and stemcells against the uploads,
// as the Director does while it plans the deploy, and resolves "latest" in
// its content to the newest uploaded version. Missing a release or a
// release version, or the newest of a stemcell that none has, refuses it
// before any stage; a stemcell version not uploaded fails it later, in
// "Preparing deployment" (stageErr).
func (u *uploads) resolve(doc *manifestDoc, c *content) (refusal, stageErr error) {
	if u == nil {
		return nil, nil
	}
	for i, r := range doc.Releases { // Manifest#resolve_aliases: latest first
		if r.Version == "latest" {
			v := latest(u.releases[r.Name])
			if v == "" {
				return &manifestError{code: codeReleaseNotFound, msg: fmt.Sprintf("Release '%s' doesn't exist", r.Name)}, nil
			}
			c.releases[i].Version = v
		}
	}
	for i, s := range doc.Stemcells {
		key := or(s.OS, s.Name)
		if s.Version != "latest" {
			continue
		}
		v := latest(u.stemcells[key])
		if v == "" {
			if s.OS != "" {
				return &manifestError{code: codeStemcellNotFound, msg: fmt.Sprintf("Stemcell with Operating System '%s' doesn't exist", s.OS)}, nil
			}
			return &manifestError{code: codeStemcellNotFound, msg: fmt.Sprintf("Stemcell '%s' doesn't exist", s.Name)}, nil
		}
		c.stemcells[i].Version = v
	}
	for _, g := range doc.InstanceGroups { // the instance groups' jobs, in order
		for _, j := range g.Jobs {
			versions, ok := u.releases[j.Release]
			if !ok {
				return &manifestError{code: codeReleaseNotFound, msg: fmt.Sprintf("Release '%s' doesn't exist", j.Release)}, nil
			}
			for _, r := range c.releases {
				if r.Name == j.Release && !slices.Contains(versions, r.Version) {
					return &manifestError{code: codeReleaseVersionNotFound,
						msg: fmt.Sprintf("Release version '%s/%s' doesn't exist", r.Name, r.Version)}, nil
				}
			}
		}
	}
	for _, s := range doc.Stemcells { // bound in Preparing deployment
		if s.Version == "latest" || slices.Contains(u.stemcells[or(s.OS, s.Name)], s.Version) {
			continue
		}
		if s.OS != "" {
			return nil, &manifestError{code: codeStemcellNotFound,
				msg: fmt.Sprintf("Stemcell version '%s' for OS '%s' doesn't exist", s.Version, s.OS)}
		}
		return nil, &manifestError{code: codeStemcellNotFound, msg: fmt.Sprintf("Stemcell '%s/%s' doesn't exist", s.Name, s.Version)}
	}
	return nil, nil
}

// preload records the releases and stemcells of Options.Releases and
// Options.Stemcells, which are valid, as uploaded; with neither given,
// every release and stemcell counts as uploaded.
func (art *artifacts) preload(releases, stemcells []string) {
	art.db.mu.Lock()
	defer art.db.mu.Unlock()
	art.db.uploads, _ = parseUploads(releases, stemcells)
	if art.db.uploads == nil {
		return
	}
	up := *art.db.uploads
	for name, versions := range up.releases {
		for _, v := range versions {
			art.uploadReleaseLocked(name, v)
		}
	}
	for os, versions := range up.stemcells {
		for _, v := range versions {
			art.uploadStemcellLocked(os, v)
		}
	}
}

// uploadRelease records a release version as uploaded (Director.UploadRelease).
func (art *artifacts) uploadRelease(name, version string) {
	art.db.mu.Lock()
	defer art.db.mu.Unlock()
	art.uploadReleaseLocked(name, version)
}

// uploadStemcell records a stemcell version of an operating system as
// uploaded (Director.UploadStemcell).
func (art *artifacts) uploadStemcell(os, version string) {
	art.db.mu.Lock()
	defer art.db.mu.Unlock()
	art.uploadStemcellLocked(os, version)
}

// uploadReleaseLocked records a release version as uploaded.
func (art *artifacts) uploadReleaseLocked(name, version string) {
	art.db.uploads.addRelease(name, version)
	if art.db.releases[name] == nil {
		art.db.releases[name] = map[string]*releaseVersion{}
	}
	if art.db.releases[name][version] == nil {
		art.db.releases[name][version] = &releaseVersion{commit: stableUUID(name, version)[:8], jobs: map[string]bool{}}
	}
	art.db.invalidateLocked()
}

// uploadStemcellLocked records a stemcell version as uploaded.
func (art *artifacts) uploadStemcellLocked(os, version string) {
	art.db.uploads.addStemcell(os, version)
	nv := nameVersion{stemcellName(os, ""), version}
	if art.db.stemcells[nv] == nil {
		art.db.stemcells[nv] = &stemcell{id: len(art.db.stemcells) + 1, os: os, cid: "sc-" + stableUUID(nv.Name, nv.Version)}
	}
	art.db.invalidateLocked()
}
