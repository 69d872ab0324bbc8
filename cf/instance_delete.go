package cf

import (
	"context"
	"net/http"
)

// DeleteServiceInstance deprovisions the instance through the Cloud
// Controller (DELETE /v3/service_instances/:guid), which unbinds it and
// asks the broker, and waits for its job: nil once the platform holds it
// no more; a *JobError when the broker's deprovision failed; ErrNotFound
// when the platform has no such instance.
func (a *Admin) DeleteServiceInstance(ctx context.Context, guid string) error {
	u, err := a.c.guidURL("/v3/service_instances/", guid)
	if err != nil {
		return err
	}
	res, err := a.c.do(ctx, http.MethodDelete, epInstance, u, nil)
	if err != nil {
		return err
	}
	return a.accepted(ctx, http.MethodDelete, epInstance, res)
}
