package broker

import (
	"context"

	"github.com/pivotal-cf/brokerapi/v11/domain"
	"github.com/pivotal-cf/brokerapi/v11/domain/apiresponses"
)

// GetInstance answers GET /v2/service_instances/:id from the record: 404
// when the instance does not exist or its provision is still in progress,
// 422 ConcurrencyError while an update is in progress.
func (b *Broker) GetInstance(ctx context.Context, id string, _ domain.FetchInstanceDetails) (domain.GetInstanceDetailsSpec, error) {
	var none domain.GetInstanceDetailsSpec
	rec, err := b.opts.Store.Record(ctx, id)
	if err != nil {
		return none, b.internal("could not read the instance's record", err, "instance", id)
	}
	if rec == nil {
		return none, errNotFound
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
	}, nil
}
