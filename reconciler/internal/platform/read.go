package platform

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/cf"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// View is the platform as one whole read saw it.
type View struct {
	// ReadAt is when the read started: an instance the platform created
	// after it may be missing from the view.
	ReadAt time.Time
	// Took is how long the read took, Requests how many it made.
	Took     time.Duration
	Requests int
	// Plans is how many plans the broker has on the platform; PlanIDs
	// their ids in the broker's catalog.
	Plans   int
	PlanIDs map[string]bool
	// Instances are the broker's managed instances, by guid.
	Instances map[string]Instance
}

// Instance is one platform instance, what the reports show of it.
type Instance struct {
	Name, Space, SpaceGUID, Org string
	// PlanID is its plan's id in the broker's catalog.
	PlanID string
	// OpType and OpState are its last operation ("create", "in progress").
	OpType, OpState string
	UpdatedAt       time.Time
}

// Creating says whether its last operation is a create in progress or
// failed: the broker may not have it (yet, or ever), and it is no orphan.
func (in Instance) Creating() bool {
	return in.OpType == "create" && in.OpState != "succeeded"
}

// MaxNameShown bounds each name a report shows of a platform instance (the
// platform's users choose them; the run log keeps the reports).
const MaxNameShown = 128

// Record is the instance as a report shows it, its names cut to MaxNameShown.
func (in Instance) Record() *report.PlatformRecord {
	op := ""
	if in.OpType != "" {
		op = in.OpType + " " + in.OpState
	}
	return &report.PlatformRecord{Name: report.Truncate(in.Name, MaxNameShown), Space: report.Truncate(in.Space, MaxNameShown),
		SpaceGUID: report.Truncate(in.SpaceGUID, MaxNameShown), Organization: report.Truncate(in.Org, MaxNameShown),
		PlanID: report.Truncate(in.PlanID, MaxNameShown), Operation: report.Truncate(op, MaxNameShown), UpdatedAt: in.UpdatedAt}
}

// Read reads the broker's plans and every managed instance of them. A
// broker the platform lists no plan of is an error: a wrong broker name
// must not make every instance an orphan deployment.
func Read(ctx context.Context, r ports.PlatformReader, broker string, now func() time.Time) (*View, error) {
	start := now()
	plans, err := r.ServicePlans(ctx, broker)
	if err != nil {
		return nil, fmt.Errorf("reading the plans of broker %q: %w", broker, err)
	}
	if len(plans) == 0 {
		return nil, fmt.Errorf("the Cloud Controller lists no plan of a broker named %q: is cf.broker_name the name it is registered under (cf service-brokers)?", broker)
	}
	byGUID := make(map[string]string, len(plans))
	guids := make([]string, 0, len(plans))
	for _, p := range plans {
		byGUID[p.GUID] = p.CatalogID
		guids = append(guids, p.GUID)
	}
	list, err := r.ServiceInstances(ctx, guids)
	if err != nil {
		return nil, fmt.Errorf("reading the instances of broker %q's %d plans: %w", broker, len(plans), err)
	}
	v := &View{ReadAt: start, Plans: len(plans), PlanIDs: make(map[string]bool, len(plans)), Instances: make(map[string]Instance, len(list))}
	for _, p := range plans {
		v.PlanIDs[p.CatalogID] = true
	}
	for _, in := range list {
		v.Instances[in.GUID] = Instance{Name: in.Name, Space: in.SpaceName, SpaceGUID: in.SpaceGUID, Org: in.OrgName,
			PlanID: byGUID[in.PlanGUID], OpType: in.LastOperation.Type, OpState: in.LastOperation.State,
			UpdatedAt: in.LastOperation.UpdatedAt}
	}
	v.Took = now().Sub(start)
	return v, nil
}

// Transient says whether a failed read may pass if tried again: the
// platform unavailable (a 5xx, no answer, a page cut short) or rate
// limited. A refusal of the credentials, a broker without plans or an
// answer too large is not.
func Transient(err error) bool {
	if errors.Is(err, cf.ErrAnswerTooLarge) { // it matches ErrUnavailable too, and would be as large again
		return false
	}
	return errors.Is(err, cf.ErrUnavailable) || errors.Is(err, cf.ErrRateLimited)
}
