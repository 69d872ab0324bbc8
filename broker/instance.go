package broker

import (
	"context"

	"github.com/pivotal-cf/brokerapi/v11/domain"
	"github.com/pivotal-cf/brokerapi/v11/domain/apiresponses"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// GetInstance answers GET /v2/service_instances/:id from the record: 404
// when the instance does not exist or its provision is still in progress,
// 422 ConcurrencyError while an update is in progress.
func (b *Broker) GetInstance(ctx context.Context, id string, _ domain.FetchInstanceDetails) (domain.GetInstanceDetailsSpec, error) {
	var none domain.GetInstanceDetailsSpec
	rec, err := b.records.read(ctx, id, errNotFound)
	if err != nil {
		return none, err
	}
	if op := rec.LastOperation; op != nil && op.State == stateInProgress {
		switch op.Type {
		case opTypeProvision:
			return none, errNotFound
		case opTypeUpdate:
			return none, apiresponses.ErrConcurrentInstanceAccess
		}
	}
	return domain.GetInstanceDetailsSpec{
		ServiceID:  rec.ServiceID,
		PlanID:     rec.PlanID,
		Parameters: rec.Parameters,
		Metadata:   versionLabels(rec.MaintenanceVersion),
	}, nil
}

// records reads instances' records for the OSB handlers.
type records struct {
	store  Records
	report reporter
}

// read reads the instance's record: notFound when there is none (with
// notFound nil, a nil record and no error), a 500 (logged) when Vault
// cannot be read.
func (r records) read(ctx context.Context, id string, notFound error) (*vault.Record, error) {
	rec, err := r.store.Record(ctx, id)
	switch {
	case err != nil:
		return nil, r.report.internal("could not read the instance's record", err, "instance", id)
	case rec == nil:
		return nil, notFound
	}
	return rec, nil
}
