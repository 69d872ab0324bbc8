package reconciler

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Bounds and freshness of the instance list.
const (
	// DefaultListLimit and MaxListLimit bound InstanceQuery.Limit.
	DefaultListLimit, MaxListLimit = 50, 500
	// listFresh is how long one read of the index serves the list's
	// pages: a page is then a scan of memory, not a read of Vault's whole
	// index (100,000 records take seconds to read).
	listFresh = 3 * time.Second
)

// The states an instance of the list is in (InstanceSummary.State).
const (
	StateOK         = "ok"          // none of the others
	StateOrphaned   = "orphaned"    // its deployment is gone from its Director
	StateAdopted    = "adopted"     // made by the reconciler, not yet confirmed
	StateInProgress = "in_progress" // its last operation is in progress
	StateFailed     = "failed"      // its last operation failed
)

// ListStates are the states InstanceQuery.State takes ("" aside).
var ListStates = []string{StateOK, StateOrphaned, StateAdopted, StateInProgress, StateFailed}

// ErrBadQuery is an InstanceQuery out of bounds.
var ErrBadQuery = errors.New("bad instance query")

// InstanceQuery selects a page of the instance list.
type InstanceQuery struct {
	// Search is a case-insensitive substring of the instance id, its
	// deployment's name, its organization's or space's guid, or the
	// organization, space or instance name the platform last sent in its
	// context ("" matches all). The records keep the guids always, the
	// names only when the platform sent them.
	Search string
	// State is one of ListStates ("": any).
	State string
	// Plan is a plan id ("": any).
	Plan string
	// Director is a Director's name ("": any); the first Director's name
	// also matches the records that name none.
	Director string
	// Limit is the page's size: default DefaultListLimit, at most MaxListLimit.
	Limit int
	// After is the last id of the previous page ("": the first page).
	After string
}

// InstanceSummary is one instance of the list.
type InstanceSummary struct {
	InstanceID       string `json:"instance_id"`
	Deployment       string `json:"deployment"`
	ServiceID        string `json:"service_id"`
	PlanID           string `json:"plan_id"`
	Director         string `json:"director"`
	OrganizationGUID string `json:"organization_guid,omitempty"`
	SpaceGUID        string `json:"space_guid,omitempty"`
	// State is one of ListStates.
	State string `json:"state"`
	// LastOperation and LastOperationState are its last operation's type
	// and state ("": none recorded).
	LastOperation      string `json:"last_operation,omitempty"`
	LastOperationState string `json:"last_operation_state,omitempty"`
	OrphanedAt         string `json:"orphaned_at,omitempty"`
	MaintenanceVersion string `json:"maintenance_version,omitempty"`
}

// InstancePage is one page of the instance list, in instance id order.
type InstancePage struct {
	// Total is how many instances match the query (all pages).
	Total int `json:"total"`
	// Instances is the page.
	Instances []InstanceSummary `json:"instances"`
	// Next is the After of the next page; "" on the last.
	Next string `json:"next"`
	// ReadAt is when the index the page was taken from was read.
	ReadAt time.Time `json:"read_at"`
	// Plans and Directors are the plan ids and Directors of every instance
	// of that read, sorted: the values the filters take.
	Plans     []string `json:"plans"`
	Directors []string `json:"directors"`
}

// listCache keeps the last whole read of the index, in id order, for
// listFresh. One read at a time: requests that arrive during a read wait
// for it rather than start their own.
type listCache struct {
	mu   sync.Mutex
	last listRead // entries nil: none yet
}

// listRead is one read of the index, for the list.
type listRead struct {
	at      time.Time
	entries []listEntry // in id order
	plans   []string    // the plan ids of entries, sorted, once each
	dirs    []string    // their Directors, sorted, once each
}

// listEntry is one instance of the last read: what the list shows, and the
// text Search looks in, in lower case.
type listEntry struct {
	InstanceSummary
	text string
}

// List returns a page of the instances the index holds that match q. The
// index is read at most once every few seconds (listFresh), however many
// pages are asked for; a page is then a scan of that read.
func (v *Views) List(ctx context.Context, q InstanceQuery) (InstancePage, error) {
	if err := q.check(); err != nil {
		return InstancePage{}, err
	}
	if q.Limit == 0 {
		q.Limit = DefaultListLimit
	}
	c, err := v.stores.listed.read(ctx, v.stores.index.Index, v.now, v.parts.Directors.First())
	if err != nil {
		return InstancePage{}, err
	}
	entries := c.entries
	search := strings.ToLower(q.Search)
	page := InstancePage{Instances: []InstanceSummary{}, ReadAt: c.at, Plans: c.plans, Directors: c.dirs}
	for i := range entries {
		en := &entries[i]
		if !q.matches(en, search) {
			continue
		}
		page.Total++
		switch {
		case en.InstanceID <= q.After:
		case len(page.Instances) < q.Limit:
			page.Instances = append(page.Instances, en.InstanceSummary)
		case page.Next == "":
			page.Next = page.Instances[len(page.Instances)-1].InstanceID
		}
	}
	return page, nil
}

// check bounds q.
func (q InstanceQuery) check() error {
	if q.Limit < 0 || q.Limit > MaxListLimit {
		return fmt.Errorf("%w: limit %d: want 1 to %d", ErrBadQuery, q.Limit, MaxListLimit)
	}
	if q.State != "" && !slices.Contains(ListStates, q.State) {
		return fmt.Errorf("%w: state %q: want one of %s", ErrBadQuery, q.State, strings.Join(ListStates, ", "))
	}
	return nil
}

// matches says whether en is an instance q asks for; search is q.Search
// in lower case.
func (q InstanceQuery) matches(en *listEntry, search string) bool {
	return (q.State == "" || en.State == q.State) && (q.Plan == "" || en.PlanID == q.Plan) &&
		(q.Director == "" || en.Director == q.Director) && (search == "" || strings.Contains(en.text, search))
}

// summarize is what the list shows of instance id; first is the Director a
// record naming none lives on.
func summarize(id string, rec *vault.Record, first string) InstanceSummary {
	s := InstanceSummary{InstanceID: id, Deployment: rec.Deployment(id), ServiceID: rec.ServiceID, PlanID: rec.PlanID,
		Director: rec.Director, OrganizationGUID: rec.OrganizationGUID, SpaceGUID: rec.SpaceGUID,
		OrphanedAt: rec.OrphanedAt, MaintenanceVersion: rec.MaintenanceVersion, State: StateOK}
	if s.Director == "" {
		s.Director = first
	}
	if op := rec.LastOperation; op != nil {
		s.LastOperation, s.LastOperationState = op.Type, op.State
	}
	switch {
	case rec.Orphaned:
		s.State = StateOrphaned
	case s.LastOperationState == vault.OperationInProgress:
		s.State = StateInProgress
	case s.LastOperationState == vault.OperationFailed:
		s.State = StateFailed
	case rec.Adopted:
		s.State = StateAdopted
	}
	return s
}

// read returns the last read of the index when it is less than listFresh
// old, else a new one; first is the first Director's name.
func (c *listCache) read(ctx context.Context, index func(context.Context) (*vault.Index, error), now func() time.Time, first string) (
	listRead, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last.entries != nil && now().Sub(c.last.at) < listFresh {
		return c.last, nil
	}
	at := now()
	idx, err := index(ctx)
	if err != nil {
		return listRead{}, fmt.Errorf("reading the index: %w", err)
	}
	entries := make([]listEntry, 0, len(idx.Records))
	plans, dirs := map[string]bool{}, map[string]bool{}
	for id, rec := range idx.Records {
		if rec == nil {
			continue
		}
		s := summarize(id, rec, first)
		text := strings.ToLower(strings.Join([]string{id, s.Deployment, s.OrganizationGUID, s.SpaceGUID,
			rec.Context["organization_name"], rec.Context["space_name"], rec.Context["instance_name"]}, "\x00"))
		entries = append(entries, listEntry{InstanceSummary: s, text: text})
		plans[s.PlanID], dirs[s.Director] = true, true
	}
	slices.SortFunc(entries, func(a, b listEntry) int { return strings.Compare(a.InstanceID, b.InstanceID) })
	c.last = listRead{at: at, entries: entries, plans: slices.Sorted(maps.Keys(plans)), dirs: slices.Sorted(maps.Keys(dirs))}
	return c.last, nil
}
